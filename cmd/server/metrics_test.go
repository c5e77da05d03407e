package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"messages/cmd/server/edge"
	"messages/graph/extension"
	"messages/models"
	"messages/models/dbtest"
	"messages/models/service"
	"messages/models/store"
)

// observedServer is the handler serve installs, over a fresh database holding one
// tenant's messages, with a rate limit of burst requests on a stopped clock.
type observedServer struct {
	handler http.Handler
	obs     *observability
	tenant  *dbtest.Tenant
	sub     *models.Subscriber
	msgs    []*models.Message
}

// newObservedServer builds it; with exp, tracing is on and every span ends up in exp.
func newObservedServer(t *testing.T, dialect string, burst int, exp sdktrace.SpanExporter) *observedServer {
	t.Helper()
	st := dbtest.Open(t, dialect)
	tn := dbtest.NewTenant(t, st, "observed")
	s := &observedServer{tenant: tn, sub: tn.Subscriber(t, "sub-observed")}
	tpl := tn.Template(t, "welcome")
	for range 3 {
		s.msgs = append(s.msgs, tn.Message(t, s.sub, tpl, nil))
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	stopped := time.Now()
	limiter, err := edge.NewRateLimiter(edge.RateLimitOptions{Rate: 1, Burst: burst, Now: func() time.Time { return stopped }}, logger)
	if err != nil {
		t.Fatal(err)
	}
	var tp *sdktrace.TracerProvider
	if exp != nil {
		if tp, err = newTracerProvider(context.Background(), sdktrace.NewSimpleSpanProcessor(exp)); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { shutdownTracing(tp, logger) })
	}
	svc := service.New(service.Options{Store: st})
	idempotency := edge.NewIdempotency(st, logger, time.Now, edge.IdempotencyOptions{})
	if s.obs, err = newObservability(st, limiter, idempotency, nil, tp, nil, nil); err != nil {
		t.Fatal(err)
	}
	s.handler = routes(svc, st, logger, time.Now, config{appEnv: "production"}, "", guards{limiter: limiter, idempotency: idempotency, timeout: edge.DefaultRequestTimeout, obs: s.obs})
	return s
}

// do sends one request, as the tenant when key is set.
func (s *observedServer) do(t *testing.T, method, target, body string, header http.Header) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	for k, v := range header {
		req.Header[k] = v
	}
	rec := httptest.NewRecorder()
	s.handler.ServeHTTP(rec, req)
	return rec
}

// asTenant is the header of an authenticated request, with more fields from kv pairs.
func (s *observedServer) asTenant(kv ...string) http.Header {
	h := http.Header{"Authorization": {"ApiKey " + s.tenant.Key}}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Set(kv[i], kv[i+1])
	}
	return h
}

// graphQL is the body of a POST /graphql.
func graphQL(query string) string {
	b, _ := json.Marshal(map[string]string{"query": query})
	return string(b)
}

// scrape reads GET /metrics as a person's Prometheus would.
func (s *observedServer) scrape(t *testing.T) map[string]*dto.MetricFamily {
	t.Helper()
	rec := s.do(t, http.MethodGet, "/metrics", "", nil)
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /metrics: %d %s", rec.Code, rec.Body)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(rec.Body)
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return families
}

// series maps each series of a family, named by its labels ("method=GET,route=/x"), to
// its value: a counter's or gauge's value, a histogram's count.
func series(families map[string]*dto.MetricFamily, name string) map[string]float64 {
	out := map[string]float64{}
	f := families[name]
	if f == nil {
		return out
	}
	for _, m := range f.GetMetric() {
		var labels []string
		for _, l := range m.GetLabel() {
			labels = append(labels, l.GetName()+"="+l.GetValue())
		}
		var v float64
		switch {
		case m.Counter != nil:
			v = m.Counter.GetValue()
		case m.Gauge != nil:
			v = m.Gauge.GetValue()
		case m.Histogram != nil:
			v = float64(m.Histogram.GetSampleCount())
		}
		out[strings.Join(labels, ",")] = v
	}
	return out
}

