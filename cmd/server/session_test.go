package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"messages/models"
	"messages/models/dbtest"
	"messages/models/session"
	"messages/models/store"
)

// The session secrets of the test servers: the current one and the one before it.
const (
	sessionSecret   = "test-session-secret-0123456789abcdef"
	previousSecret  = "test-session-secret-previous-0123456789"
	unrelatedSecret = "test-session-secret-of-someone-else-0123"
)

// sessionWorld is a real server in production over a fresh database: in one environment
// alice (two messages) and bob (one), in another environment an alice of its own.
type sessionWorld struct {
	srv            *running
	store          *store.Store
	env            *models.Environment
	key, keyID     string
	alice1, alice2 *models.Message
	bobs, foreign  *models.Message
}

func newSessionWorld(t *testing.T, dialect string, serveArgs ...string) *sessionWorld {
	t.Helper()
	databaseURL := dbtest.URL(t, dialect)
	st := productionStore(t, databaseURL)
	tn := dbtest.NewTenant(t, st, "sessions")
	alice, bob, tpl := tn.Subscriber(t, "alice"), tn.Subscriber(t, "bob"), tn.Template(t, "welcome")
	w := &sessionWorld{store: st, env: tn.Env}
	w.alice1, w.alice2 = tn.Message(t, alice, tpl, nil), tn.Message(t, alice, tpl, nil)
	w.bobs = tn.Message(t, bob, tpl, nil)
	other := dbtest.NewTenant(t, st, "elsewhere")
	w.foreign = other.Message(t, other.Subscriber(t, "alice"), other.Template(t, "welcome"), nil)

	key, rec, err := st.CreateAPIKey(context.Background(), tn.Env.ID, "sessions")
	if err != nil {
		t.Fatal(err)
	}
	w.key, w.keyID = key, rec.ID
	args := append([]string{"--rate-limit", "100000", "--rate-burst", "100000",
		"--session-secret", sessionSecret, "--session-secret-previous", previousSecret}, serveArgs...)
	w.srv = start(t, args...)
	t.Cleanup(e2eClient.CloseIdleConnections)
	return w
}

// call sends a request with the Authorization header auth ("" for none).
func (w *sessionWorld) call(t *testing.T, method, uri, auth, body string) e2eReply {
	t.Helper()
	req, err := http.NewRequest(method, w.srv.base+uri, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := e2eClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return e2eReply{status: res.StatusCode, header: res.Header, body: b}
}

// token exchanges the API key for a session of subscriberID.
func (w *sessionWorld) token(t *testing.T, subscriberID string) string {
	t.Helper()
	r := w.call(t, http.MethodPost, "/v1/inbox/session", "ApiKey "+w.key, `{"subscriberId":"`+subscriberID+`"}`)
	if r.status != http.StatusCreated {
		t.Fatalf("session for %s: %d %s", subscriberID, r.status, r.body)
	}
	var s struct{ Token string }
	if err := json.Unmarshal(r.body, &s); err != nil || s.Token == "" {
		t.Fatalf("session body %s: %v", r.body, err)
	}
	return s.Token
}

// gql posts a GraphQL operation and returns its data and the extensions.code of its
// errors.
func (w *sessionWorld) gql(t *testing.T, auth, query string, variables map[string]any) (map[string]any, []string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": variables})
	r := w.call(t, http.MethodPost, "/graphql", auth, string(body))
	var res struct {
		Data   map[string]any `json:"data"`
		Errors []struct {
			Extensions struct {
				Code string `json:"code"`
			} `json:"extensions"`
		} `json:"errors"`
	}
	if err := json.Unmarshal(r.body, &res); err != nil {
		t.Fatalf("GraphQL answer %d %s: %v", r.status, r.body, err)
	}
	var codes []string
	for _, e := range res.Errors {
		codes = append(codes, e.Extensions.Code)
	}
	return res.Data, codes
}

// ids lists the _id of every message of a /v1 page.
func ids(t *testing.T, r e2eReply) []string {
	t.Helper()
	if r.status != http.StatusOK {
		t.Fatalf("list: %d %s", r.status, r.body)
	}
	var page struct {
		Data []struct {
			ID string `json:"_id"`
		}
	}
	if err := json.Unmarshal(r.body, &page); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range page.Data {
		out = append(out, m.ID)
	}
	return out
}

// errorMessage is the message of a documented error body with the given status.
func errorMessage(t *testing.T, r e2eReply, status int) string {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d: %s", r.status, status, r.body)
	}
	var body struct{ Message string }
	if err := json.Unmarshal(r.body, &body); err != nil {
		t.Fatalf("error body %s: %v", r.body, err)
	}
	return body.Message
}

