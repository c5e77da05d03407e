package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"messages/graph/gqlclient"
	"messages/models"
	"messages/models/dbtest"
	"messages/models/session"
	"messages/models/store"
)

// The hostile suite: every guard a request passes holds on every door (a request, each
// message of a WebSocket, an event stream), tried as a hostile client would on the real
// server, in production mode, on MariaDB (docs/reliability.md, "Every door").

// doorsWorld is a sessionWorld on MariaDB with a second key of its tenant, the one the
// tests revoke, and a key of another tenant, whose requests must stay unaffected.
type doorsWorld struct {
	*sessionWorld
	// spare is a second key of the tenant, and spareID its id.
	spare, spareID string
	// otherKey is an API key of another tenant.
	otherKey string
}

func newDoorsWorld(t *testing.T, serveArgs ...string) *doorsWorld {
	t.Helper()
	w := &doorsWorld{sessionWorld: newSessionWorld(t, store.DialectMySQL, serveArgs...)}
	ctx := context.Background()
	spare, rec, err := w.store.CreateAPIKey(ctx, w.env.ID, "spare")
	if err != nil {
		t.Fatal(err)
	}
	w.spare, w.spareID = spare, rec.ID
	if w.otherKey, _, err = w.store.CreateAPIKey(ctx, w.foreign.EnvironmentID, "other"); err != nil {
		t.Fatal(err)
	}
	return w
}

// closedWith waits for c to end and checks how: code, and a reason containing reason.
func closedWith(t *testing.T, c *gqlclient.Conn, within time.Duration, code int, reason string) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- c.Err() }()
	select {
	case err := <-done:
		var ce *gqlclient.CloseError
		if !errors.As(err, &ce) || ce.Code != code || !strings.Contains(ce.Reason, reason) {
			t.Fatalf("socket ended with %v, want close %d with a reason containing %q", err, code, reason)
		}
	case <-time.After(within):
		t.Fatalf("socket still open after %s, want close %d (%s)", within, code, reason)
	}
}

// streamEndsWith waits for s to deliver a last result whose only error has code, then end.
func streamEndsWith(t *testing.T, s *gqlclient.Subscription, within time.Duration, code, message string) {
	t.Helper()
	deadline := time.After(within)
	for {
		select {
		case r, ok := <-s.Results():
			if !ok {
				t.Fatalf("stream ended without an error event: %v", s.Err())
			}
			if len(r.Errors) == 0 {
				continue // an event of the stream's own
			}
			if len(r.Errors) != 1 || r.Errors[0].Code() != code || !strings.Contains(r.Errors[0].Message, message) {
				t.Fatalf("last event's errors %+v, want one %s containing %q", r.Errors, code, message)
			}
			select {
			case _, ok := <-s.Results():
				if ok {
					t.Fatal("the stream went on after its error event")
				}
			case <-time.After(5 * time.Second):
				t.Fatal("the stream did not end after its error event")
			}
			return
		case <-deadline:
			t.Fatalf("stream still delivering after %s, want an error event %s", within, code)
		}
	}
}

// subscribeSSE opens messageEvents as an event stream with the Authorization auth.
func subscribeSSE(t *testing.T, base, auth string) *gqlclient.Subscription {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	s, err := gqlclient.SubscribeSSE(ctx, http.DefaultClient, base+"/graphql", http.Header{"Authorization": {auth}},
		gqlclient.Request{Query: eventsQuery, Variables: map[string]any{"s": "alice"}}, 16)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Stop(context.Background()) })
	return s
}

// markQuery marks alice's first message with status.
func (w *doorsWorld) markQuery(status string) string {
	return fmt.Sprintf(`mutation { markMessageAction(subscriberId: "alice", messageId: %q, type: primary, status: %s) { _id cta { action { status } } } }`, w.alice1.ID, status)
}

// actionStatus is alice's first message's action status as stored.
func (w *doorsWorld) actionStatus(t *testing.T) string {
	t.Helper()
	return string(dbtest.LoadMessage(t, w.store, w.alice1.ID).ActionStatus)
}

