package graph_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"

	"messages/graph"
	"messages/graph/extension"
	"messages/models"
	"messages/models/dbtest"
)

// inboxPage is the live inbox's list query (graph/inbox/inbox.js): a page of a
// subscriber's in-app messages with what a row shows.
const inboxPage = `query Inbox($s: String!, $first: Int!, $after: String, $read: Boolean, $archived: Boolean, $snoozed: Boolean) {
    messagesConnection(subscriberId: $s, channel: in_app, read: $read, archived: $archived, snoozed: $snoozed, first: $first, after: $after) {
      edges { node { _id createdAt channel title subject read seen archived snoozedUntil content { content }
    cta { data { url } action { status buttons { type content resultContent } result { type } } } } } pageInfo { hasNextPage endCursor } } }`

// BenchmarkTrustedDocuments answers the inbox page (20 rows of a session's subscriber)
// through the whole handler, in process: by a text new to the server each time (scanned,
// parsed and validated, as any text is the first time and after its cache entry is
// evicted), by its text as the server answered it before trusted documents (off:
// gqlgen's document cache holds it after the first request), by
// its text while it is trusted (require), by documentId and by Apollo's sha256Hash
// (require). Each is measured whole (page) and up to the resolvers (prepare: execution
// skipped, so the database's time and its noise are out). Each reports the median of
// its requests (p50-ns) beside Go's mean, and the allocations of one request. BENCHMARKS.md, "Trusted documents", has a run:
//
//	REQUIRE_MYSQL=1 go test ./graph -run '^$' -bench TrustedDocuments -benchmem -count 3
func BenchmarkTrustedDocuments(b *testing.B) {
	for _, dialect := range dbtest.Dialects {
		b.Run(dialect, func(b *testing.B) {
			s := dbtest.Open(b, dialect)
			tn := dbtest.NewTenant(b, s, "bench")
			alice, tpl := tn.Subscriber(b, "alice"), tn.Template(b, "tpl")
			for range 25 {
				tn.Message(b, alice, tpl, func(m *models.Message) { m.Channel = models.ChannelInApp })
			}
			if _, err := s.TrustDocuments(context.Background(), []models.TrustedDocument{
				{ID: md5Hex(inboxPage), SHA256: sha256Hex(inboxPage), Body: inboxPage, OperationName: "Inbox"}}); err != nil {
				b.Fatal(err)
			}
			set := graph.NewTrustedSet(s, discard)
			if err := set.Refresh(context.Background()); err != nil {
				b.Fatal(err)
			}
			caller := tn.Caller
			caller.SubscriberID = "alice"
			handler := func(mode extension.TrustedMode, prepareOnly bool) http.Handler {
				o := graph.HandlerOptions{Limits: graph.DefaultLimits, TrustedDocuments: set, Trusted: mode}
				if prepareOnly {
					o.Extensions = []graphql.HandlerExtension{skipExecution{}}
				}
				return newHandler(s, discard, o)
			}
			vars := map[string]any{"s": "alice", "first": 20, "archived": false, "snoozed": false}
			cases := []struct {
				name string
				mode extension.TrustedMode
				body map[string]any
				// fresh makes each request's text new to the handler (a comment numbering
				// it), so it is scanned, parsed and validated every time.
				fresh bool
			}{
				{"textParsed", extension.TrustedOff, map[string]any{"query": inboxPage, "variables": vars}, true},
				{"text", extension.TrustedOff, map[string]any{"query": inboxPage, "variables": vars}, false},
				{"trustedText", extension.TrustedRequire, map[string]any{"query": inboxPage, "variables": vars}, false},
				{"documentId", extension.TrustedRequire, map[string]any{"documentId": "sha256:" + sha256Hex(inboxPage), "variables": vars}, false},
				{"apolloHash", extension.TrustedRequire, map[string]any{"extensions": apolloHash(sha256Hex(inboxPage)), "variables": vars}, false},
			}
			for _, stage := range []string{"page", "prepare"} {
				for _, c := range cases {
					b.Run(stage+"/"+c.name, func(b *testing.B) {
						h := handler(c.mode, stage == "prepare")
						body, err := json.Marshal(c.body)
						if err != nil {
							b.Fatal(err)
						}
						ctx := models.WithCaller(context.Background(), caller)
						n := 0
						request := func() *httptest.ResponseRecorder {
							b := body
							if c.fresh {
								n++
								b = []byte(strings.Replace(string(body), `"query":"query Inbox`, `"query":"# `+strconv.Itoa(n)+`\nquery Inbox`, 1))
							}
							req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/graphql", bytes.NewReader(b))
							req.Header.Set("Content-Type", "application/json")
							rec := httptest.NewRecorder()
							h.ServeHTTP(rec, req)
							return rec
						}
						// The first request fills gqlgen's document cache for the text.
						if rec := request(); rec.Code != http.StatusOK || (stage == "page") != bytes.Contains(rec.Body.Bytes(), []byte(`"hasNextPage":true`)) {
							b.Fatalf("%d %s", rec.Code, rec.Body)
						}
						var took []time.Duration
						b.ReportAllocs()
						b.ResetTimer()
						for b.Loop() {
							start := time.Now()
							request()
							took = append(took, time.Since(start))
						}
						b.StopTimer()
						slices.Sort(took)
						b.ReportMetric(float64(took[len(took)/2].Nanoseconds()), "p50-ns")
						b.ReportMetric(float64(len(body)), "body-bytes")
					})
				}
			}
		})
	}
}

// skipExecution answers every operation with empty data instead of running it, so a
// benchmark measures what comes before the resolvers: reading the request, the document
// (parsed and validated, or found), the variables and the limits.
type skipExecution struct{}

func (skipExecution) ExtensionName() string                   { return "skipExecution" }
func (skipExecution) Validate(graphql.ExecutableSchema) error { return nil }
func (skipExecution) InterceptOperation(ctx context.Context, _ graphql.OperationHandler) graphql.ResponseHandler {
	done := false
	return func(context.Context) *graphql.Response {
		if done {
			return nil
		}
		done = true
		return &graphql.Response{Data: []byte(`{}`)}
	}
}
