package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"messages/graph/gqlclient"
	"messages/models"
	"messages/models/dbtest"
	"messages/models/session"
	"messages/models/store"
)

// eventsQuery selects what the inbox shows of an event.
const eventsQuery = `subscription($s: String, $c: ChannelType, $after: String) {
  messageEvents(subscriberId: $s, channel: $c, after: $after) {
    kind cursor
    message { _id channel subscriber { subscriberId } cta { action { status result { type } } } }
  }
}`

// event is one messageEvents result as the tests read it.
type event struct {
	Kind, Cursor string
	ID, Status   string
	Subscriber   string
}

func readEvent(t *testing.T, s *gqlclient.Subscription, within time.Duration) event {
	t.Helper()
	select {
	case r, ok := <-s.Results():
		if !ok {
			t.Fatalf("stream ended: %v", s.Err())
		}
		if len(r.Errors) > 0 {
			t.Fatalf("event with errors: %+v", r.Errors)
		}
		var d struct {
			MessageEvents struct {
				Kind, Cursor string
				Message      struct {
					ID         string `json:"_id"`
					Subscriber struct{ SubscriberID string }
					CTA        struct {
						Action struct{ Status string }
					}
				}
			}
		}
		if err := json.Unmarshal(r.Data, &d); err != nil {
			t.Fatal(err)
		}
		e := d.MessageEvents
		return event{Kind: e.Kind, Cursor: e.Cursor, ID: e.Message.ID, Status: e.Message.CTA.Action.Status, Subscriber: e.Message.Subscriber.SubscriberID}
	case <-time.After(within):
		t.Fatalf("no event within %s", within)
	}
	return event{}
}

// expectQuiet fails if s delivers anything within d.
func expectQuiet(t *testing.T, s *gqlclient.Subscription, d time.Duration) {
	t.Helper()
	select {
	case r, ok := <-s.Results():
		if ok {
			t.Fatalf("unexpected event: %s %v", r.Data, r.Errors)
		}
	case <-time.After(d):
	}
}

func wsURL(base string) string { return "ws" + strings.TrimPrefix(base, "http") + "/graphql" }

func dialEvents(t *testing.T, base, auth string) *gqlclient.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := gqlclient.Dial(ctx, wsURL(base), nil, map[string]any{"Authorization": auth})
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func subscribeEvents(t *testing.T, c *gqlclient.Conn, vars map[string]any) *gqlclient.Subscription {
	t.Helper()
	s, err := c.Subscribe(context.Background(), gqlclient.Request{Query: eventsQuery, Variables: vars}, 64)
	if err != nil {
		t.Fatal(err)
	}
	// The subscription is registered when the server has run the resolver; a
	// round trip on the same socket orders it before what the test does next.
	ping, err := c.Subscribe(context.Background(), gqlclient.Request{Query: `{ __typename }`}, 1)
	if err != nil {
		t.Fatal(err)
	}
	for range ping.Results() {
	}
	return s
}

// markVia marks m through GraphQL on base and fails unless it succeeds.
func markVia(t *testing.T, base, key string, subscriberID, messageID, status string) {
	t.Helper()
	q := fmt.Sprintf(`mutation { markMessageAction(subscriberId: %q, messageId: %q, type: primary, status: %s) { _id } }`, subscriberID, messageID, status)
	if code, body := postGraphQL(t, base, key, q); code != http.StatusOK || strings.Contains(string(body), `"errors"`) {
		t.Fatalf("mark: %d %s", code, body)
	}
}