// operation runs one operation over c and returns its results and how it ended.
func operation(t *testing.T, c *gqlclient.Conn, req gqlclient.Request) ([]gqlclient.Result, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := c.Subscribe(ctx, req, 4)
	if err != nil {
		return nil, err
	}
	var results []gqlclient.Result
	for {
		select {
		case r, ok := <-s.Results():
			if !ok {
				return results, s.Err()
			}
			results = append(results, r)
		case <-ctx.Done():
			t.Fatalf("operation did not end: %s", req.Query)
		}
	}
}

// A key revoked (by the CLI, as an operator does) loses every socket and stream it
// opened, and those of the sessions it issued, within 5 s: sockets close with 4403 and
// the reason, streams end with an error event; a mutation sent after changes nothing.
// The tenant's other key keeps its socket.
func TestDoorsRevokedKeyEndsSocketsAndStreams(t *testing.T) {
	w := newDoorsWorld(t)
	kept := dialEvents(t, w.srv.base, "ApiKey "+w.key)
	keptEvents := subscribeEvents(t, kept, map[string]any{"s": "alice"})
	socket := dialEvents(t, w.srv.base, "ApiKey "+w.spare)
	subscribeEvents(t, socket, nil)
	idle := dialEvents(t, w.srv.base, "ApiKey "+w.spare)
	stream := subscribeSSE(t, w.srv.base, "ApiKey "+w.spare)
	var session struct{ Token string }
	if r := w.call(t, http.MethodPost, "/v1/inbox/session", "ApiKey "+w.spare, `{"subscriberId": "alice"}`); r.status != http.StatusCreated {
		t.Fatalf("session: %d %s", r.status, r.body)
	} else if err := json.Unmarshal(r.body, &session); err != nil {
		t.Fatal(err)
	}
	sessionSocket := dialEvents(t, w.srv.base, "Bearer "+session.Token)
	subscribeEvents(t, sessionSocket, nil)
	sessionStream := subscribeSSE(t, w.srv.base, "Bearer "+session.Token)
	before := w.actionStatus(t)

	if code, _, stderr := runCLI(t, "", "apikey", "revoke", w.spareID); code != 0 {
		t.Fatalf("apikey revoke: %s", stderr)
	}
	revoked := time.Now()
	closedWith(t, socket, 5*time.Second, 4403, "API key was revoked")
	closedWith(t, idle, 5*time.Second, 4403, "API key was revoked")
	closedWith(t, sessionSocket, 5*time.Second, 4403, "the API key that issued it was revoked")
	streamEndsWith(t, stream, 5*time.Second-time.Since(revoked), "UNAUTHENTICATED", "API key was revoked")
	streamEndsWith(t, sessionStream, 5*time.Second, "UNAUTHENTICATED", "the API key that issued it was revoked")
	t.Logf("every door of the revoked key closed %s after the revocation", time.Since(revoked).Round(time.Millisecond))

	if _, err := operation(t, idle, gqlclient.Request{Query: w.markQuery("done")}); err == nil {
		t.Error("a mutation over the revoked key's socket was sent and answered")
	}
	if after := w.actionStatus(t); after != before {
		t.Errorf("the message changed after the revocation: %s -> %s", before, after)
	}
	// The other key's socket is untouched.
	markVia(t, w.srv.base, w.key, "alice", w.alice2.ID, "pending")
	if e := readEvent(t, keptEvents, 5*time.Second); e.ID != w.alice2.ID {
		t.Fatalf("the other key's socket got %+v", e)
	}
}