// A few requests of each kind show up at /metrics with bounded labels and the right
// counts: routes by pattern, GraphQL operations by name and outcome, rate-limit
// refusals, idempotent replays, the pool and the runtime.
func TestMetricsCountRequests(t *testing.T) {
	const burst = 7
	s := newObservedServer(t, store.DialectSQLite, burst, nil)
	mark := fmt.Sprintf("/v1/subscribers/%s/messages/%s/actions/primary", s.sub.SubscriberID, s.msgs[0].ID)

	var statuses []int
	for range 3 {
		statuses = append(statuses, s.do(t, http.MethodGet, "/v1/messages?limit=2", "", s.asTenant()).Code)
	}
	statuses = append(statuses,
		s.do(t, http.MethodPost, "/graphql", graphQL(`query ListMessages { messages(limit: 2) { totalCount } }`), s.asTenant("Content-Type", "application/json")).Code,
		// In application/graphql-response+json a document that does not validate is 400
		// (in application/json it would be 200, as GraphQL over HTTP says).
		s.do(t, http.MethodPost, "/graphql", graphQL(`query Broken { noSuchField }`),
			s.asTenant("Content-Type", "application/json", "Accept", "application/graphql-response+json")).Code,
	)
	for range 2 {
		statuses = append(statuses, s.do(t, http.MethodPost, mark, `{"status":"done"}`, s.asTenant("Content-Type", "application/json", "Idempotency-Key", "k1")).Code)
	}
	// The bucket is empty now and its clock stopped: refused.
	statuses = append(statuses, s.do(t, http.MethodGet, "/v1/messages", "", s.asTenant()).Code)
	statuses = append(statuses, s.do(t, http.MethodGet, "/healthz", "", nil).Code)
	want := []int{200, 200, 200, 200, 400, 201, 201, 429, 200}
	if diff := cmp.Diff(want, statuses); diff != "" {
		t.Fatalf("statuses (-want +got):\n%s", diff)
	}

	families := s.scrape(t)
	for _, tc := range []struct {
		name string
		want map[string]float64
	}{
		{"http_requests_total", map[string]float64{
			"method=GET,route=/v1/messages,status_class=2xx":                                                        3,
			"method=GET,route=/v1/messages,status_class=4xx":                                                        1,
			"method=POST,route=/graphql,status_class=2xx":                                                           1,
			"method=POST,route=/graphql,status_class=4xx":                                                           1,
			"method=POST,route=/v1/subscribers/{subscriberId}/messages/{messageId}/actions/{type},status_class=2xx": 2,
			"method=GET,route=/healthz,status_class=2xx":                                                            1,
		}},
		{"http_request_duration_seconds", map[string]float64{
			"method=GET,route=/v1/messages": 4,
			"method=POST,route=/graphql":    2,
			"method=POST,route=/v1/subscribers/{subscriberId}/messages/{messageId}/actions/{type}": 2,
			"method=GET,route=/healthz": 1,
		}},
		{"graphql_operations_total", map[string]float64{
			"operation=ListMessages,outcome=ok,type=query":     1,
			"operation=anonymous,outcome=refused,type=unknown": 1,
		}},
		{"graphql_operation_duration_seconds", map[string]float64{
			"operation=ListMessages,type=query": 1,
		}},
		{"ratelimit_refused_total", map[string]float64{"": 1}},
		{"ratelimit_failed_open_total", map[string]float64{"": 0}},
		{"ratelimit_environments", map[string]float64{"": 1}},
		{"idempotency_replays_total", map[string]float64{"": 1}},
	} {
		if diff := cmp.Diff(tc.want, series(families, tc.name)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
	for _, name := range []string{"go_sql_max_open_connections", "go_sql_open_connections", "go_sql_in_use_connections", "go_sql_wait_count_total"} {
		if got := series(families, name); len(got) != 1 || got["db_name=messages"] < 0 {
			t.Errorf("%s = %v, want one series labelled db_name=messages", name, got)
		}
	}
	if got := series(families, "go_sql_max_open_connections")["db_name=messages"]; got != 1 {
		t.Errorf("go_sql_max_open_connections = %v, want SQLite's single connection", got)
	}
	for _, name := range []string{"go_goroutines", "process_resident_memory_bytes", "db_transaction_retries_total", "db_transaction_retries_exhausted_total"} {
		if families[name] == nil {
			t.Errorf("%s missing: the Go and process collectors are not registered", name)
		}
	}
}

// A thousand distinct unknown paths, inside /v1 and outside, add no label values: they
// are all "other" or the /v1/ catch-all.
func TestMetricsLabelsStayBounded(t *testing.T) {
	s := newObservedServer(t, store.DialectSQLite, 10, nil)
	for i := range 1000 {
		target := fmt.Sprintf("/nowhere/%d", i)
		if i%2 == 1 {
			target = fmt.Sprintf("/v1/nowhere/%d?x=%d", i, i)
		}
		method := []string{http.MethodGet, http.MethodPost, "BREW"}[i%3]
		if rec := s.do(t, method, target, "", nil); rec.Code/100 != 4 {
			t.Fatalf("%s %s: %d, want a 4xx", method, target, rec.Code)
		}
	}
	families := s.scrape(t)
	requests := series(families, "http_requests_total")
	routes := map[string]bool{}
	var total float64
	for labels, v := range requests {
		total += v
		for _, l := range strings.Split(labels, ",") {
			if r, ok := strings.CutPrefix(l, "route="); ok {
				routes[r] = true
			}
		}
	}
	if diff := cmp.Diff(map[string]bool{"other": true, "/v1/": true}, routes); diff != "" {
		t.Errorf("route labels (-want +got):\n%s", diff)
	}
	if len(requests) > 12 || total != 1000 {
		t.Errorf("%d series counting %v requests, want at most 12 series (2 routes × 3 methods × 2 classes) counting 1000:\n%v", len(requests), total, requests)
	}
	for labels := range requests {
		if !strings.Contains(labels, "method=GET") && !strings.Contains(labels, "method=POST") && !strings.Contains(labels, "method=OTHER") {
			t.Errorf("series %s has a method label outside the standard set", labels)
		}
	}
}

// GraphQL operation names are client text: past the cap they count as "other", and a
// refused operation never takes a place.
func TestMetricsOperationNamesStayBounded(t *testing.T) {
	s := newObservedServer(t, store.DialectSQLite, 1000, nil)
	for i := range extension.DefaultMaxOperationNames + 20 {
		q := fmt.Sprintf(`query Op%d { messages(limit: 1) { totalCount } }`, i)
		if rec := s.do(t, http.MethodPost, "/graphql", graphQL(q), s.asTenant("Content-Type", "application/json")); rec.Code != http.StatusOK {
			t.Fatalf("%s: %d %s", q, rec.Code, rec.Body)
		}
	}
	for i := range 20 {
		q := fmt.Sprintf(`query Refused%d { nope }`, i)
		s.do(t, http.MethodPost, "/graphql", graphQL(q), s.asTenant("Content-Type", "application/json"))
	}
	ops := series(s.scrape(t), "graphql_operations_total")
	if got := ops["operation=other,outcome=ok,type=query"]; got != 20 {
		t.Errorf("other = %v, want the 20 names past the cap", got)
	}
	if got := ops["operation=Op0,outcome=ok,type=query"]; got != 1 {
		t.Errorf("Op0 = %v, want its own series", got)
	}
	if want := extension.DefaultMaxOperationNames + 2; len(ops) != want {
		t.Errorf("%d series, want %d (the capped names, other, the refused)", len(ops), want)
	}
}