func TestMessageEvents(t *testing.T) {
	for _, dialect := range dbtest.Dialects {
		t.Run(dialect, func(t *testing.T) {
			w := newSessionWorld(t, dialect)
			alice := w.alice1.SubscriberID
			conn := dialEvents(t, w.srv.base, "ApiKey "+w.key)
			aliceEvents := subscribeEvents(t, conn, map[string]any{"s": "alice"})
			all := subscribeEvents(t, conn, nil)

			markVia(t, w.srv.base, w.key, "alice", w.alice1.ID, "done")
			got := readEvent(t, aliceEvents, 5*time.Second)
			if got.ID != w.alice1.ID || got.Kind != "updated" || got.Status != "done" || got.Subscriber != "alice" {
				t.Fatalf("mark event: %+v", got)
			}
			if e := readEvent(t, all, 5*time.Second); e.ID != w.alice1.ID {
				t.Fatalf("environment stream: %+v", e)
			}
			first := got.Cursor

			markVia(t, w.srv.base, w.key, "bob", w.bobs.ID, "done")
			if e := readEvent(t, all, 5*time.Second); e.ID != w.bobs.ID {
				t.Fatalf("environment stream: %+v", e)
			}
			raw := dbtest.RawMessage(t, w.store.DB(), w.env, alice, nil)
			got = readEvent(t, aliceEvents, 5*time.Second)
			if got.ID != raw || got.Kind != "created" {
				t.Fatalf("raw insert event (bob's mark must not reach alice): %+v", got)
			}

			// Resuming from the first event's cursor delivers what came after it for
			// alice (the raw insert), not the event it names, then continues live.
			resumed := subscribeEvents(t, dialEvents(t, w.srv.base, "ApiKey "+w.key), map[string]any{"s": "alice", "after": first})
			if e := readEvent(t, resumed, 5*time.Second); e.ID != raw {
				t.Fatalf("resumed: %+v", e)
			}
			expectQuiet(t, resumed, 500*time.Millisecond)
			markVia(t, w.srv.base, w.key, "alice", w.alice2.ID, "done")
			if e := readEvent(t, resumed, 5*time.Second); e.ID != w.alice2.ID {
				t.Fatalf("resumed, live: %+v", e)
			}

			// Operators see the feed on /metrics.
			_, metrics := get(t, w.srv.base+"/metrics", "")
			for _, want := range []string{`events_subscriptions 3\n`, `events_polls_total [1-9]`, `events_changes_total 4\n`, `events_delivered_total [1-9]`} {
				if !regexp.MustCompile(want).Match(metrics) {
					t.Errorf("/metrics lacks %s", want)
				}
			}
		})
	}
}