// A session's socket and event stream end within seconds of the token's expiry, with
// the reason: 4403 "session expired", and an error event on the stream.
func TestDoorsSessionExpiryEndsStreams(t *testing.T) {
	w := newDoorsWorld(t)
	signer, err := session.NewSigner(time.Now, []byte(sessionSecret))
	if err != nil {
		t.Fatal(err)
	}
	token, expires, err := signer.Issue(models.Caller{KeyID: w.keyID, EnvironmentID: w.env.ID, OrganizationID: w.env.OrganizationID}, "alice", 3*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	socket := dialEvents(t, w.srv.base, "Bearer "+token)
	subscribeEvents(t, socket, nil)
	stream := subscribeSSE(t, w.srv.base, "Bearer "+token)
	closedWith(t, socket, time.Until(expires)+5*time.Second, 4403, "Forbidden: session expired")
	streamEndsWith(t, stream, time.Until(expires)+5*time.Second, "UNAUTHENTICATED", "session expired")
	if late := time.Since(expires); late > 5*time.Second {
		t.Errorf("the session's doors closed %s after its expiry, want within 5 s", late)
	}
}

// Over one socket no more operations run than the rate limit allows: each subscribe
// takes a token, a refusal is a RATE_LIMITED error for that operation and the socket
// stays open, however many the client sends past the limit. Another tenant's requests
// meanwhile all succeed.
func TestDoorsRateLimitOverOneSocket(t *testing.T) {
	const rate, burst = 5, 10
	w := newDoorsWorld(t, "--rate-limit", fmt.Sprint(rate), "--rate-burst", fmt.Sprint(burst))
	other := func() {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, w.srv.base+"/v1/messages?limit=1", nil)
		req.Header.Set("Authorization", "ApiKey "+w.otherKey)
		r, err := e2eClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, r.Body)
		r.Body.Close()
		if r.StatusCode != http.StatusOK {
			t.Fatalf("another tenant's request answered %d during the flood", r.StatusCode)
		}
	}
	query := gqlclient.Request{Query: `{ messages(limit: 1) { totalCount } }`}
	rateLimited := func(err error) bool {
		var refused *gqlclient.OperationError
		return errors.As(err, &refused) && len(refused.Errors) == 1 && refused.Errors[0].Code() == "RATE_LIMITED"
	}
	// connection_init takes a token of the burst, as a request.
	c := dialEvents(t, w.srv.base, "ApiKey "+w.key)
	start := time.Now()
	ran := 0
	for {
		res, err := operation(t, c, query)
		if rateLimited(err) {
			break
		}
		if err != nil || len(res) != 1 || len(res[0].Errors) != 0 {
			t.Fatalf("operation %d: %v %+v", ran+1, err, res)
		}
		if ran++; ran > 2*burst {
			t.Fatalf("%d operations ran over one socket in %s with a burst of %d", ran, time.Since(start), burst)
		}
	}
	if allowed := burst - 1 + int(float64(rate)*time.Since(start).Seconds()) + 1; ran > allowed {
		t.Errorf("%d operations ran over one socket in %s; the limit allows %d", ran, time.Since(start).Round(time.Millisecond), allowed)
	}
	other()
	// A client that keeps sending past the refusals gets a refusal each (or an answer, as
	// tokens come back), and keeps its socket.
	start = time.Now()
	answered := 0
	for range 30 {
		_, err := operation(t, c, query)
		switch {
		case err == nil:
			answered++
		case !rateLimited(err):
			t.Fatalf("past the rate limit: %v", err)
		}
	}
	if allowed := int(float64(rate)*time.Since(start).Seconds()) + 1; answered > allowed {
		t.Errorf("%d of 30 operations past the rate limit ran in %s; the limit allows %d", answered, time.Since(start).Round(time.Millisecond), allowed)
	}
	other()
	// A client that waits gets its tokens back, on the same socket.
	time.Sleep(time.Second / rate * 3)
	if res, err := operation(t, c, gqlclient.Request{Query: `{ __typename }`}); err != nil || len(res) != 1 {
		t.Errorf("after the wait: %v %+v", err, res)
	}
}

