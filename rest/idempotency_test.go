package rest

// These tests sit inside the package to build the chain with Chain, beside ValidateExchange.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gqlgen "github.com/99designs/gqlgen/graphql"
	"github.com/google/go-cmp/cmp"

	"messages/cmd/server/edge"
	"messages/graph"
	"messages/models"
	"messages/models/dbtest"
	"messages/models/store"
)

// idemStart is the harness clock's first reading.
var idemStart = time.Date(2025, 3, 1, 9, 30, 15, 250_000_000, time.UTC)

// idemClock is a settable clock shared by the resolver and the middleware.
type idemClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *idemClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *idemClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// idemAPI serves /v1 and /graphql with the idempotency middleware wired as in production.
type idemAPI struct {
	srv   *httptest.Server
	store *store.Store
	clock *idemClock
	idem  *edge.Idempotency
	// runs counts requests that got past the middleware to the routes.
	runs atomic.Int64
}

// newIdemAPI wires both endpoints through the edge's production chain (Chain: rate limit
// and media-type check included), with a counter of the requests that run (and inner,
// when set, to fail them): on /v1 those reaching the routes, on /graphql the operations
// gqlgen executes, since gqlgen parses every request before the idempotency extension
// decides whether it runs.
func newIdemAPI(t testing.TB, s *store.Store, clock *idemClock, inner func(http.Handler) http.Handler) *idemAPI {
	t.Helper()
	res := NewBackend(s, slog.New(slog.NewTextHandler(io.Discard, nil)), clock.Now, nil)
	a := &idemAPI{store: s, clock: clock, idem: edge.NewIdempotency(res.Store, res.Logger, clock.Now, edge.IdempotencyOptions{})}
	routes := func(h http.Handler) http.Handler {
		if inner != nil {
			h = inner(h)
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasPrefix(r.URL.Path, "/v1/") {
				a.runs.Add(1)
			}
			h.ServeHTTP(w, r)
		})
	}
	// A rate limit no test reaches, so the chain is production's, guard for guard.
	limiter, err := edge.NewRateLimiter(edge.RateLimitOptions{Rate: 1e6, Burst: 1e6, Now: clock.Now}, res.Logger)
	if err != nil {
		t.Fatal(err)
	}
	a.srv = httptest.NewServer(Chain(res, ChainOptions{Limiter: limiter, Idempotency: a.idem, Inner: routes,
		GraphQL: graph.HandlerOptions{Introspection: true, Limits: graph.DefaultLimits, Extensions: []gqlgen.HandlerExtension{rootFields{&a.runs}}}}))
	t.Cleanup(a.srv.Close)
	return a
}

// rootFields counts the root fields gqlgen executes: one per operation in these tests.
type rootFields struct{ n *atomic.Int64 }

func (rootFields) ExtensionName() string { return "RootFieldCounter" }

func (rootFields) Validate(gqlgen.ExecutableSchema) error { return nil }

func (c rootFields) InterceptRootField(ctx context.Context, next gqlgen.RootResolver) gqlgen.Marshaler {
	c.n.Add(1)
	return next(ctx)
}

// idemResponse is what a request got back.
type idemResponse struct {
	status int
	header http.Header
	body   []byte
}

// send makes a request with an API key, a JSON content type and the given idempotency
// keys (none when nil), and validates the exchange against the OpenAPI document; it is
// safe to call from many goroutines.
func (a *idemAPI) send(t testing.TB, method, uri, apiKey string, keys []string, body string) idemResponse {
	t.Helper()
	req, err := http.NewRequest(method, a.srv.URL+uri, strings.NewReader(body))
	if err != nil {
		t.Error(err)
		return idemResponse{}
	}
	req.Header.Set("Authorization", "ApiKey "+apiKey)
	req.Header.Set("Content-Type", "application/json")
	for _, k := range keys {
		req.Header.Add(edge.IdempotencyKeyHeader, k)
	}
	res, err := a.srv.Client().Do(req)
	if err != nil {
		t.Error(err)
		return idemResponse{}
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Error(err)
	}
	if err := ValidateExchange(Exchange{Method: method, URI: uri, Header: req.Header, Body: []byte(body),
		Status: res.StatusCode, ResponseHeader: res.Header, ResponseBody: b}); err != nil {
		t.Errorf("%s %s, answered %d, does not match the OpenAPI document: %v", method, uri, res.StatusCode, err)
	}
	return idemResponse{status: res.StatusCode, header: res.Header, body: b}
}

