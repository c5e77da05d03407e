package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"messages/models"
	"messages/models/dbtest"
	"messages/models/session"
)

// inboxEvent is one message of the inbox socket as the platform's client parses it.
type inboxEvent struct {
	Event string `json:"event"`
	Data  struct {
		Message map[string]any `json:"message"`
		Counts  *struct {
			Total    int            `json:"total"`
			Severity map[string]int `json:"severity"`
		} `json:"counts"`
		UnseenCount *int `json:"unseenCount"`
	} `json:"data"`
	// raw is the message as sent; "pong" is not JSON.
	raw string
}

// inboxClient is one open inbox socket whose messages a goroutine reads into events.
type inboxClient struct {
	conn   *websocket.Conn
	events chan inboxEvent
	// closed receives how the socket ended: a websocket.CloseError when the server closed it.
	closed chan error
}

func inboxSocketURL(base, token string) string {
	return "ws" + strings.TrimPrefix(base, "http") + "/v1/inbox/socket?token=" + url.QueryEscape(token)
}

// dialInbox opens the socket as the client does: the token in the query, no subprotocol.
// It returns the refusal's status when the upgrade is refused.
func dialInbox(t *testing.T, base, token string, header http.Header) (*inboxClient, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, res, err := websocket.Dial(ctx, inboxSocketURL(base, token), &websocket.DialOptions{HTTPHeader: header})
	if err != nil {
		if res != nil {
			return nil, res.StatusCode
		}
		t.Fatalf("dial: %v", err)
	}
	c := &inboxClient{conn: conn, events: make(chan inboxEvent, 256), closed: make(chan error, 1)}
	t.Cleanup(func() { _ = conn.CloseNow() })
	go func() {
		for {
			_, b, err := conn.Read(context.Background())
			if err != nil {
				c.closed <- err
				close(c.events)
				return
			}
			e := inboxEvent{raw: string(b)}
			if e.raw != "pong" {
				if err := json.Unmarshal(b, &e); err != nil {
					c.closed <- err
					close(c.events)
					return
				}
			}
			c.events <- e
		}
	}()
	return c, http.StatusSwitchingProtocols
}

// mustDialInbox opens the socket and fails unless it opened.
func mustDialInbox(t *testing.T, base, token string) *inboxClient {
	t.Helper()
	c, status := dialInbox(t, base, token, nil)
	if c == nil {
		t.Fatalf("socket refused with %d", status)
	}
	return c
}

// next returns the socket's next message, failing after within.
func (c *inboxClient) next(t *testing.T, within time.Duration) inboxEvent {
	t.Helper()
	select {
	case e, ok := <-c.events:
		if !ok {
			t.Fatalf("socket closed: %v", <-c.closed)
		}
		return e
	case <-time.After(within):
		t.Fatalf("nothing within %s", within)
	}
	return inboxEvent{}
}

// quiet fails if the socket sends anything within d.
func (c *inboxClient) quiet(t *testing.T, d time.Duration) {
	t.Helper()
	select {
	case e, ok := <-c.events:
		if ok {
			t.Fatalf("unexpected message: %s %v", e.Event, e.raw)
		}
	case <-time.After(d):
	}
}

// closedWith waits for the server to close the socket and returns its close code and
// reason.
func (c *inboxClient) closedWith(t *testing.T, within time.Duration) (websocket.StatusCode, string) {
	t.Helper()
	deadline := time.After(within)
	for {
		select {
		case _, ok := <-c.events:
			if ok {
				continue
			}
			var ce websocket.CloseError
			if err := <-c.closed; errors.As(err, &ce) {
				return ce.Code, ce.Reason
			} else {
				t.Fatalf("socket ended without a close frame: %v", err)
			}
		case <-deadline:
			t.Fatalf("socket still open after %s", within)
		}
	}
}

// unreadInApp counts, with COUNT(*) and not the counters, the subscriber's in-app
// messages not read, archived or snoozed, and those not seen, archived or snoozed.
func unreadInApp(t *testing.T, w *sessionWorld, subscriberRowID string) (unread, unseen int) {
	t.Helper()
	db := w.store.DB()
	base := "environment_id = ? AND subscriber_id = ? AND channel = 'in_app' AND archived = ? AND snoozed_until IS NULL"
	var n int64
	if err := db.Table("messages").Where(base+" AND `read` = ?", w.env.ID, subscriberRowID, false, false).Count(&n).Error; err != nil {
		t.Fatal(err)
	}
	var m int64
	if err := db.Table("messages").Where(base+" AND seen = ?", w.env.ID, subscriberRowID, false, false).Count(&m).Error; err != nil {
		t.Fatal(err)
	}
	return int(n), int(m)
}