// Over a socket a mutation passes the deadline and the idempotency key a POST passes: a
// mark stuck on a lock is answered SERVICE_UNAVAILABLE at the deadline and rolled back; a
// mark with extensions.idempotencyKey runs once, its retry replays the stored answer, and
// the key reused for another mutation is refused.
func TestDoorsMutationGuardsOverSocket(t *testing.T) {
	w := newDoorsWorld(t, "--request-timeout", "1s")
	c := dialEvents(t, w.srv.base, "ApiKey "+w.key)

	t.Run("deadline", func(t *testing.T) {
		before := w.actionStatus(t)
		release := holdRowLock(t, w.store, w.alice1.ID)
		start := time.Now()
		res, err := operation(t, c, gqlclient.Request{Query: w.markQuery("done")})
		if err != nil || len(res) != 1 || len(res[0].Errors) != 1 || res[0].Errors[0].Code() != "SERVICE_UNAVAILABLE" {
			t.Fatalf("a mark stuck on a lock: %v %+v", err, res)
		}
		if took := time.Since(start); took > 4*time.Second {
			t.Errorf("answered after %s, want about the 1 s deadline", took)
		}
		release()
		time.Sleep(200 * time.Millisecond)
		if after := w.actionStatus(t); after != before {
			t.Errorf("the abandoned mark was applied: %s -> %s", before, after)
		}
	})

	t.Run("idempotencyKey", func(t *testing.T) {
		keyed := func(status, key string) ([]gqlclient.Result, error) {
			return operation(t, c, gqlclient.Request{Query: w.markQuery(status), Extensions: map[string]any{"idempotencyKey": key}})
		}
		first, err := keyed("done", "socket-key-1")
		if err != nil || len(first) != 1 || len(first[0].Errors) != 0 {
			t.Fatalf("first: %v %+v", err, first)
		}
		// Another writer changes the message; the retry must not run the mark again.
		markVia(t, w.srv.base, w.key, "alice", w.alice1.ID, "pending")
		again, err := keyed("done", "socket-key-1")
		if err != nil || len(again) != 1 || string(again[0].Data) != string(first[0].Data) {
			t.Fatalf("retry: %v %+v, want the stored %s", err, again, first[0].Data)
		}
		if got := w.actionStatus(t); got != "pending" {
			t.Errorf("the retry ran the mark again: status %s", got)
		}
		_, err = keyed("pending", "socket-key-1")
		var refused *gqlclient.OperationError
		if !errors.As(err, &refused) || refused.Errors[0].Code() != "BAD_USER_INPUT" {
			t.Errorf("the key reused for another mutation: %v", err)
		}
	})
}

// An event stream's mutation applies its Idempotency-Key as a POST does: the retry replays
// the stored answer without running the mark again.
func TestDoorsEventStreamIdempotencyKey(t *testing.T) {
	w := newDoorsWorld(t)
	stream := func(t *testing.T, query, key string) string {
		t.Helper()
		body, _ := json.Marshal(map[string]any{"query": query})
		req, err := http.NewRequest(http.MethodPost, w.srv.base+"/graphql", strings.NewReader(string(body)))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "ApiKey "+w.key)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Idempotency-Key", key)
		res, err := e2eClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		if err != nil {
			t.Fatal(err)
		}
		if res.StatusCode != http.StatusOK || !strings.Contains(string(b), "event: complete") {
			t.Fatalf("%d %s", res.StatusCode, b)
		}
		_, data, _ := strings.Cut(string(b), "event: next\ndata: ")
		data, _, _ = strings.Cut(data, "\n")
		return data
	}
	first := stream(t, w.markQuery("done"), "stream-key-1")
	if !strings.Contains(first, `"status":"done"`) {
		t.Fatalf("first: %s", first)
	}
	markVia(t, w.srv.base, w.key, "alice", w.alice1.ID, "pending")
	if again := stream(t, w.markQuery("done"), "stream-key-1"); again != first {
		t.Errorf("retry answered %s, want the stored %s", again, first)
	}
	if got := w.actionStatus(t); got != "pending" {
		t.Errorf("the retry ran the mark again: status %s", got)
	}
	if other := stream(t, w.markQuery("pending"), "stream-key-1"); !strings.Contains(other, "BAD_USER_INPUT") {
		t.Errorf("the key reused for another mutation: %s", other)
	}
}

