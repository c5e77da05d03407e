package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"messages/cmd/loadtest/api"
	"messages/cmd/loadtest/loopback"
)

const (
	testKey        = "test-key"
	testSubscriber = "user-7"
)

var testTransactions = []string{"t1", "t2", "t3", "t4", "t5"}

// fakeServer imitates the message server well enough for discovery and every scenario,
// and records every way a request departs from the API's contract.
type fakeServer struct {
	t *testing.T
	// connection says whether GraphQL has messagesConnection.
	connection bool
	// hits counts requests by scenario-like kind.
	mu       sync.Mutex
	hits     map[string]int
	statuses map[string]int
	walked   atomic.Int64
}

func newFakeServer(t *testing.T, connection bool) (*fakeServer, *httptest.Server) {
	f := &fakeServer{t: t, connection: connection, hits: map[string]int{}, statuses: map[string]int{}}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv
}

func (f *fakeServer) count(kind string) {
	f.mu.Lock()
	f.hits[kind]++
	f.mu.Unlock()
}

func (f *fakeServer) fail(w http.ResponseWriter, format string, args ...any) {
	f.t.Errorf(format, args...)
	http.Error(w, fmt.Sprintf(format, args...), http.StatusBadRequest)
}

func (f *fakeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if got := r.Header.Get("Authorization"); got != "ApiKey "+testKey {
		f.fail(w, "%s %s: Authorization %q", r.Method, r.URL, got)
		return
	}
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/v1/messages":
		f.list(w, r)
	case r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/v1/subscribers/"):
		f.mark(w, r)
	case r.Method == http.MethodPost && r.URL.Path == "/graphql":
		f.graphql(w, r)
	default:
		f.fail(w, "unexpected %s %s", r.Method, r.URL)
	}
}

func (f *fakeServer) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit, err := strconv.Atoi(q.Get("limit"))
	if err != nil || limit < 1 || limit > 1000 {
		f.fail(w, "limit %q", q.Get("limit"))
		return
	}
	for key := range q {
		if !slices.Contains([]string{"limit", "page", "subscriberId", "transactionId[]"}, key) {
			f.fail(w, "unexpected parameter %q", key)
			return
		}
	}
	kind := "first"
	switch {
	case limit == 1000 && len(q) == 1:
		kind = "page-1000"
	case q.Has("subscriberId"):
		if q.Get("subscriberId") != testSubscriber {
			f.fail(w, "subscriberId %q", q.Get("subscriberId"))
			return
		}
		kind = "inbox"
	case q.Has("page"):
		if q.Get("page") != "50000" || limit != 10 {
			f.fail(w, "deep page %q limit %d", q.Get("page"), limit)
			return
		}
		kind = "deep"
	case q.Has("transactionId[]"):
		if diff := cmp.Diff(testTransactions, q["transactionId[]"]); diff != "" {
			f.fail(w, "transactionId[]: %s", diff)
			return
		}
		kind = "transactions"
	}
	f.count("rest-" + kind)
	type sub struct {
		SubscriberID string `json:"subscriberId"`
	}
	type msg struct {
		ID            string `json:"_id"`
		EnvironmentID string `json:"_environmentId"`
		TransactionID string `json:"transactionId"`
		Subscriber    sub    `json:"subscriber"`
	}
	page := struct {
		TotalCount int   `json:"totalCount"`
		Data       []msg `json:"data"`
	}{TotalCount: 1000}
	for i := range 8 {
		page.Data = append(page.Data, msg{ID: fmt.Sprintf("%024x", i+1), EnvironmentID: "env",
			TransactionID: testTransactions[i%len(testTransactions)], Subscriber: sub{testSubscriber}})
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(page)
}