func sameIDs(got []string, want ...string) bool {
	if len(got) != len(want) {
		return false
	}
	seen := map[string]bool{}
	for _, id := range got {
		seen[id] = true
	}
	for _, id := range want {
		if !seen[id] {
			return false
		}
	}
	return true
}

func TestSubscriberSessions(t *testing.T) {
	for _, dialect := range []string{store.DialectSQLite, store.DialectMySQL} {
		t.Run(dialect, func(t *testing.T) {
			w := newSessionWorld(t, dialect)
			alice := "Bearer " + w.token(t, "alice")

			t.Run("create201", func(t *testing.T) {
				before := time.Now()
				r := w.call(t, http.MethodPost, "/v1/inbox/session", "ApiKey "+w.key, `{"subscriberId":"alice","expiresIn":120}`)
				if r.status != http.StatusCreated {
					t.Fatalf("%d %s", r.status, r.body)
				}
				var s struct {
					Token, SubscriberID string
					ExpiresAt           time.Time
				}
				if err := json.Unmarshal(r.body, &s); err != nil {
					t.Fatal(err)
				}
				if s.SubscriberID != "alice" || strings.Count(s.Token, ".") != 2 ||
					s.ExpiresAt.Before(before.Add(115*time.Second)) || s.ExpiresAt.After(time.Now().Add(125*time.Second)) {
					t.Errorf("session %s, want alice's JWT expiring in 120 s", r.body)
				}
			})
			for _, tt := range []struct {
				name, auth, body string
				status           int
				says             string
			}{
				{"create401NoKey", "", `{"subscriberId":"alice"}`, 401, "required"},
				{"create403FromSession", alice, `{"subscriberId":"alice"}`, 403, "cannot create sessions"},
				{"create422NoSubscriber", "ApiKey " + w.key, `{}`, 422, "subscriberId"},
				{"create422SubscriberNotString", "ApiKey " + w.key, `{"subscriberId":5}`, 422, "subscriberId"},
				{"create422ShortLife", "ApiKey " + w.key, `{"subscriberId":"alice","expiresIn":10}`, 422, "expiresIn"},
				{"create422LongLife", "ApiKey " + w.key, `{"subscriberId":"alice","expiresIn":86401}`, 422, "expiresIn"},
				{"create400NotObject", "ApiKey " + w.key, `["alice"]`, 400, "JSON object"},
			} {
				t.Run(tt.name, func(t *testing.T) {
					r := w.call(t, http.MethodPost, "/v1/inbox/session", tt.auth, tt.body)
					if msg := errorMessage(t, r, tt.status); !strings.Contains(msg, tt.says) {
						t.Errorf("message %q does not say %q", msg, tt.says)
					}
				})
			}

			t.Run("list200OnlyOwnMessages", func(t *testing.T) {
				if got := ids(t, w.call(t, http.MethodGet, "/v1/messages?limit=100", alice, "")); !sameIDs(got, w.alice1.ID, w.alice2.ID) {
					t.Errorf("alice's session lists %v, want only her two messages", got)
				}
				if got := ids(t, w.call(t, http.MethodGet, "/v1/messages?subscriberId=alice", alice, "")); !sameIDs(got, w.alice1.ID, w.alice2.ID) {
					t.Errorf("alice's session with her own subscriberId lists %v", got)
				}
				data, codes := w.gql(t, alice, `{ messages(limit: 100) { data { _id } } }`, nil)
				if len(codes) != 0 || len(data["messages"].(map[string]any)["data"].([]any)) != 2 {
					t.Errorf("GraphQL list with alice's session: %v %v", data, codes)
				}
				data, codes = w.gql(t, alice, `{ messagesConnection(first: 10) { edges { node { _id } } } }`, nil)
				if len(codes) != 0 || len(data["messagesConnection"].(map[string]any)["edges"].([]any)) != 2 {
					t.Errorf("GraphQL connection with alice's session: %v %v", data, codes)
				}
			})
			t.Run("list403OtherSubscriber", func(t *testing.T) {
				errorMessage(t, w.call(t, http.MethodGet, "/v1/messages?subscriberId=bob", alice, ""), http.StatusForbidden)
				for _, q := range []string{`{ messages(subscriberId: "bob") { totalCount } }`,
					`{ messagesConnection(subscriberId: "bob") { edges { cursor } } }`} {
					if _, codes := w.gql(t, alice, q, nil); len(codes) != 1 || codes[0] != "FORBIDDEN" {
						t.Errorf("%s: codes %v, want FORBIDDEN", q, codes)
					}
				}
			})
			t.Run("node200OnlyOwnRecords", func(t *testing.T) {
				gid := func(typ, id string) string { return base64.RawURLEncoding.EncodeToString([]byte(typ + ":" + id)) }
				data, codes := w.gql(t, alice, `query($ids: [ID!]!, $bob: ID!) {
					nodes(ids: $ids) { ... on Message { _id } }
					bob: node(id: $bob) { id }
				}`, map[string]any{"ids": []string{gid("Message", w.alice1.ID), gid("Message", w.bobs.ID), gid("Message", w.foreign.ID),
					gid("Subscriber", w.bobs.SubscriberID)}, "bob": gid("Message", w.bobs.ID)})
				nodes, _ := data["nodes"].([]any)
				if len(codes) != 0 || len(nodes) != 4 || nodes[0] == nil || nodes[1] != nil || nodes[2] != nil || nodes[3] != nil || data["bob"] != nil {
					t.Errorf("alice's session sees nodes %v, node %v (codes %v); want only her message", nodes, data["bob"], codes)
				}
			})
			t.Run("mark201OwnMessage", func(t *testing.T) {
				r := w.call(t, http.MethodPost, "/v1/subscribers/alice/messages/"+w.alice1.ID+"/actions/primary", alice, `{"status":"done"}`)
				if r.status != http.StatusCreated {
					t.Fatalf("%d %s", r.status, r.body)
				}
			})
			t.Run("mark404OtherSubscribersMessage", func(t *testing.T) {
				before := dbtest.LoadMessage(t, w.store, w.bobs.ID)
				for _, path := range []string{"/v1/subscribers/bob/messages/" + w.bobs.ID + "/actions/primary",
					"/v1/subscribers/alice/messages/" + w.bobs.ID + "/actions/primary",
					"/v1/subscribers/alice/messages/" + w.foreign.ID + "/actions/primary"} {
					errorMessage(t, w.call(t, http.MethodPost, path, alice, `{"status":"done"}`), http.StatusNotFound)
				}
				_, codes := w.gql(t, alice, `mutation($id: ID!) { markMessageAction(subscriberId: "bob", messageId: $id, type: primary, status: done) { _id } }`,
					map[string]any{"id": w.bobs.ID})
				if len(codes) != 1 || codes[0] != "NOT_FOUND" {
					t.Errorf("GraphQL mark of bob's message: codes %v, want NOT_FOUND", codes)
				}
				if after := dbtest.LoadMessage(t, w.store, w.bobs.ID); after.ActionStatus != before.ActionStatus {
					t.Errorf("bob's message changed: %q -> %q", before.ActionStatus, after.ActionStatus)
				}
			})

			signed := func(secret string, clock time.Time, keyID string) string {
				s, err := session.NewSigner(func() time.Time { return clock }, []byte(secret))
				if err != nil {
					t.Fatal(err)
				}
				tok, _, err := s.Issue(models.Caller{EnvironmentID: w.env.ID, KeyID: keyID}, "alice", time.Hour)
				if err != nil {
					t.Fatal(err)
				}
				return "Bearer " + tok
			}
			t.Run("list200PreviousSecret", func(t *testing.T) {
				if got := ids(t, w.call(t, http.MethodGet, "/v1/messages", signed(previousSecret, time.Now(), w.keyID), "")); len(got) != 2 {
					t.Errorf("a token of the previous secret lists %v", got)
				}
			})
			for _, tt := range []struct {
				name, auth, says string
			}{
				{"list401Expired", signed(sessionSecret, time.Now().Add(-2*time.Hour), w.keyID), "expired"},
				{"list401Forged", signed(unrelatedSecret, time.Now(), w.keyID), "forged"},
				{"list401Malformed", "Bearer not.a.token", "malformed"},
				{"list401Tampered", alice[:len(alice)-4] + "AAAA", "forged"},
				{"list401UnknownKey", signed(sessionSecret, time.Now(), "67c2be400000000000000fff"), "revoked"},
			} {
				t.Run(tt.name, func(t *testing.T) {
					r := w.call(t, http.MethodGet, "/v1/messages", tt.auth, "")
					if msg := errorMessage(t, r, http.StatusUnauthorized); !strings.Contains(msg, tt.says) {
						t.Errorf("message %q does not say %q", msg, tt.says)
					}
					_, codes := w.gql(t, tt.auth, `{ messages { totalCount } }`, nil)
					if len(codes) != 1 || codes[0] != "UNAUTHENTICATED" {
						t.Errorf("GraphQL codes %v, want UNAUTHENTICATED", codes)
					}
				})
			}
			t.Run("list401RevokedKey", func(t *testing.T) {
				key, rec, err := w.store.CreateAPIKey(context.Background(), w.env.ID, "short-lived")
				if err != nil {
					t.Fatal(err)
				}
				r := w.call(t, http.MethodPost, "/v1/inbox/session", "ApiKey "+key, `{"subscriberId":"alice"}`)
				var s struct{ Token string }
				if err := json.Unmarshal(r.body, &s); err != nil || r.status != http.StatusCreated {
					t.Fatalf("session: %d %s", r.status, r.body)
				}
				if r := w.call(t, http.MethodGet, "/v1/messages", "Bearer "+s.Token, ""); r.status != http.StatusOK {
					t.Fatalf("before revoking: %d %s", r.status, r.body)
				}
				// Revoked through another store, as another instance or the CLI would.
				if err := w.store.RevokeAPIKey(context.Background(), rec.ID); err != nil {
					t.Fatal(err)
				}
				refusedWithinAuthTTL(t, func() int {
					r = w.call(t, http.MethodGet, "/v1/messages", "Bearer "+s.Token, "")
					return r.status
				})
				if msg := errorMessage(t, r, http.StatusUnauthorized); !strings.Contains(msg, "revoked") {
					t.Errorf("message %q does not say the key was revoked", msg)
				}
			})
		})
	}
}