// holdRowLock locks message id's row in a transaction of the test's own until release.
func holdRowLock(t *testing.T, st *store.Store, id string) (release func()) {
	t.Helper()
	tx := st.DB().Begin()
	if err := tx.Exec("SELECT id FROM messages WHERE id = ? FOR UPDATE", id).Error; err != nil {
		t.Fatal(err)
	}
	done := false
	release = func() {
		if !done {
			done = true
			tx.Rollback()
		}
	}
	t.Cleanup(release)
	return release
}

// rawSocket opens a WebSocket to the server's /graphql offering subprotocol, and sends
// nothing.
func rawSocket(t *testing.T, base, subprotocol string) *websocket.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, wsURL(base), &websocket.DialOptions{Subprotocols: []string{subprotocol}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ws.CloseNow() })
	return ws
}

// sendText writes each message as a text frame.
func sendText(t *testing.T, ws *websocket.Conn, messages ...string) {
	t.Helper()
	for _, m := range messages {
		if err := ws.Write(context.Background(), websocket.MessageText, []byte(m)); err != nil {
			t.Fatal(err)
		}
	}
}

// rawClosed reads ws until the server closes it and checks the close code and reason.
func rawClosed(t *testing.T, ws *websocket.Conn, within time.Duration, code int, reason string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	for {
		_, _, err := ws.Read(ctx)
		if err == nil {
			continue
		}
		var ce websocket.CloseError
		if !errors.As(err, &ce) || int(ce.Code) != code || !strings.Contains(ce.Reason, reason) {
			t.Fatalf("socket ended with %v, want close %d with a reason containing %q", err, code, reason)
		}
		return
	}
}