// mark posts a mark with one idempotency key.
func (a *idemAPI) mark(t testing.TB, apiKey, key, uri, body string) idemResponse {
	t.Helper()
	return a.send(t, http.MethodPost, uri, apiKey, []string{key}, body)
}

// graphql posts a GraphQL request with one idempotency key (none when empty).
func (a *idemAPI) graphql(t testing.TB, apiKey, key, query string, variables map[string]any) idemResponse {
	t.Helper()
	b, err := json.Marshal(map[string]any{"query": query, "variables": variables})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	if key != "" {
		keys = []string{key}
	}
	return a.send(t, http.MethodPost, "/graphql", apiKey, keys, string(b))
}

// record returns the stored record of a key, or nil.
func (a *idemAPI) record(t testing.TB, env, key string) *models.IdempotencyKey {
	t.Helper()
	var rows []models.IdempotencyKey
	if err := a.store.DB().Where("environment_id = ? AND idempotency_key = ?", env, key).Find(&rows).Error; err != nil {
		t.Fatal(err)
	}
	if len(rows) == 0 {
		return nil
	}
	return &rows[0]
}

// action loads a message's cta.action as stored.
func idemAction(t testing.TB, s *store.Store, id string) models.CTAAction {
	t.Helper()
	var m models.Message
	if err := s.DB().Where("id = ?", id).Take(&m).Error; err != nil {
		t.Fatal(err)
	}
	return *m.CTA.Action
}

// setAction overwrites a message's cta.action through the store, as another client would.
func setAction(t testing.TB, s *store.Store, env, subscriberID, id string, typ models.ButtonType, status models.MessageActionStatus) {
	t.Helper()
	if _, err := s.MarkMessageAction(context.Background(), env, models.MarkAction{SubscriberID: subscriberID, MessageID: id, Type: typ, Status: status, Payload: models.JSON(`{"by":"someone else"}`)}); err != nil {
		t.Fatal(err)
	}
}

// executed checks a first execution: status, the key echoed, no replay mark.
func executed(t testing.TB, res idemResponse, status int, key string) {
	t.Helper()
	if res.status != status {
		t.Fatalf("status = %d, want %d; body %s", res.status, status, res.body)
	}
	if got := res.header.Get(edge.IdempotencyKeyHeader); got != key {
		t.Errorf("Idempotency-Key = %q, want %q echoed", got, key)
	}
	if got := res.header.Get(edge.IdempotencyReplayHeader); got != "" {
		t.Errorf("first execution has Idempotency-Replay: %q", got)
	}
}

// replayed checks a replay: the first response's status and bytes, marked as a replay.
func replayed(t testing.TB, res, first idemResponse, key string) {
	t.Helper()
	if res.status != first.status || !bytes.Equal(res.body, first.body) {
		t.Fatalf("replay = %d %s\nwant %d %s", res.status, res.body, first.status, first.body)
	}
	if got := res.header.Get(edge.IdempotencyReplayHeader); got != "true" {
		t.Errorf("Idempotency-Replay = %q, want true", got)
	}
	if got := res.header.Get(edge.IdempotencyKeyHeader); got != key {
		t.Errorf("Idempotency-Key = %q, want %q", got, key)
	}
	if got, want := res.header.Get("Content-Type"), first.header.Get("Content-Type"); got != want {
		t.Errorf("Content-Type = %q, want %q", got, want)
	}
}

// refusedWith checks an error answer of the documented shape and returns its message.
func refusedWith(t testing.TB, res idemResponse, status int, graphqlStyle bool) string {
	t.Helper()
	if res.status != status {
		t.Fatalf("status = %d, want %d; body %s", res.status, status, res.body)
	}
	var body ErrorBody
	if err := json.Unmarshal(res.body, &body); err != nil {
		t.Fatalf("error body: %v\n%s", err, res.body)
	}
	if body.StatusCode != status || body.Message == "" || body.Error != http.StatusText(status) {
		t.Errorf("error body = %s", res.body)
	}
	if graphqlStyle {
		errs, _ := body.Errors.([]any)
		if len(errs) != 1 {
			t.Errorf("GraphQL-style error has errors %v, want one", body.Errors)
		}
	}
	return body.Message
}