// Every way a client can be refused, and every source of events, on real ports: a second
// instance sharing the database, import in another process (the CLI), and SSE.
func TestMessageEventsAcrossInstancesAndTransports(t *testing.T) {
	for _, dialect := range dbtest.Dialects {
		t.Run(dialect, func(t *testing.T) {
			w := newSessionWorld(t, dialect)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()

			t.Run("refusals", func(t *testing.T) {
				for name, payload := range map[string]map[string]any{
					"no credential": nil,
					"bad key":       {"Authorization": "ApiKey " + strings.Repeat("0", 64)},
					"forged token":  {"Authorization": "Bearer " + strings.Repeat("a", 40)},
				} {
					_, err := gqlclient.Dial(ctx, wsURL(w.srv.base), nil, payload)
					var ce *gqlclient.CloseError
					if !errors.As(err, &ce) || ce.Code != 4403 || !strings.HasPrefix(ce.Reason, "Forbidden: ") {
						t.Errorf("%s: %v", name, err)
					}
				}
				// A browser page of a foreign origin may not open a socket at all.
				_, err := gqlclient.Dial(ctx, wsURL(w.srv.base), http.Header{"Origin": {"https://evil.example"}}, nil)
				if err == nil || !strings.Contains(err.Error(), "403") {
					t.Errorf("foreign origin: %v", err)
				}
				// A session reads only its subscriber.
				conn := dialEvents(t, w.srv.base, "Bearer "+w.token(t, "alice"))
				s, err := conn.Subscribe(ctx, gqlclient.Request{Query: eventsQuery, Variables: map[string]any{"s": "bob"}}, 1)
				if err != nil {
					t.Fatal(err)
				}
				r := <-s.Results()
				if len(r.Errors) != 1 || r.Errors[0].Code() != "FORBIDDEN" {
					t.Errorf("another subscriber: %+v", r)
				}
				// Cursors are bound to their filters and cannot be forged.
				s, _ = conn.Subscribe(ctx, gqlclient.Request{Query: eventsQuery, Variables: map[string]any{"after": "AQEAforged"}}, 1)
				if r := <-s.Results(); len(r.Errors) != 1 || r.Errors[0].Code() != "BAD_USER_INPUT" {
					t.Errorf("forged cursor: %+v", r)
				}
			})

			t.Run("session expiry", func(t *testing.T) {
				// A socket lives no longer than the token that opened it.
				signer, err := session.NewSigner(time.Now, []byte(sessionSecret))
				if err != nil {
					t.Fatal(err)
				}
				token, _, err := signer.Issue(models.Caller{KeyID: w.keyID, EnvironmentID: w.env.ID, OrganizationID: w.env.OrganizationID}, "alice", 2*time.Second)
				if err != nil {
					t.Fatal(err)
				}
				conn := dialEvents(t, w.srv.base, "Bearer "+token)
				s := subscribeEvents(t, conn, nil)
				done := make(chan error, 1)
				go func() { done <- conn.Err() }()
				select {
				case <-done:
				case <-time.After(10 * time.Second):
					t.Fatal("the socket outlived its session token")
				}
				if _, ok := <-s.Results(); ok {
					t.Error("the subscription still delivers")
				}
			})

			t.Run("session stream", func(t *testing.T) {
				// No subscriberId: the session's own.
				s := subscribeEvents(t, dialEvents(t, w.srv.base, "Bearer "+w.token(t, "alice")), nil)
				markVia(t, w.srv.base, w.key, "bob", w.bobs.ID, "pending")
				markVia(t, w.srv.base, w.key, "alice", w.alice2.ID, "pending")
				if e := readEvent(t, s, 5*time.Second); e.ID != w.alice2.ID {
					t.Fatalf("session stream got %+v", e)
				}
			})

			t.Run("second instance", func(t *testing.T) {
				other := start(t, "--rate-limit", "100000", "--rate-burst", "100000", "--session-secret", sessionSecret)
				s := subscribeEvents(t, dialEvents(t, w.srv.base, "ApiKey "+w.key), map[string]any{"s": "bob"})
				markVia(t, other.base, w.key, "bob", w.bobs.ID, "done")
				if e := readEvent(t, s, 5*time.Second); e.ID != w.bobs.ID || e.Status != "done" {
					t.Fatalf("mark on another instance: %+v", e)
				}
			})

			t.Run("import", func(t *testing.T) {
				s := subscribeEvents(t, dialEvents(t, w.srv.base, "ApiKey "+w.key), map[string]any{"s": "bob"})
				code, exported, stderr := runCLI(t, "", "export", "--environment-id", w.env.ID)
				if code != 0 {
					t.Fatalf("export: %s", stderr)
				}
				var line string
				for _, l := range strings.Split(exported, "\n") {
					if strings.Contains(l, w.bobs.ID) {
						line = l
					}
				}
				fresh := models.NewID(time.Now().Add(time.Hour))
				if code, _, stderr := runCLI(t, strings.Replace(line, w.bobs.ID, fresh, 1)+"\n", "import"); code != 0 {
					t.Fatalf("import: %s", stderr)
				}
				if e := readEvent(t, s, 5*time.Second); e.ID != fresh || e.Kind != "created" {
					t.Fatalf("import event: %+v", e)
				}
			})

			t.Run("sse", func(t *testing.T) {
				header := http.Header{"Authorization": {"ApiKey " + w.key}}
				s, err := gqlclient.SubscribeSSE(ctx, http.DefaultClient, w.srv.base+"/graphql", header,
					gqlclient.Request{Query: eventsQuery, Variables: map[string]any{"s": "alice"}}, 8)
				if err != nil {
					t.Fatal(err)
				}
				defer func() { _ = s.Stop(ctx) }()
				// The stream's headers come before the subscription is registered.
				time.Sleep(300 * time.Millisecond)
				markVia(t, w.srv.base, w.key, "alice", w.alice1.ID, "pending")
				if e := readEvent(t, s, 5*time.Second); e.ID != w.alice1.ID || e.Status != "pending" {
					t.Fatalf("sse: %+v", e)
				}
				_, err = gqlclient.SubscribeSSE(ctx, http.DefaultClient, w.srv.base+"/graphql", http.Header{"Authorization": {"ApiKey nope"}},
					gqlclient.Request{Query: eventsQuery}, 1)
				if err == nil || !strings.Contains(err.Error(), "status 401") {
					t.Fatalf("sse with a bad key: %v", err)
				}
			})
		})
	}
}

// A socket's connection_init counts against the environment's rate limit like a
// request: past the burst, sockets are closed with 1013 Try Again Later (which
// graphql-ws's client retries with back-off) and nothing else happens.
func TestMessageEventsRateLimited(t *testing.T) {
	w := newSessionWorld(t, store.DialectSQLite, "--rate-limit", "0.001", "--rate-burst", "3")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var refused *gqlclient.CloseError
	for i := range 5 {
		c, err := gqlclient.Dial(ctx, wsURL(w.srv.base), nil, map[string]any{"Authorization": "ApiKey " + w.key})
		if err == nil {
			t.Cleanup(func() { _ = c.Close() })
			continue
		}
		if !errors.As(err, &refused) || refused.Code != 1013 || !strings.HasPrefix(refused.Reason, "Try Again Later: rate limit exceeded for this environment") {
			t.Fatalf("socket %d: %v", i+1, err)
		}
		if i < 3 {
			t.Fatalf("socket %d refused within the burst of 3: %v", i+1, err)
		}
	}
	if refused == nil {
		t.Fatal("no socket was refused past the burst")
	}
}