// A socket is bounded as graphql-transport-ws defines: connection_init within the
// deadline (4408), only the protocol's messages (4400), operations only once
// acknowledged (4401), one init (4429), unique ids (4409), a subprotocol it speaks
// (4406); and by this server, without closing it: a subscription past the socket's bound
// is refused by itself (the message naming the limit), and a query past its operations
// in flight waits for one to finish.
func TestDoorsSocketBounds(t *testing.T) {
	w := newDoorsWorld(t, "--websocket-init-timeout", "1s", "--websocket-max-subscriptions", "2", "--websocket-max-in-flight", "1", "--request-timeout", "3s")
	init := fmt.Sprintf(`{"type":"connection_init","payload":{"Authorization":"ApiKey %s"}}`, w.key)
	subscribe := func(id string) string {
		return fmt.Sprintf(`{"type":"subscribe","id":%q,"payload":{"query":"subscription { messageEvents { cursor } }"}}`, id)
	}
	for _, tt := range []struct {
		name, subprotocol string
		send              []string
		binary            bool
		code              int
		reason            string
	}{
		{"4408NoInit", gqlclient.Subprotocol, nil, false, 4408, "Connection initialisation timeout"},
		{"4400NotJSON", gqlclient.Subprotocol, []string{"not json"}, false, 4400, "Invalid message received"},
		{"4400UnknownType", gqlclient.Subprotocol, []string{`{"type":"hello"}`}, false, 4400, "unknown type hello"},
		{"4400Binary", gqlclient.Subprotocol, nil, true, 4400, "text"},
		{"4400InitPayloadNotObject", gqlclient.Subprotocol, []string{`{"type":"connection_init","payload":[1]}`}, false, 4400, "payload"},
		{"4401SubscribeBeforeInit", gqlclient.Subprotocol, []string{subscribe("1")}, false, 4401, "Unauthorized"},
		{"4403BadCredential", gqlclient.Subprotocol, []string{`{"type":"connection_init","payload":{"Authorization":"ApiKey nope"}}`}, false, 4403, "Forbidden"},
		{"4429SecondInit", gqlclient.Subprotocol, []string{init, init}, false, 4429, "Too many initialisation requests"},
		{"4409DuplicateID", gqlclient.Subprotocol, []string{init, subscribe("1"), subscribe("1")}, false, 4409, "Subscriber for 1 already exists"},
		{"4406OtherSubprotocol", "graphql-ws", nil, false, 4406, "Subprotocol not acceptable"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ws := rawSocket(t, w.srv.base, tt.subprotocol)
			sendText(t, ws, tt.send...)
			if tt.binary {
				if err := ws.Write(context.Background(), websocket.MessageBinary, []byte("{}")); err != nil {
					t.Fatal(err)
				}
			}
			rawClosed(t, ws, 10*time.Second, tt.code, tt.reason)
		})
	}

	t.Run("refusedPastMaxSubscriptions", func(t *testing.T) {
		ws, refused := initSocket(t, w.srv.base, "ApiKey "+w.key)
		if refused != nil {
			t.Fatalf("connection_init refused: %v", refused)
		}
		sendText(t, ws, subscribe("1"), subscribe("2"), subscribe("3"))
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		for {
			m, err := readMessage(ctx, ws)
			if err != nil {
				t.Fatalf("waiting for the third subscription's refusal: %v", err)
			}
			if m.Type != "error" {
				continue
			}
			if m.ID != "3" || !strings.Contains(string(m.Payload), "too many subscriptions: at most 2 on one socket") {
				t.Fatalf("refused %s: %s", m.ID, m.Payload)
			}
			break
		}
		stillOpen(t, ws)
	})

	t.Run("waitsPastMaxInFlight", func(t *testing.T) {
		release := holdRowLock(t, w.store, w.alice1.ID)
		ws, refused := initSocket(t, w.srv.base, "ApiKey "+w.key)
		if refused != nil {
			release()
			t.Fatalf("connection_init refused: %v", refused)
		}
		mark := strings.ReplaceAll(w.markQuery("done"), `"`, `\"`)
		sendText(t, ws,
			fmt.Sprintf(`{"type":"subscribe","id":"a","payload":{"query":"%s"}}`, mark),
			fmt.Sprintf(`{"type":"subscribe","id":"b","payload":{"query":"%s"}}`, mark))
		// Past its one operation in flight the socket takes nothing more: a ping waits too.
		sendText(t, ws, `{"type":"ping"}`)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		messages := make(chan socketMessage, 8)
		failed := make(chan error, 1)
		go func() {
			for {
				m, err := readMessage(ctx, ws)
				if err != nil {
					failed <- err
					return
				}
				messages <- m
			}
		}()
		select {
		case m := <-messages:
			release()
			t.Fatalf("while a is stuck on a lock the socket answered %+v", m)
		case err := <-failed:
			release()
			t.Fatalf("while a is stuck on a lock: %v", err)
		case <-time.After(time.Second):
		}
		release()
		seen := map[string]bool{}
		for !seen["complete a"] || !seen["complete b"] || !seen["pong "] {
			select {
			case m := <-messages:
				if m.Type == "error" {
					t.Fatalf("%s refused: %s", m.ID, m.Payload)
				}
				seen[m.Type+" "+m.ID] = true
			case err := <-failed:
				t.Fatalf("after %v: %v", seen, err)
			}
		}
	})
}

// Slow and unauthenticated clients hold nothing for long: a stream request without a
// credential is answered 401 at once, its body unread; one with a credential whose body
// never comes is cut at the read timeout, not held open as a stream.
func TestDoorsSlowBody(t *testing.T) {
	w := newDoorsWorld(t, "--read-timeout", "2s")
	addr := strings.TrimPrefix(w.srv.base, "http://")
	send := func(t *testing.T, auth string) (status string, took time.Duration) {
		t.Helper()
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		start := time.Now()
		fmt.Fprintf(conn, "POST /graphql HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: text/event-stream\r\nContent-Length: 100\r\n%s\r\n", addr, auth)
		_ = conn.SetReadDeadline(time.Now().Add(20 * time.Second))
		line, _ := bufio.NewReader(conn).ReadString('\n')
		return strings.TrimSpace(line), time.Since(start)
	}
	t.Run("401WithoutCredentialAtOnce", func(t *testing.T) {
		status, took := send(t, "")
		if !strings.HasPrefix(status, "HTTP/1.1 401") || took > 2*time.Second {
			t.Errorf("answered %q after %s, want 401 at once", status, took)
		}
	})
	t.Run("cutAtReadTimeoutWithCredential", func(t *testing.T) {
		status, took := send(t, "Authorization: ApiKey "+w.key+"\r\n")
		if strings.HasPrefix(status, "HTTP/1.1 200") || took > 8*time.Second {
			t.Errorf("answered %q after %s, want the connection cut at the 2 s read timeout, no stream", status, took)
		}
	})
}