// A subscriber has a rate limit of its own, all its sessions together, on top of its
// environment's: one busy person is refused without their neighbours noticing, and a new
// session does not bring a new allowance.
func TestSessionRateLimit(t *testing.T) {
	w := newSessionWorld(t, store.DialectSQLite, "--session-rate-limit", "0.01", "--session-rate-burst", "2")
	alice, bob := "Bearer "+w.token(t, "alice"), "Bearer "+w.token(t, "bob")
	aliceAgain := "Bearer " + w.token(t, "alice")
	for i := range 2 {
		if r := w.call(t, http.MethodGet, "/v1/messages", alice, ""); r.status != http.StatusOK || r.header.Get("RateLimit-Limit") != "2" {
			t.Fatalf("request %d: %d, RateLimit-Limit %q", i+1, r.status, r.header.Get("RateLimit-Limit"))
		}
	}
	r := w.call(t, http.MethodGet, "/v1/messages", alice, "")
	if msg := errorMessage(t, r, http.StatusTooManyRequests); !strings.Contains(msg, "for this subscriber (all its sessions together)") || r.header.Get("Retry-After") == "" {
		t.Errorf("third request: %q, Retry-After %q", msg, r.header.Get("Retry-After"))
	}
	if r := w.call(t, http.MethodGet, "/v1/messages", aliceAgain, ""); r.status != http.StatusTooManyRequests {
		t.Errorf("alice's other session was let through: %d", r.status)
	}
	if _, codes := w.gql(t, alice, `{ messages { totalCount } }`, nil); len(codes) != 1 || codes[0] != "RATE_LIMITED" {
		t.Errorf("GraphQL codes %v, want RATE_LIMITED", codes)
	}
	if r := w.call(t, http.MethodGet, "/v1/messages", bob, ""); r.status != http.StatusOK {
		t.Errorf("bob's session was refused with alice's: %d", r.status)
	}
	if r := w.call(t, http.MethodGet, "/v1/messages", "ApiKey "+w.key, ""); r.status != http.StatusOK {
		t.Errorf("the API key was refused with alice's session: %d", r.status)
	}
}