const idemMutation = `mutation Mark($sub: String!, $id: ID!, $type: ButtonType!, $status: MessageActionStatus!, $payload: JSON) {
	markMessageAction(subscriberId: $sub, messageId: $id, type: $type, status: $status, payload: $payload) {
		_id cta { action { status result { type payload } } }
	}
}`

// idemFixture is tenant a with subscriber alice, tenant b with its own alice, and a way
// to make fresh messages so each test starts from a pending one.
type idemFixture struct {
	s    *store.Store
	a, b *dbtest.Tenant
	subs map[*dbtest.Tenant]*models.Subscriber
	tpls map[*dbtest.Tenant]*models.Template
}

func newIdemFixture(t testing.TB, s *store.Store) *idemFixture {
	t.Helper()
	f := &idemFixture{s: s, a: dbtest.NewTenant(t, s, "a"), b: dbtest.NewTenant(t, s, "b"),
		subs: map[*dbtest.Tenant]*models.Subscriber{}, tpls: map[*dbtest.Tenant]*models.Template{}}
	for _, tn := range []*dbtest.Tenant{f.a, f.b} {
		f.subs[tn], f.tpls[tn] = tn.Subscriber(t, "alice"), tn.Template(t, "tpl")
	}
	return f
}

// message makes a pending message of tn's alice and returns it with its mark URI.
func (f *idemFixture) message(t testing.TB, tn *dbtest.Tenant, typ string) (*models.Message, string) {
	t.Helper()
	m := tn.Message(t, f.subs[tn], f.tpls[tn], nil)
	return m, "/v1/subscribers/alice/messages/" + m.ID + "/actions/" + typ
}