// expectCounts reads the two count events a change sends and checks them against want.
func (c *inboxClient) expectCounts(t *testing.T, unread, unseen int) {
	t.Helper()
	e := c.next(t, 3*time.Second)
	if e.Event != "unread_count_changed" || e.Data.Counts == nil || e.Data.Counts.Total != unread ||
		e.Data.Counts.Severity["none"] != unread || len(e.Data.Counts.Severity) != 4 {
		t.Fatalf("want unread_count_changed with %d, got %s", unread, e.raw)
	}
	e = c.next(t, 3*time.Second)
	if e.Event != "unseen_count_changed" || e.Data.UnseenCount == nil || *e.Data.UnseenCount != unseen {
		t.Fatalf("want unseen_count_changed with %d, got %s", unseen, e.raw)
	}
}

// The platform's inbox socket on a real server: what a raw INSERT, an import and a raw
// UPDATE send, to whom, how fast, and every way a socket is refused or ended.
func TestInboxSocket(t *testing.T) {
	for _, dialect := range dbtest.Dialects {
		t.Run(dialect, func(t *testing.T) {
			w := newSessionWorld(t, dialect, "--inbox-sockets-per-subscriber", "4")
			aliceRow := w.alice1.SubscriberID
			alice := mustDialInbox(t, w.srv.base, w.token(t, "alice"))
			bob := mustDialInbox(t, w.srv.base, w.token(t, "bob"))
			// The other environment's alice, through a session of its own key.
			otherKey, _, err := w.store.CreateAPIKey(context.Background(), w.foreign.EnvironmentID, "elsewhere")
			if err != nil {
				t.Fatal(err)
			}
			r := w.call(t, http.MethodPost, "/v1/inbox/session", "ApiKey "+otherKey, `{"subscriberId":"alice"}`)
			var s struct{ Token string }
			if err := json.Unmarshal(r.body, &s); err != nil || s.Token == "" {
				t.Fatalf("session in the other environment: %d %s", r.status, r.body)
			}
			foreign := mustDialInbox(t, w.srv.base, s.Token)

			t.Run("ping", func(t *testing.T) {
				if err := alice.conn.Write(context.Background(), websocket.MessageText, []byte("ping")); err != nil {
					t.Fatal(err)
				}
				if e := alice.next(t, 3*time.Second); e.raw != "pong" {
					t.Fatalf("ping answered %q", e.raw)
				}
			})

			t.Run("rawInsert", func(t *testing.T) {
				inserted := time.Now()
				id := dbtest.RawMessage(t, w.store.DB(), w.env, aliceRow, nil)
				e := alice.next(t, 3*time.Second)
				latency := time.Since(inserted)
				if e.Event != "notification_received" || e.Data.Message["_id"] != id {
					t.Fatalf("want notification_received of %s, got %s", id, e.raw)
				}
				if latency > time.Second {
					t.Errorf("the event came %s after the INSERT, want within a second", latency)
				}
				// content is the body the client shows: the row has no text block, so its title.
				m := e.Data.Message
				cta, _ := m["cta"].(map[string]any)
				action, _ := cta["action"].(map[string]any)
				buttons, _ := action["buttons"].([]any)
				if len(buttons) != 1 || m["channel"] != "in_app" || m["read"] != false || m["content"] != "Inserted by another writer" ||
					m["transactionId"] != "raw-txn" || m["severity"] != "none" {
					t.Errorf("message as sent: %s", e.raw)
				}
				if sub, _ := m["subscriber"].(map[string]any); sub["subscriberId"] != "alice" {
					t.Errorf("message's subscriber: %v", m["subscriber"])
				}
				unread, unseen := unreadInApp(t, w, aliceRow)
				if unread != 3 {
					t.Fatalf("COUNT(*) says %d unread, want alice's 2 and the new one", unread)
				}
				alice.expectCounts(t, unread, unseen)
				// Another subscriber's, another environment's: nothing.
				bob.quiet(t, 1500*time.Millisecond)
				foreign.quiet(t, 0)
			})

			t.Run("otherSubscriberAndEnvironment", func(t *testing.T) {
				dbtest.RawMessage(t, w.store.DB(), w.env, w.bobs.SubscriberID, nil)
				other := &models.Environment{ID: w.foreign.EnvironmentID, OrganizationID: w.foreign.OrganizationID}
				foreignID := dbtest.RawMessage(t, w.store.DB(), other, w.foreign.SubscriberID, nil)
				if e := bob.next(t, 3*time.Second); e.Event != "notification_received" {
					t.Fatalf("bob: %s", e.raw)
				}
				if e := foreign.next(t, 3*time.Second); e.Event != "notification_received" || e.Data.Message["_id"] != foreignID {
					t.Fatalf("the other environment's alice: %s", e.raw)
				}
				bob.expectCounts(t, 2, 2)
				foreign.expectCounts(t, 2, 2)
				alice.quiet(t, 1500*time.Millisecond)
			})

			t.Run("rawUpdate", func(t *testing.T) {
				// Read by another writer: the counts move, nothing is new.
				if err := w.store.DB().Exec("UPDATE messages SET `read` = ?, seen = ? WHERE id = ?", true, true, w.alice1.ID).Error; err != nil {
					t.Fatal(err)
				}
				unread, unseen := unreadInApp(t, w, aliceRow)
				alice.expectCounts(t, unread, unseen)
				if unread != 2 {
					t.Errorf("COUNT(*) says %d unread after the read", unread)
				}
			})

			t.Run("import", func(t *testing.T) {
				code, exported, stderr := runCLI(t, "", "export", "--environment-id", w.env.ID)
				if code != 0 {
					t.Fatalf("export: %s", stderr)
				}
				var line string
				for _, l := range strings.Split(exported, "\n") {
					if strings.Contains(l, w.alice2.ID) {
						line = l
					}
				}
				fresh := models.NewID(time.Now().Add(time.Hour))
				if code, _, stderr := runCLI(t, strings.Replace(line, w.alice2.ID, fresh, 1)+"\n", "import"); code != 0 {
					t.Fatalf("import: %s", stderr)
				}
				if e := alice.next(t, 5*time.Second); e.Event != "notification_received" || e.Data.Message["_id"] != fresh {
					t.Fatalf("import: %s", e.raw)
				}
				unread, unseen := unreadInApp(t, w, aliceRow)
				alice.expectCounts(t, unread, unseen)
			})

			t.Run("refusedBeforeUpgrade", func(t *testing.T) {
				for name, token := range map[string]string{
					"no token":     "",
					"forged token": strings.Repeat("a", 40),
					"API key":      w.key,
				} {
					if c, status := dialInbox(t, w.srv.base, token, nil); c != nil || status != http.StatusUnauthorized {
						t.Errorf("%s: %d, want 401", name, status)
					}
				}
				// The refusal's body does not quote the token it refused.
				forged := strings.Repeat("b", 40)
				req, err := http.NewRequest(http.MethodGet, w.srv.base+"/v1/inbox/socket?token="+forged, nil)
				if err != nil {
					t.Fatal(err)
				}
				for k, v := range map[string]string{"Connection": "Upgrade", "Upgrade": "websocket",
					"Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="} {
					req.Header.Set(k, v)
				}
				res, err := e2eClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(res.Body)
				res.Body.Close()
				if res.StatusCode != http.StatusUnauthorized || strings.Contains(string(body), forged) || !strings.Contains(string(body), `"path":"/v1/inbox/socket"`) {
					t.Errorf("refused upgrade: %d %s", res.StatusCode, body)
				}
				// An API key in the header is not a subscriber's.
				if c, status := dialInbox(t, w.srv.base, "", http.Header{"Authorization": {"ApiKey " + w.key}}); c != nil || status != http.StatusForbidden {
					t.Errorf("API key: %d, want 403", status)
				}
				// A page of a foreign origin may not open it.
				if c, status := dialInbox(t, w.srv.base, w.token(t, "alice"), http.Header{"Origin": {"https://evil.example"}}); c != nil || status != http.StatusForbidden {
					t.Errorf("foreign origin: %d, want 403", status)
				}
				// Not an upgrade.
				r := w.call(t, http.MethodGet, "/v1/inbox/socket", "Bearer "+w.token(t, "alice"), "")
				if r.status != http.StatusUpgradeRequired || !strings.Contains(string(r.body), `"statusCode":426`) {
					t.Errorf("plain GET: %d %s", r.status, r.body)
				}
			})

			t.Run("perSubscriberCap", func(t *testing.T) {
				token := w.token(t, "dave")
				for range 4 {
					mustDialInbox(t, w.srv.base, token)
				}
				if c, status := dialInbox(t, w.srv.base, token, nil); c != nil || status != http.StatusTooManyRequests {
					t.Errorf("a fifth socket: %d, want 429", status)
				}
			})

			t.Run("rateLimitOnConnect", func(t *testing.T) {
				// Each connect takes a token of its subscriber's bucket (burst 60, 10 a second).
				token := w.token(t, "carol")
				for i := range 200 {
					c, status := dialInbox(t, w.srv.base, token, nil)
					if c != nil {
						_ = c.conn.Close(websocket.StatusNormalClosure, "")
						<-c.closed
						continue
					}
					if status != http.StatusTooManyRequests {
						t.Fatalf("connect %d: %d", i, status)
					}
					r := w.call(t, http.MethodGet, "/v1/inbox/socket", "Bearer "+token, "")
					if r.status == http.StatusTooManyRequests && strings.Contains(string(r.body), "rate limit") {
						return
					}
				}
				t.Error("200 connects in a row were never rate limited")
			})

			t.Run("sessionExpiry", func(t *testing.T) {
				signer, err := session.NewSigner(time.Now, []byte(sessionSecret))
				if err != nil {
					t.Fatal(err)
				}
				token, _, err := signer.Issue(models.Caller{KeyID: w.keyID, EnvironmentID: w.env.ID, OrganizationID: w.env.OrganizationID}, "alice", 2*time.Second)
				if err != nil {
					t.Fatal(err)
				}
				c := mustDialInbox(t, w.srv.base, token)
				code, reason := c.closedWith(t, 10*time.Second)
				if code != 4403 || !strings.HasPrefix(reason, "Forbidden: ") || !strings.Contains(reason, "expired") {
					t.Errorf("closed with %d %q", code, reason)
				}
			})

			t.Run("keyRevoked", func(t *testing.T) {
				key, rec, err := w.store.CreateAPIKey(context.Background(), w.env.ID, "revoked soon")
				if err != nil {
					t.Fatal(err)
				}
				r := w.call(t, http.MethodPost, "/v1/inbox/session", "ApiKey "+key, `{"subscriberId":"alice"}`)
				var s struct{ Token string }
				if err := json.Unmarshal(r.body, &s); err != nil || s.Token == "" {
					t.Fatalf("session: %d %s", r.status, r.body)
				}
				c := mustDialInbox(t, w.srv.base, s.Token)
				// Revoked through another store, as another instance or the CLI would.
				if err := w.store.RevokeAPIKey(context.Background(), rec.ID); err != nil {
					t.Fatal(err)
				}
				code, reason := c.closedWith(t, 10*time.Second)
				if code != 4403 || !strings.Contains(reason, "revoked") {
					t.Errorf("closed with %d %q", code, reason)
				}
			})
		})
	}
}

