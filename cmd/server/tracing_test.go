package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"messages/models/dbtest"
	"messages/models/store"
)

// gormScope is the instrumentation scope of the store's SQL spans.
const gormScope = store.TraceScope

// spanTree indexes finished spans to ask who descends from whom.
type spanTree struct {
	spans []tracetest.SpanStub
	byID  map[trace.SpanID]tracetest.SpanStub
}

func newSpanTree(spans []tracetest.SpanStub) spanTree {
	t := spanTree{spans: spans, byID: map[trace.SpanID]tracetest.SpanStub{}}
	for _, s := range spans {
		t.byID[s.SpanContext.SpanID()] = s
	}
	return t
}

// named returns the spans called name.
func (t spanTree) named(name string) []tracetest.SpanStub {
	var out []tracetest.SpanStub
	for _, s := range t.spans {
		if s.Name == name {
			out = append(out, s)
		}
	}
	return out
}

// sqlUnder returns the GORM spans descending from ancestor.
func (t spanTree) sqlUnder(ancestor tracetest.SpanStub) []tracetest.SpanStub {
	var out []tracetest.SpanStub
	for _, s := range t.spans {
		if s.InstrumentationScope.Name == gormScope && t.descends(s, ancestor) {
			out = append(out, s)
		}
	}
	return out
}

func (t spanTree) descends(s, ancestor tracetest.SpanStub) bool {
	for p, ok := s, true; ok; p, ok = t.byID[p.Parent.SpanID()] {
		if p.Parent.SpanID() == ancestor.SpanContext.SpanID() {
			return true
		}
	}
	return false
}

func (t spanTree) String() string {
	var b strings.Builder
	for _, s := range t.spans {
		parent := "root"
		if p, ok := t.byID[s.Parent.SpanID()]; ok {
			parent = p.Name
		}
		b.WriteString(s.Name + " <- " + parent + " (" + s.InstrumentationScope.Name + ")\n")
	}
	return b.String()
}

func attr(s tracetest.SpanStub, key string) string {
	for _, kv := range s.Attributes {
		if string(kv.Key) == key {
			return kv.Value.Emit()
		}
	}
	return ""
}

// One GET /v1/messages is one server span named by its route, carrying the request id of
// the access log, with the store's SQL beneath it; one GraphQL query adds an operation
// span and a Query.messages resolver span, with the SQL beneath the resolver, and no span
// per message. No span holds the values bound to the SQL.
func TestTracingSpansOneRequest(t *testing.T) {
	for _, dialect := range dbtest.Dialects {
		t.Run(dialect, func(t *testing.T) {
			exp := tracetest.NewInMemoryExporter()
			s := newObservedServer(t, dialect, 100, exp)
			exp.Reset() // fixtures are not requests

			rec := s.do(t, http.MethodGet, "/v1/messages?limit=2", "", s.asTenant("X-Request-Id", "trace-test-1"))
			if rec.Code != http.StatusOK || rec.Header().Get("X-Request-Id") != "trace-test-1" {
				t.Fatalf("GET /v1/messages: %d, request id %q", rec.Code, rec.Header().Get("X-Request-Id"))
			}
			tree := newSpanTree(exp.GetSpans())
			servers := tree.named("GET /v1/messages")
			if len(servers) != 1 || servers[0].SpanKind != trace.SpanKindServer {
				t.Fatalf("want one server span GET /v1/messages, got:\n%s", tree)
			}
			server := servers[0]
			if got := attr(server, "request.id"); got != "trace-test-1" {
				t.Errorf("request.id = %q, want the response's X-Request-Id", got)
			}
			if got := attr(server, "http.route"); got != "/v1/messages" {
				t.Errorf("http.route = %q", got)
			}
			if len(tree.sqlUnder(server)) < 2 {
				t.Errorf("want the key lookup and the list queries under the server span:\n%s", tree)
			}
			var listed bool
			for _, sp := range tree.sqlUnder(server) {
				listed = listed || sp.Name == "select messages"
				if sp.SpanKind != trace.SpanKindClient || attr(sp, "db.query.text") == "" || attr(sp, "db.system.name") == "" {
					t.Errorf("SQL span %s: kind %s, attributes %v; want a client span with the statement and the database", sp.Name, sp.SpanKind, sp.Attributes)
				}
			}
			if !listed {
				t.Errorf("no span named \"select messages\" under the server span:\n%s", tree)
			}
			for _, sp := range exp.GetSpans() {
				for _, kv := range sp.Attributes {
					if strings.Contains(kv.Value.Emit(), s.tenant.Env.ID) {
						t.Errorf("span %s attribute %s holds the environment id: bound values leak into traces", sp.Name, kv.Key)
					}
				}
			}

			exp.Reset()
			rec = s.do(t, http.MethodPost, "/graphql", graphQL(`query ListMessages { messages(limit: 2) { totalCount data { id _id } } }`), s.asTenant("Content-Type", "application/json"))
			if rec.Code != http.StatusOK || strings.Contains(rec.Body.String(), `"errors"`) {
				t.Fatalf("POST /graphql: %d %s", rec.Code, rec.Body)
			}
			tree = newSpanTree(exp.GetSpans())
			servers, ops, resolvers := tree.named("POST /graphql"), tree.named("query ListMessages"), tree.named("Query.messages")
			if len(servers) != 1 || len(ops) != 1 || len(resolvers) != 1 || len(tree.named("Message.id")) != 0 {
				t.Fatalf("want one server, operation and resolver span each, and none per message, got:\n%s", tree)
			}
			if ops[0].Parent.SpanID() != servers[0].SpanContext.SpanID() || resolvers[0].Parent.SpanID() != ops[0].SpanContext.SpanID() {
				t.Errorf("want server <- operation <- resolver, got:\n%s", tree)
			}
			if got := attr(ops[0], "graphql.operation.name"); got != "ListMessages" {
				t.Errorf("graphql.operation.name = %q", got)
			}
			if len(tree.sqlUnder(resolvers[0])) == 0 {
				t.Errorf("no SQL span under Query.messages:\n%s", tree)
			}
		})
	}
}