func TestIdempotencyREST(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		f := newIdemFixture(t, s)
		a := newIdemAPI(t, s, &idemClock{now: idemStart}, nil)

		t.Run("mark201ThenReplayLeavesMessageAlone", func(t *testing.T) {
			m, uri := f.message(t, f.a, "primary")
			runs := a.runs.Load()
			first := a.mark(t, f.a.Key, "k-replay", uri, `{"status":"done","payload":{"n":1,"a":"x"}}`)
			executed(t, first, http.StatusCreated, "k-replay")
			if got := idemAction(t, s, m.ID); got.Status != models.ActionDone || string(got.Result.Payload) != `{"n":1,"a":"x"}` {
				t.Fatalf("after the first request: %+v", got)
			}
			// Someone else changes the message; a replay must not undo that.
			setAction(t, s, f.a.Env.ID, "alice", m.ID, models.ButtonSecondary, models.ActionPending)
			before := idemAction(t, s, m.ID)
			// The same request with other whitespace and key order is the same request.
			res := a.mark(t, f.a.Key, "k-replay", uri, " {\"payload\": {\"a\":\"x\", \"n\":1},\n \"status\":\"done\"} ")
			replayed(t, res, first, "k-replay")
			if diff := cmp.Diff(before, idemAction(t, s, m.ID)); diff != "" {
				t.Errorf("replay touched the message (-before +after):\n%s", diff)
			}
			if n := a.runs.Load() - runs; n != 1 {
				t.Errorf("routes ran %d times, want 1", n)
			}
			rec := a.record(t, f.a.Env.ID, "k-replay")
			if rec == nil || rec.Status != http.StatusCreated || !bytes.Equal(rec.Body, first.body) || !strings.HasPrefix(rec.ContentType, "application/json") ||
				!rec.ExpiresAt.Equal(idemStart.Add(24*time.Hour).Truncate(time.Millisecond)) {
				t.Errorf("record = %+v", rec)
			}
		})

		t.Run("mark422SameKeyOtherRequest", func(t *testing.T) {
			m, uri := f.message(t, f.a, "primary")
			_, otherURI := f.message(t, f.a, "primary")
			key := `k-"other"`
			executed(t, a.mark(t, f.a.Key, key, uri, `{"status":"done"}`), http.StatusCreated, key)
			before := idemAction(t, s, m.ID)
			for name, req := range map[string]struct{ uri, body string }{
				"otherBody":    {uri, `{"status":"pending"}`},
				"addedPayload": {uri, `{"status":"done","payload":{}}`},
				"otherMessage": {otherURI, `{"status":"done"}`},
				"otherType":    {strings.TrimSuffix(uri, "primary") + "secondary", `{"status":"done"}`},
			} {
				res := a.mark(t, f.a.Key, key, req.uri, req.body)
				msg := refusedWith(t, res, http.StatusUnprocessableEntity, false)
				if !strings.Contains(msg, `"k-\"other\""`) {
					t.Errorf("%s: message %q does not name the key", name, msg)
				}
				if got := res.header.Get(edge.IdempotencyReplayHeader); got != "" {
					t.Errorf("%s: 422 marked as a replay", name)
				}
			}
			if diff := cmp.Diff(before, idemAction(t, s, m.ID)); diff != "" {
				t.Errorf("refused requests changed the message (-before +after):\n%s", diff)
			}
		})

		t.Run("mark201SameKeyOtherTenantIndependent", func(t *testing.T) {
			_, uriA := f.message(t, f.a, "primary")
			mb, uriB := f.message(t, f.b, "secondary")
			firstA := a.mark(t, f.a.Key, "k-shared", uriA, `{"status":"done"}`)
			executed(t, firstA, http.StatusCreated, "k-shared")
			// The same key and even the same path would not leak tenant a's response.
			firstB := a.mark(t, f.b.Key, "k-shared", uriB, `{"status":"done"}`)
			executed(t, firstB, http.StatusCreated, "k-shared")
			if got := idemAction(t, s, mb.ID); got.Status != models.ActionDone || got.Result.Type != models.ButtonSecondary {
				t.Errorf("tenant b's message: %+v", got)
			}
			replayed(t, a.mark(t, f.b.Key, "k-shared", uriB, `{"status":"done"}`), firstB, "k-shared")
			replayed(t, a.mark(t, f.a.Key, "k-shared", uriA, `{"status":"done"}`), firstA, "k-shared")
			res := a.mark(t, f.b.Key, "k-shared-404", uriA, `{"status":"done"}`)
			executed(t, res, http.StatusNotFound, "k-shared-404")
		})

		t.Run("refusedStoresNothingThenRetryRuns", func(t *testing.T) {
			m, uri := f.message(t, f.a, "primary")
			key := "k-refused"
			refusedWith(t, a.mark(t, f.a.Key, key, uri, `{"status":"maybe"}`), http.StatusUnprocessableEntity, false)
			refusedWith(t, a.mark(t, f.a.Key, key, uri, `{"status":`), http.StatusBadRequest, false)
			refusedWith(t, a.mark(t, f.a.Key, key, strings.TrimSuffix(uri, "primary")+"tertiary", `{"status":"done"}`), http.StatusUnprocessableEntity, false)
			refusedWith(t, a.send(t, http.MethodPost, uri, "not-a-key", []string{key}, `{"status":"done"}`), http.StatusUnauthorized, false)
			huge := `{"status":"done","payload":{"x":"` + strings.Repeat("a", MaxBodyBytes) + `"}}`
			refusedWith(t, a.mark(t, f.a.Key, key, uri, huge), http.StatusRequestEntityTooLarge, false)
			if rec := a.record(t, f.a.Env.ID, key); rec != nil {
				t.Fatalf("refused requests stored %+v", rec)
			}
			if got := idemAction(t, s, m.ID); got.Status != models.ActionPending {
				t.Fatalf("refused requests changed the message: %+v", got)
			}
			first := a.mark(t, f.a.Key, key, uri, `{"status":"done"}`)
			executed(t, first, http.StatusCreated, key)
			replayed(t, a.mark(t, f.a.Key, key, uri, `{"status":"done"}`), first, key)
		})

		t.Run("mark404Stored", func(t *testing.T) {
			uri := "/v1/subscribers/alice/messages/67c2be400000000000000abc/actions/primary"
			first := a.mark(t, f.a.Key, "k-404", uri, `{"status":"done"}`)
			executed(t, first, http.StatusNotFound, "k-404")
			if rec := a.record(t, f.a.Env.ID, "k-404"); rec == nil || rec.Status != http.StatusNotFound {
				t.Fatalf("404 record = %+v", rec)
			}
			replayed(t, a.mark(t, f.a.Key, "k-404", uri, `{"status":"done"}`), first, "k-404")
		})

		t.Run("keyValidation", func(t *testing.T) {
			m, uri := f.message(t, f.a, "primary")
			for name, keys := range map[string][]string{
				"mark400Key256":        {strings.Repeat("k", 256)},
				"mark400Key256Runes":   {strings.Repeat("é", 256)},
				"mark400KeyEmpty":      {""},
				"mark400KeyTab":        {"a\tb"},
				"mark400KeyTwice":      {"k1", "k2"},
				"mark400KeyNotUTF8":    {"k\xff"},
				"mark400KeyNonPrint":   {"k\u200b"},
				"mark400KeyPrivateUse": {"k\ue000"},
			} {
				res := a.send(t, http.MethodPost, uri, f.a.Key, keys, `{"status":"done"}`)
				msg := refusedWith(t, res, http.StatusBadRequest, false)
				if !strings.Contains(msg, "Idempotency-Key") {
					t.Errorf("%s: message %q does not name the header", name, msg)
				}
				if res.header.Get(edge.IdempotencyKeyHeader) != "" {
					t.Errorf("%s: an invalid key was echoed", name)
				}
			}
			if got := idemAction(t, s, m.ID); got.Status != models.ActionPending {
				t.Fatalf("refused keys changed the message: %+v", got)
			}
			for _, key := range []string{strings.Repeat("k", 255), strings.Repeat("é", 255), "a b:c/d=e"} {
				executed(t, a.mark(t, f.a.Key, key, uri, `{"status":"done"}`), http.StatusCreated, key)
			}
		})

		t.Run("keyIgnoredWithoutIt", func(t *testing.T) {
			_, uri := f.message(t, f.a, "primary")
			// Without a key, nothing is stored and nothing is echoed.
			res := a.send(t, http.MethodPost, uri, f.a.Key, nil, `{"status":"done"}`)
			if res.status != http.StatusCreated || res.header.Get(edge.IdempotencyKeyHeader) != "" {
				t.Errorf("no key: %d %v", res.status, res.header)
			}
			// GET ignores the header, even an invalid one.
			res = a.send(t, http.MethodGet, "/v1/messages?limit=1", f.a.Key, []string{strings.Repeat("k", 300)}, "")
			if res.status != http.StatusOK || res.header.Get(edge.IdempotencyKeyHeader) != "" {
				t.Errorf("GET with a key: %d %v", res.status, res.header)
			}
		})

		t.Run("expired201RunsAgain", func(t *testing.T) {
			clock := &idemClock{now: idemStart}
			api := newIdemAPI(t, s, clock, nil)
			m, uri := f.message(t, f.a, "primary")
			executed(t, api.mark(t, f.a.Key, "k-expiry", uri, `{"status":"done"}`), http.StatusCreated, "k-expiry")
			clock.advance(24*time.Hour - time.Millisecond)
			if res := api.mark(t, f.a.Key, "k-expiry", uri, `{"status":"pending"}`); res.status != http.StatusUnprocessableEntity {
				t.Fatalf("just before expiry: %d, want 422", res.status)
			}
			clock.advance(time.Millisecond)
			runs := api.runs.Load()
			// A different request is fine once the record expired: it replaces it.
			executed(t, api.mark(t, f.a.Key, "k-expiry", uri, `{"status":"pending"}`), http.StatusCreated, "k-expiry")
			if n := api.runs.Load() - runs; n != 1 {
				t.Errorf("routes ran %d times, want 1", n)
			}
			if got := idemAction(t, s, m.ID); got.Status != models.ActionPending {
				t.Errorf("after expiry the request did not run: %+v", got)
			}
			rec := api.record(t, f.a.Env.ID, "k-expiry")
			if want := idemStart.Add(48 * time.Hour).Truncate(time.Millisecond); rec == nil || !rec.ExpiresAt.Equal(want) {
				t.Errorf("replaced record = %+v, want expiry %v", rec, want)
			}
		})

		t.Run("purgeDeletesExpiredOnly", func(t *testing.T) {
			clock := &idemClock{now: idemStart}
			api := newIdemAPI(t, s, clock, nil)
			_, uri := f.message(t, f.b, "primary")
			executed(t, api.mark(t, f.b.Key, "k-purge-old", uri, `{"status":"done"}`), http.StatusCreated, "k-purge-old")
			clock.advance(12 * time.Hour)
			executed(t, api.mark(t, f.b.Key, "k-purge-new", uri, `{"status":"done"}`), http.StatusCreated, "k-purge-new")
			clock.advance(12 * time.Hour)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { defer close(done); api.idem.PurgeExpired(ctx) }()
			deadline := time.Now().Add(10 * time.Second)
			for api.record(t, f.b.Env.ID, "k-purge-old") != nil && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			cancel()
			<-done
			if api.record(t, f.b.Env.ID, "k-purge-old") != nil {
				t.Error("expired record not purged")
			}
			if api.record(t, f.b.Env.ID, "k-purge-new") == nil {
				t.Error("live record purged")
			}
		})

		t.Run("crash500KeepsNeitherChangeNorRecord", func(t *testing.T) {
			var innerStatus atomic.Int64
			crash := func(h http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					rec := httptest.NewRecorder()
					h.ServeHTTP(rec, r) // the mark runs and succeeds...
					innerStatus.Store(int64(rec.Code))
					// ...then the request fails, answered as the server answers a panic.
					ew := NewErrorWriter(slog.New(slog.DiscardHandler), idemStart.UTC)
					ew.WriteError(w, r, errors.New("simulated crash after the change"))
				})
			}
			crashing := newIdemAPI(t, s, &idemClock{now: idemStart}, crash)
			m, uri := f.message(t, f.a, "primary")
			res := crashing.mark(t, f.a.Key, "k-crash", uri, `{"status":"done"}`)
			if res.status != http.StatusInternalServerError || innerStatus.Load() != http.StatusCreated {
				t.Fatalf("crash: %d (mark answered %d), want 500 after a 201", res.status, innerStatus.Load())
			}
			if got := idemAction(t, s, m.ID); got.Status != models.ActionPending || got.Result != nil {
				t.Errorf("the change outlived the failed request: %+v", got)
			}
			if rec := a.record(t, f.a.Env.ID, "k-crash"); rec != nil {
				t.Errorf("the failed request left its record: %+v", rec)
			}
			executed(t, a.mark(t, f.a.Key, "k-crash", uri, `{"status":"done"}`), http.StatusCreated, "k-crash")
			if got := idemAction(t, s, m.ID); got.Status != models.ActionDone {
				t.Errorf("the retry did not run: %+v", got)
			}
		})
	})
}