func (f *fakeServer) mark(w http.ResponseWriter, r *http.Request) {
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/v1/subscribers/"), "/")
	if len(parts) != 5 || parts[0] != testSubscriber || parts[1] != "messages" || len(parts[2]) != 24 || parts[3] != "actions" || parts[4] != "primary" {
		f.fail(w, "mark path %q", r.URL.Path)
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		f.fail(w, "mark Content-Type %q", ct)
		return
	}
	var body struct {
		Status  string          `json:"status"`
		Payload json.RawMessage `json:"payload"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || (body.Status != "done" && body.Status != "pending") ||
		!bytes.HasPrefix(body.Payload, []byte("{")) {
		f.fail(w, "mark body %+v (%v)", body, err)
		return
	}
	f.count("mark-" + body.Status)
	w.WriteHeader(http.StatusCreated)
	fmt.Fprintf(w, `{"_id":%q}`, parts[2])
}

func (f *fakeServer) graphql(w http.ResponseWriter, r *http.Request) {
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		f.fail(w, "graphql Content-Type %q", ct)
		return
	}
	var body struct {
		Query     string         `json:"query"`
		Variables map[string]any `json:"variables"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		f.fail(w, "graphql body: %v", err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	switch {
	case strings.Contains(body.Query, "messageCounts"):
		if sub, ok := body.Variables["subscriberId"]; ok && sub != testSubscriber {
			f.fail(w, "messageCounts subscriberId %v", sub)
			return
		}
		f.count("graphql-counts")
		fmt.Fprint(w, `{"data":{"messageCounts":{"total":3,"unread":2,"unseen":1,"archived":0,"snoozed":0}}}`)
	case strings.Contains(body.Query, "messagesConnection"):
		if !f.connection {
			fmt.Fprint(w, `{"errors":[{"message":"Cannot query field \"messagesConnection\" on type \"Query\".","extensions":{"code":"GRAPHQL_VALIDATION_FAILED"}}],"data":null}`)
			return
		}
		if _, ok := body.Variables["first"].(float64); !ok {
			f.fail(w, "messagesConnection without first: %v", body.Variables)
			return
		}
		if strings.Contains(body.Query, "edges") {
			after, _ := body.Variables["after"].(string)
			if !strings.HasPrefix(after, "cursor-") {
				f.fail(w, "cursor page after %q", after)
				return
			}
			f.count("graphql-cursor:" + after)
			fmt.Fprint(w, `{"data":{"messagesConnection":{"edges":[],"pageInfo":{"hasNextPage":true,"endCursor":"x"}}}}`)
			return
		}
		n := f.walked.Add(1)
		fmt.Fprintf(w, `{"data":{"messagesConnection":{"pageInfo":{"hasNextPage":true,"endCursor":"cursor-%d"}}}}`, n)
	case strings.Contains(body.Query, "messages("):
		if body.Variables["limit"] != float64(10) {
			f.fail(w, "messages limit %v", body.Variables["limit"])
			return
		}
		if strings.Contains(body.Query, "read: false") {
			f.count("graphql-unread")
		} else if strings.Contains(body.Query, "totalCount") {
			f.count("graphql-count")
		} else {
			f.count("graphql-first")
		}
		fmt.Fprint(w, `{"data":{"messages":{"hasMore":true,"data":[]}}}`)
	default:
		f.fail(w, "unexpected query %q", body.Query)
	}
}

func testTarget(base string) *target {
	return &target{Server: api.Server{BaseURL: base, APIKey: testKey}, pageSize: 10, deepPage: 50_000, inboxSubscriber: testSubscriber,
		transactionIDs: testTransactions, markMessageIDs: []string{fmt.Sprintf("%024x", 1), fmt.Sprintf("%024x", 2)},
		cursors: map[string]string{"graphql-cursor-deep": "cursor-5", "graphql-cursor-far": "cursor-500"}}
}

// TestScenarioRequestsAreWellFormed sends two requests of every scenario to a server
// that checks each against the API's contract.
func TestScenarioRequestsAreWellFormed(t *testing.T) {
	f, srv := newFakeServer(t, true)
	tg := testTarget(srv.URL)
	client := loopback.NewHTTPClient(2, 0, false)
	for _, s := range scenarios {
		t.Run(s.name, func(t *testing.T) {
			for i := range int64(2) {
				req, err := s.build(t.Context(), tg, i)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := api.Send(client, req, s.want, s.graphql); err != nil {
					t.Error(err)
				}
			}
		})
	}
	want := map[string]int{
		"rest-first": 2, "rest-page-1000": 2, "rest-inbox": 2, "rest-deep": 2, "rest-transactions": 2,
		"graphql-first": 2, "graphql-count": 2, "graphql-cursor:cursor-5": 2, "graphql-cursor:cursor-500": 2,
		"mark-done": 1, "mark-pending": 1,
		// the inbox's: its counts twice each (a subscriber's, the environment's), its unread page
		"graphql-counts": 4, "graphql-unread": 2,
	}
	if diff := cmp.Diff(want, f.hits); diff != "" {
		t.Errorf("requests by kind (-want +got):\n%s", diff)
	}
}

// TestRunEndToEnd runs every scenario briefly against the fake server, as the command
// line would, and reads the JSON report.
func TestRunEndToEnd(t *testing.T) {
	f, srv := newFakeServer(t, true)
	out := filepath.Join(t.TempDir(), "out.json")
	var stdout, stderr bytes.Buffer
	code := run(t, []string{"--base-url", srv.URL, "--api-key", testKey, "--duration", "150ms", "--warmup", "0",
		"--concurrency", "2", "--max-requests", "50", "--cursor-depth", "5", "--far-cursor-depth", "12", "--cursor-step", "2",
		"--json", out}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	rep := readReport(t, out)
	for _, s := range rep.Scenarios {
		if s.Unavailable != "" || s.Requests == 0 || s.Errors != 0 || s.Requests > 50 {
			t.Errorf("%s: %+v", s.Name, s)
		}
	}
	if len(rep.Scenarios) != len(scenarios) {
		t.Errorf("%d scenarios in the report, want %d", len(rep.Scenarios), len(scenarios))
	}
	// Depth 5 in steps of 2 is 3 requests (2, 2, 1); on to 12 is 4 more (2, 2, 2, 1).
	if got := f.walked.Load(); got != 7 {
		t.Errorf("cursor walk made %d requests, want 7", got)
	}
	if f.hits["graphql-cursor:cursor-3"] == 0 || f.hits["graphql-cursor:cursor-7"] == 0 {
		t.Errorf("cursor scenarios did not page after the walked cursors: %v", f.hits)
	}
	if !strings.Contains(stdout.String(), "rest-first-page") || !strings.Contains(stdout.String(), "P99") {
		t.Errorf("table:\n%s", stdout.String())
	}
	if rep.Dataset.InboxSubscriber != testSubscriber || len(rep.Dataset.TransactionIDs) != 5 || rep.Dataset.TotalMessages != 1000 {
		t.Errorf("dataset %+v", rep.Dataset)
	}
}

// TestRunWithoutConnection reports the cursor scenarios unavailable, and runs the others,
// while the server has no messagesConnection yet.
func TestRunWithoutConnection(t *testing.T) {
	_, srv := newFakeServer(t, false)
	out := filepath.Join(t.TempDir(), "out.json")
	var stdout, stderr bytes.Buffer
	code := run(t, []string{"--base-url", srv.URL, "--api-key", testKey, "--duration", "50ms", "--warmup", "0",
		"--concurrency", "1", "--scenarios", "rest-first-page,graphql-cursor-deep", "--json", out}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	rep := readReport(t, out)
	if len(rep.Scenarios) != 2 || rep.Scenarios[0].Requests == 0 || !strings.Contains(rep.Scenarios[1].Unavailable, "Cannot query field") {
		t.Errorf("scenarios %+v %+v", rep.Scenarios[0], rep.Scenarios[1])
	}
	if !strings.Contains(stdout.String(), "unavailable") {
		t.Errorf("table does not say unavailable:\n%s", stdout.String())
	}
}

func readReport(t *testing.T, path string) benchReport {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rep benchReport
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	return rep
}