// The Authorization header's value never reaches the log, a token no more than a key.
func TestSessionTokenNotLogged(t *testing.T) {
	w := newSessionWorld(t, store.DialectSQLite)
	tok := w.token(t, "alice")
	w.call(t, http.MethodGet, "/v1/messages", "Bearer "+tok, "")
	if log := w.srv.stderr.String(); strings.Contains(log, tok) || strings.Contains(log, w.key) || !bytes.Contains([]byte(log), []byte("/v1/inbox/session")) {
		t.Errorf("the log holds a credential, or not the session request:\n%s", log)
	}
}

// A count whose filters the counters cannot answer reads messages row by row, once per
// such filter: each costs the caller a unit of its rate limit on top of the request's
// own, and when too few are left the count is refused before anything is read. Filters
// the counters answer cost nothing more.
func TestCountReadingRowsChargedPerFilter(t *testing.T) {
	w := newSessionWorld(t, store.DialectSQLite, "--session-rate-limit", "0.01", "--session-rate-burst", "40")
	alice := "Bearer " + w.token(t, "alice")
	// Alice's messages were created at dbtest.Base, 08:00 on the first of a month.
	monthStart := time.Date(dbtest.Base.Year(), dbtest.Base.Month(), 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	midMonth := dbtest.Base.Add(-time.Hour).UnixMilli()
	count := func(n int, createdGte int64) e2eReply {
		filters := make([]string, n)
		for i := range filters {
			filters[i] = fmt.Sprintf(`{"createdGte":%d}`, createdGte)
		}
		return w.call(t, http.MethodGet, "/v1/inbox/notifications/count?filters="+url.QueryEscape("["+strings.Join(filters, ",")+"]"), alice, "")
	}
	remaining := func(r e2eReply) string { return r.header.Get("RateLimit-Remaining") }
	wantCounts := func(r e2eReply, n, each int) {
		t.Helper()
		var body struct{ Data []struct{ Count int } }
		if r.status != http.StatusOK {
			t.Fatalf("count: %d %s", r.status, r.body)
		}
		if err := json.Unmarshal(r.body, &body); err != nil || len(body.Data) != n {
			t.Fatalf("count body %s: %v", r.body, err)
		}
		for i, c := range body.Data {
			if c.Count != each {
				t.Fatalf("filter %d counted %d, want %d", i, c.Count, each)
			}
		}
	}

	r := count(10, monthStart)
	wantCounts(r, 10, 2)
	if remaining(r) != "39" {
		t.Errorf("10 filters the counters answer left %s of 40, want 39: they cost nothing more", remaining(r))
	}
	wantCounts(count(10, midMonth), 10, 2)
	if r := w.call(t, http.MethodGet, "/v1/messages", alice, ""); remaining(r) != "27" {
		t.Errorf("after 10 filters reading rows, the next request left %s, want 27 (39 - 1 - 10 - 1)", remaining(r))
	}
	r = count(30, midMonth)
	if msg := errorMessage(t, r, http.StatusTooManyRequests); !strings.Contains(msg, "for this subscriber (all its sessions together)") {
		t.Errorf("30 filters reading rows with 26 units left: %q", msg)
	}
	if r := w.call(t, http.MethodGet, "/v1/messages", alice, ""); remaining(r) != "25" {
		t.Errorf("the refused count took its filters' units: %s left, want 25", remaining(r))
	}
}