func TestIdempotencyGraphQL(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		f := newIdemFixture(t, s)
		a := newIdemAPI(t, s, &idemClock{now: idemStart}, nil)
		vars := func(m *models.Message, status string) map[string]any {
			return map[string]any{"sub": "alice", "id": m.ID, "type": "secondary", "status": status, "payload": map[string]any{"z": 1, "a": []any{1, 2}}}
		}

		t.Run("mutation200ThenReplay", func(t *testing.T) {
			m, _ := f.message(t, f.a, "primary")
			runs := a.runs.Load()
			first := a.graphql(t, f.a.Key, "k-gql", idemMutation, vars(m, "done"))
			executed(t, first, http.StatusOK, "k-gql")
			if !bytes.Contains(first.body, []byte(`"status":"done"`)) || bytes.Contains(first.body, []byte(`"errors"`)) {
				t.Fatalf("mutation: %s", first.body)
			}
			setAction(t, s, f.a.Env.ID, "alice", m.ID, models.ButtonPrimary, models.ActionPending)
			before := idemAction(t, s, m.ID)
			// Variables in another key order are the same request.
			body := `{"variables":{"status":"done","payload":{"a":[1,2],"z":1},"type":"secondary","id":"` + m.ID + `","sub":"alice"},"query":` + strings.TrimSpace(string(mustJSON(t, idemMutation))) + `}`
			res := a.send(t, http.MethodPost, "/graphql", f.a.Key, []string{"k-gql"}, body)
			replayed(t, res, first, "k-gql")
			if diff := cmp.Diff(before, idemAction(t, s, m.ID)); diff != "" {
				t.Errorf("replay touched the message (-before +after):\n%s", diff)
			}
			if n := a.runs.Load() - runs; n != 1 {
				t.Errorf("routes ran %d times, want 1", n)
			}
			// Other variables under the same key: refused, GraphQL-style.
			msg := refusedWith(t, a.graphql(t, f.a.Key, "k-gql", idemMutation, vars(m, "pending")), http.StatusUnprocessableEntity, true)
			if !strings.Contains(msg, `"k-gql"`) {
				t.Errorf("message %q does not name the key", msg)
			}
		})

		t.Run("deleteMessages200ThenReplay", func(t *testing.T) {
			m, _ := f.message(t, f.a, "primary")
			del := `mutation($ids: [ID!]) { deleteMessages(messageIds: $ids) { deleted messageIds } }`
			first := a.graphql(t, f.a.Key, "k-del", del, map[string]any{"ids": []string{m.ID}})
			executed(t, first, http.StatusOK, "k-del")
			if !bytes.Contains(first.body, []byte(`"deleted":1`)) {
				t.Fatalf("deleteMessages: %s", first.body)
			}
			// The retry answers as the first did (deleted: 1), not as a second delete would.
			replayed(t, a.graphql(t, f.a.Key, "k-del", del, map[string]any{"ids": []string{m.ID}}), first, "k-del")
			again := a.graphql(t, f.a.Key, "k-del-2", del, map[string]any{"ids": []string{m.ID}})
			if !bytes.Contains(again.body, []byte(`"deleted":0`)) {
				t.Fatalf("deleting it again under a new key: %s", again.body)
			}
		})

		t.Run("mutationAndRESTShareKeys", func(t *testing.T) {
			m, uri := f.message(t, f.a, "secondary")
			executed(t, a.graphql(t, f.a.Key, "k-both", idemMutation, vars(m, "done")), http.StatusOK, "k-both")
			refusedWith(t, a.mark(t, f.a.Key, "k-both", uri, `{"status":"done"}`), http.StatusUnprocessableEntity, false)
		})

		t.Run("query200IgnoresKey", func(t *testing.T) {
			runs := a.runs.Load()
			for _, key := range []string{"k-query", strings.Repeat("k", 300)} {
				for _, q := range []string{`{ messages { totalCount } }`, `query Q { messages { totalCount } } mutation M { __typename }`} {
					b, _ := json.Marshal(map[string]any{"query": q, "operationName": map[bool]any{true: "Q", false: nil}[strings.HasPrefix(q, "query Q")]})
					res := a.send(t, http.MethodPost, "/graphql", f.a.Key, []string{key}, string(b))
					if res.status != http.StatusOK || res.header.Get(edge.IdempotencyKeyHeader) != "" || bytes.Contains(res.body, []byte(`"errors"`)) {
						t.Errorf("query with key %.10q: %d %v %s", key, res.status, res.header, res.body)
					}
				}
			}
			if n := a.runs.Load() - runs; n != 4 {
				t.Errorf("routes ran %d times, want 4", n)
			}
			if rec := a.record(t, f.a.Env.ID, "k-query"); rec != nil {
				t.Errorf("a query stored %+v", rec)
			}
			// GET is never idempotency-checked.
			res := a.send(t, http.MethodGet, "/graphql?query="+url.QueryEscape(`{ messages { totalCount } }`), f.a.Key, []string{"k-query"}, "")
			if res.status != http.StatusOK || res.header.Get(edge.IdempotencyKeyHeader) != "" {
				t.Errorf("GET with a key: %d %v", res.status, res.header)
			}
		})

		t.Run("mutation400BadKey", func(t *testing.T) {
			m, _ := f.message(t, f.a, "primary")
			refusedWith(t, a.graphql(t, f.a.Key, strings.Repeat("k", 256), idemMutation, vars(m, "done")), http.StatusBadRequest, true)
			if got := idemAction(t, s, m.ID); got.Status != models.ActionPending {
				t.Errorf("refused key changed the message: %+v", got)
			}
		})

		t.Run("mutationRefusedStoresNothing", func(t *testing.T) {
			m, _ := f.message(t, f.a, "primary")
			bad := vars(m, "done")
			bad["payload"] = []any{1}
			res := a.graphql(t, f.a.Key, "k-gql-bad", idemMutation, bad)
			if res.status != http.StatusOK || !bytes.Contains(res.body, []byte("BAD_USER_INPUT")) {
				t.Fatalf("bad payload: %d %s", res.status, res.body)
			}
			// GraphQL over HTTP: in application/json an invalid document is 200 with errors.
			res = a.graphql(t, f.a.Key, "k-gql-bad", `mutation { nope }`, nil)
			if res.status != http.StatusOK || !bytes.Contains(res.body, []byte("GRAPHQL_VALIDATION_FAILED")) {
				t.Fatalf("invalid document: %d %s", res.status, res.body)
			}
			if rec := a.record(t, f.a.Env.ID, "k-gql-bad"); rec != nil {
				t.Fatalf("refused mutations stored %+v", rec)
			}
			executed(t, a.graphql(t, f.a.Key, "k-gql-bad", idemMutation, vars(m, "done")), http.StatusOK, "k-gql-bad")
			if got := idemAction(t, s, m.ID); got.Status != models.ActionDone {
				t.Errorf("the corrected retry did not run: %+v", got)
			}
		})

		t.Run("mutationNotFoundStored", func(t *testing.T) {
			m, _ := f.message(t, f.b, "primary")
			first := a.graphql(t, f.a.Key, "k-gql-404", idemMutation, vars(m, "done")) // tenant b's message
			executed(t, first, http.StatusOK, "k-gql-404")
			if !bytes.Contains(first.body, []byte("NOT_FOUND")) {
				t.Fatalf("foreign message: %s", first.body)
			}
			replayed(t, a.graphql(t, f.a.Key, "k-gql-404", idemMutation, vars(m, "done")), first, "k-gql-404")
		})
	})
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestIdempotencyConcurrent sends 20 requests with one key at once, to one instance and
// to two instances sharing the database: one runs, the others replay its response or are
// told to retry, and none runs a second time.
func TestIdempotencyConcurrent(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		f := newIdemFixture(t, s)
		for _, instances := range []int{1, 2} {
			name := map[int]string{1: "oneInstance", 2: "twoInstances"}[instances]
			t.Run(name, func(t *testing.T) {
				apis := make([]*idemAPI, instances)
				for n := range apis {
					apis[n] = newIdemAPI(t, s, &idemClock{now: idemStart}, nil)
				}
				m, uri := f.message(t, f.a, "primary")
				key := "k-concurrent-" + name
				const n = 20
				results := make([]idemResponse, n)
				var wg sync.WaitGroup
				start := make(chan struct{})
				for i := range n {
					wg.Add(1)
					go func() {
						defer wg.Done()
						<-start
						body := `{"status":"done","payload":{"i":0}}`
						results[i] = apis[i%instances].mark(t, f.a.Key, key, uri, body)
					}()
				}
				close(start)
				wg.Wait()

				var runs int64
				for _, a := range apis {
					runs += a.runs.Load()
				}
				if runs != 1 {
					t.Errorf("routes ran %d times, want exactly 1", runs)
				}
				var fresh []idemResponse
				counts := map[string]int{}
				for _, res := range results {
					switch {
					case res.status == http.StatusCreated && res.header.Get(edge.IdempotencyReplayHeader) == "":
						fresh = append(fresh, res)
						counts["executed"]++
					case res.status == http.StatusCreated:
						counts["replayed"]++
					case res.status == http.StatusConflict:
						counts["conflict"]++
						if got := res.header.Get("Retry-After"); got != "1" {
							t.Errorf("409 Retry-After = %q, want 1", got)
						}
						refusedWith(t, res, http.StatusConflict, false)
					default:
						t.Errorf("unexpected answer %d %s", res.status, res.body)
					}
				}
				t.Logf("%v", counts)
				if len(fresh) != 1 {
					t.Fatalf("%d executions answered, want 1", len(fresh))
				}
				for _, res := range results {
					if res.status == http.StatusCreated && !bytes.Equal(res.body, fresh[0].body) {
						t.Errorf("replay differs from the execution:\n%s\n%s", res.body, fresh[0].body)
					}
				}
				rec := apis[0].record(t, f.a.Env.ID, key)
				if rec == nil || !bytes.Equal(rec.Body, fresh[0].body) {
					t.Errorf("record = %+v", rec)
				}
				if got := idemAction(t, s, m.ID); got.Status != models.ActionDone {
					t.Errorf("message = %+v", got)
				}
				// Afterwards every instance replays.
				for _, a := range apis {
					replayed(t, a.mark(t, f.a.Key, key, uri, `{"status":"done","payload":{"i":0}}`), fresh[0], key)
				}
			})
		}
	})
}