// How long the badge takes to move after a plain INSERT by another writer: 20 inserts,
// each timed from the INSERT's return to the unread_count_changed that counts it.
// docs/inbox.md has the figures.
func TestInboxSocketBadgeLatency(t *testing.T) {
	w := newSessionWorld(t, "mysql")
	alice := mustDialInbox(t, w.srv.base, w.token(t, "alice"))
	unread, _ := unreadInApp(t, w, w.alice1.SubscriberID)
	var took []time.Duration
	for range 20 {
		dbtest.RawMessage(t, w.store.DB(), w.env, w.alice1.SubscriberID, nil)
		inserted := time.Now()
		unread++
		for {
			e := alice.next(t, 3*time.Second)
			if e.Event == "unread_count_changed" {
				if e.Data.Counts.Total != unread {
					t.Fatalf("badge says %d, want %d", e.Data.Counts.Total, unread)
				}
				took = append(took, time.Since(inserted))
				break
			}
		}
		// Apart, and at varying phases of the feed's poll.
		time.Sleep(time.Duration(50+len(took)*7%60) * time.Millisecond)
	}
	slices.Sort(took)
	t.Logf("badge after a raw INSERT, %d inserts: median %s, p90 %s, max %s", len(took),
		took[len(took)/2].Round(time.Millisecond), took[len(took)*9/10].Round(time.Millisecond), took[len(took)-1].Round(time.Millisecond))
	if took[len(took)-1] > time.Second {
		t.Errorf("the badge took %s, want within a second", took[len(took)-1])
	}
}