// An idle subscription is a registration with the feed, and its socket state the poller
// reads, not goroutines: once the sockets are open and subscribed, no goroutine of the
// transport's runs, yet every subscription gets each event once, and one the client
// completes is uncounted at once.
func TestIdleSubscriptionsHoldNoGoroutine(t *testing.T) {
	for _, dialect := range dbtest.Dialects {
		t.Run(dialect, func(t *testing.T) {
			w := newSessionWorld(t, dialect)
			const sockets = 20
			var subs []*gqlclient.Subscription
			for range sockets {
				subs = append(subs, subscribeEvents(t, dialEvents(t, w.srv.base, "ApiKey "+w.key), map[string]any{"s": "alice"}))
			}
			var held []string
			for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
				if held = socketGoroutines(); len(held) == 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%d idle sockets hold %d goroutines of the transport's; want none:\n%s", sockets, len(held), strings.Join(held, "\n\n"))
				}
			}

			markVia(t, w.srv.base, w.key, "alice", w.alice1.ID, "done")
			for i, s := range subs {
				if e := readEvent(t, s, 5*time.Second); e.ID != w.alice1.ID || e.Status != "done" {
					t.Fatalf("subscription %d: %+v", i, e)
				}
			}
			expectQuiet(t, subs[0], 300*time.Millisecond)
			for i, s := range subs[1:] {
				select {
				case r := <-s.Results():
					t.Fatalf("subscription %d: a second event %s", i+1, r.Data)
				default:
				}
			}

			if err := subs[0].Stop(context.Background()); err != nil {
				t.Fatal(err)
			}
			want := fmt.Sprintf("events_subscriptions %d\n", sockets-1)
			for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
				if _, metrics := get(t, w.srv.base+"/metrics", ""); strings.Contains(string(metrics), want) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("/metrics lacks %q after a client completed its subscription", want)
				}
			}
		})
	}
}

// An idle subscription over an event stream holds no goroutine either: its connection is
// on the poller once the stream began, yet every stream gets each event, and one whose
// client leaves is uncounted.
func TestIdleEventStreamsHoldNoGoroutine(t *testing.T) {
	w := newSessionWorld(t, store.DialectSQLite)
	const streams = 10
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var subs []*gqlclient.Subscription
	var leave context.CancelFunc
	for i := range streams {
		sctx := ctx
		if i == 0 {
			sctx, leave = context.WithCancel(ctx)
		}
		s, err := gqlclient.SubscribeSSE(sctx, http.DefaultClient, w.srv.base+"/graphql", http.Header{"Authorization": {"ApiKey " + w.key}},
			gqlclient.Request{Query: eventsQuery, Variables: map[string]any{"s": "alice"}}, 1)
		if err != nil {
			t.Fatal(err)
		}
		subs = append(subs, s)
	}
	want := fmt.Sprintf("events_subscriptions %d\n", streams)
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		_, metrics := get(t, w.srv.base+"/metrics", "")
		held := streamGoroutines()
		if strings.Contains(string(metrics), want) && len(held) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d idle streams: %d goroutines serve them, want none:\n%s", streams, len(held), strings.Join(held, "\n\n"))
		}
	}
	markVia(t, w.srv.base, w.key, "alice", w.alice1.ID, "done")
	for i, s := range subs {
		if e := readEvent(t, s, 5*time.Second); e.ID != w.alice1.ID || e.Status != "done" {
			t.Fatalf("stream %d: %+v", i, e)
		}
	}
	leave()
	want = fmt.Sprintf("events_subscriptions %d\n", streams-1)
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, metrics := get(t, w.srv.base+"/metrics", ""); strings.Contains(string(metrics), want) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/metrics lacks %q after a stream's client left", want)
		}
	}
}

// socketGoroutines returns the stacks of the goroutines running the GraphQL WebSocket
// transport's code in this process (the server under test runs in it), but its pinger.
func socketGoroutines() []string {
	return goroutinesRunning("graph/transport.(*socket)")
}

// streamGoroutines returns the stacks of the goroutines serving an event stream of the
// GraphQL transport in this process: its handler, or one of its drains.
func streamGoroutines() []string {
	return goroutinesRunning("graph/transport.EventStream.", "graph/transport.(*polledStream)")
}

// goroutinesRunning returns the stacks of this process's goroutines with a frame that
// contains one of the names.
func goroutinesRunning(names ...string) []string {
	buf := make([]byte, 16<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var held []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if slices.ContainsFunc(names, func(name string) bool { return strings.Contains(g, name) }) {
			held = append(held, g)
		}
	}
	return held
}