// Connections are bounded per client address and, for those on which nothing was
// authenticated, in total: past either, a connection is answered at once (429, 503) and
// closed, and the refusal is counted in /metrics.
func TestDoorsConnectionCaps(t *testing.T) {
	dial := func(t *testing.T, addr string) net.Conn {
		t.Helper()
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	refusal := func(t *testing.T, c net.Conn) string {
		t.Helper()
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		line, err := bufio.NewReader(c).ReadString('\n')
		if err != nil {
			return "no answer: " + err.Error()
		}
		return strings.TrimSpace(line)
	}
	metric := func(t *testing.T, base, name string) string {
		t.Helper()
		_, body := get(t, base+"/metrics", "")
		for _, line := range strings.Split(string(body), "\n") {
			if strings.HasPrefix(line, name) {
				return line
			}
		}
		return ""
	}

	t.Run("429PerAddress", func(t *testing.T) {
		w := newDoorsWorld(t, "--max-connections-per-address", "4")
		e2eClient.CloseIdleConnections()
		addr := strings.TrimPrefix(w.srv.base, "http://")
		held := make([]net.Conn, 4)
		for i := range held {
			held[i] = dial(t, addr)
		}
		time.Sleep(200 * time.Millisecond) // accepted and counted
		if got := refusal(t, dial(t, addr)); !strings.HasPrefix(got, "HTTP/1.1 429") {
			t.Fatalf("a fifth connection got %q, want 429", got)
		}
		for _, c := range held {
			_ = c.Close()
		}
		time.Sleep(200 * time.Millisecond) // their closing is seen
		if line := metric(t, w.srv.base, `http_connections_refused_total{reason="per_address"}`); !strings.HasSuffix(line, " 1") {
			t.Errorf("metrics: %q", line)
		}
	})

	t.Run("503Unauthenticated", func(t *testing.T) {
		w := newDoorsWorld(t, "--max-connections-per-address", "0", "--max-unauthenticated-connections", "3")
		e2eClient.CloseIdleConnections()
		addr := strings.TrimPrefix(w.srv.base, "http://")
		held := []net.Conn{dial(t, addr), dial(t, addr), dial(t, addr)}
		time.Sleep(200 * time.Millisecond)
		if got := refusal(t, dial(t, addr)); !strings.HasPrefix(got, "HTTP/1.1 503") {
			t.Fatalf("a fourth unauthenticated connection got %q, want 503", got)
		}
		// One of them authenticates a request: it no longer counts, and a new one is let in.
		fmt.Fprintf(held[0], "GET /v1/messages?limit=1 HTTP/1.1\r\nHost: %s\r\nAuthorization: ApiKey %s\r\n\r\n", addr, w.key)
		if got := refusal(t, held[0]); !strings.HasPrefix(got, "HTTP/1.1 200") {
			t.Fatalf("the authenticated request got %q", got)
		}
		fresh := dial(t, addr)
		fmt.Fprintf(fresh, "GET /healthz HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
		if got := refusal(t, fresh); !strings.HasPrefix(got, "HTTP/1.1 200") {
			t.Fatalf("a connection after one authenticated got %q, want it served", got)
		}
		for _, c := range append(held, fresh) {
			_ = c.Close()
		}
		time.Sleep(200 * time.Millisecond)
		if line := metric(t, w.srv.base, `http_connections_refused_total{reason="unauthenticated"}`); !strings.HasSuffix(line, " 1") {
			t.Errorf("metrics: %q", line)
		}
	})
}