// Without an OTLP endpoint nothing is set up; a malformed one or an unsupported protocol
// is refused by name.
func TestNewTracingConfig(t *testing.T) {
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, tc := range []struct {
		name    string
		env     map[string]string
		wantErr string
	}{
		{"offWithoutEndpoint", nil, ""},
		{"offWhenSDKDisabled", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_SDK_DISABLED": "true"}, ""},
		{"refusedWithoutScheme", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "collector:4318"}, "OTEL_EXPORTER_OTLP_ENDPOINT=collector:4318"},
		{"refusedGRPC", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, "OTEL_EXPORTER_OTLP_PROTOCOL=grpc"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, k := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_SDK_DISABLED", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
				t.Setenv(k, tc.env[k])
			}
			tp, err := newTracing(context.Background(), logger)
			switch {
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("err = %v, want one naming %q", err, tc.wantErr)
			case tc.wantErr == "" && err != nil:
				t.Fatal(err)
			case tp != nil:
				shutdownTracing(tp, logger)
				t.Fatal("a tracer provider was set up")
			}
		})
	}
}

// With OTEL_EXPORTER_OTLP_ENDPOINT set, spans reach the collector over OTLP/HTTP by
// shutdown at the latest, from service "messages".
func TestTracingExportsOnShutdown(t *testing.T) {
	var mu sync.Mutex
	var got []*coltracepb.ExportTraceServiceRequest
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		req := &coltracepb.ExportTraceServiceRequest{}
		if r.URL.Path != "/v1/traces" || proto.Unmarshal(body, req) != nil {
			http.Error(w, "unexpected export", http.StatusBadRequest)
			return
		}
		mu.Lock()
		got = append(got, req)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(nil)
	}))
	defer collector.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.URL)
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	t.Setenv("OTEL_SERVICE_NAME", "")
	var log bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&log, nil))

	tp, err := newTracing(context.Background(), logger)
	if err != nil || tp == nil {
		t.Fatalf("newTracing: %v, %v", tp, err)
	}
	_, span := tp.Tracer("test").Start(context.Background(), "exported")
	span.End()
	shutdownTracing(tp, logger)

	mu.Lock()
	defer mu.Unlock()
	if len(got) == 0 {
		t.Fatalf("the collector received nothing; log:\n%s", log.String())
	}
	rs := got[0].GetResourceSpans()[0]
	var service string
	for _, kv := range rs.GetResource().GetAttributes() {
		if kv.GetKey() == "service.name" {
			service = kv.GetValue().GetStringValue()
		}
	}
	if service != "messages" || rs.GetScopeSpans()[0].GetSpans()[0].GetName() != "exported" {
		t.Fatalf("exported service %q, spans %v", service, rs.GetScopeSpans())
	}
}
