package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"messages/graph/gqlclient"
)

// The sockets of well-behaved clients under load, on the real server in production mode
// on MariaDB: a burst of operations over one socket is answered (or each refused by
// itself), a refusal keeps the socket open, and a socket the server must close for load
// or limits is closed with 1013, which graphql-ws's client retries with back-off
// (docs/live-updates.md, "Bounds").

// burstOutcome is how the operations of a burst ended.
type burstOutcome struct {
	answered int            // a result, then complete
	refused  map[string]int // an error message, by extensions.code
	close    int            // the close code if the server closed the socket, else 0
	reason   string
}

func (o burstOutcome) String() string {
	return fmt.Sprintf("answered %d, refused %v, close %d %q", o.answered, o.refused, o.close, o.reason)
}

// socketMessage is a graphql-transport-ws message as the tests read it.
type socketMessage struct {
	Type    string          `json:"type"`
	ID      string          `json:"id"`
	Payload json.RawMessage `json:"payload"`
}

// initSocket opens a raw socket, sends connection_init with auth and waits for the
// acknowledgement; it returns the socket, or the close that refused it.
func initSocket(t *testing.T, base, auth string) (*websocket.Conn, *websocket.CloseError) {
	t.Helper()
	ws := rawSocket(t, base, gqlclient.Subprotocol)
	sendText(t, ws, fmt.Sprintf(`{"type":"connection_init","payload":{"Authorization":%q}}`, auth))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		m, err := readMessage(ctx, ws)
		var ce websocket.CloseError
		if errors.As(err, &ce) {
			return nil, &ce
		}
		if err != nil {
			t.Fatalf("waiting for connection_ack: %v", err)
		}
		if m.Type == "connection_ack" {
			return ws, nil
		}
	}
}

// readMessage reads one protocol message.
func readMessage(ctx context.Context, ws *websocket.Conn) (socketMessage, error) {
	_, data, err := ws.Read(ctx)
	if err != nil {
		return socketMessage{}, err
	}
	var m socketMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return m, fmt.Errorf("not a protocol message: %s", data)
	}
	return m, nil
}

// burst sends n subscribe messages of query at once over ws (ids "1" to n) and reads
// until every one has ended (complete or error) or the socket closes.
func burst(t *testing.T, ws *websocket.Conn, n int, query string) burstOutcome {
	t.Helper()
	payload, _ := json.Marshal(map[string]any{"query": query})
	go func() {
		for i := 1; i <= n; i++ {
			msg := fmt.Sprintf(`{"type":"subscribe","id":"%d","payload":%s}`, i, payload)
			if ws.Write(context.Background(), websocket.MessageText, []byte(msg)) != nil {
				return
			}
		}
	}()
	out := burstOutcome{refused: map[string]int{}}
	results := map[string]bool{}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for ended := 0; ended < n; {
		m, err := readMessage(ctx, ws)
		var ce websocket.CloseError
		if errors.As(err, &ce) {
			out.close, out.reason = int(ce.Code), ce.Reason
			return out
		}
		if err != nil {
			t.Fatalf("after %d of %d operations ended: %v (%s)", ended, n, err, out)
		}
		switch m.Type {
		case "next":
			results[m.ID] = true
		case "complete":
			if !results[m.ID] {
				t.Fatalf("operation %s completed without a result", m.ID)
			}
			out.answered++
			ended++
		case "error":
			var errs []gqlclient.Error
			if err := json.Unmarshal(m.Payload, &errs); err != nil || len(errs) != 1 {
				t.Fatalf("operation %s refused with %s", m.ID, m.Payload)
			}
			out.refused[errs[0].Code()]++
			ended++
		}
	}
	return out
}

// stillOpen checks that ws answers a ping with a pong: the server kept the socket.
func stillOpen(t *testing.T, ws *websocket.Conn) {
	t.Helper()
	sendText(t, ws, `{"type":"ping"}`)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		m, err := readMessage(ctx, ws)
		if err != nil {
			t.Fatalf("the socket did not stay open: %v", err)
		}
		if m.Type == "pong" {
			return
		}
	}
}

const countQuery = `{ messages(limit: 1) { totalCount } }`

// 200 queries sent at once over one socket (as Apollo Client's GraphQLWsLink sends a
// page's queries) are each answered: past the socket's in-flight bound the server stops
// taking its messages until one finishes, and the socket stays open. Past the rate limit
// each is refused by itself, RATE_LIMITED, and the socket stays open too.
func TestSocketBurstAnsweredOneByOne(t *testing.T) {
	w := newDoorsWorld(t, "--websocket-max-in-flight", "4")
	ws, refused := initSocket(t, w.srv.base, "ApiKey "+w.key)
	if refused != nil {
		t.Fatalf("connection_init refused: %v", refused)
	}
	out := burst(t, ws, 200, countQuery)
	t.Logf("200 at once, 4 in flight: %s", out)
	if out.answered != 200 || out.close != 0 {
		t.Fatalf("200 at once: %s; want every one answered and the socket open", out)
	}
	stillOpen(t, ws)

	t.Run("pastTheRateLimit", func(t *testing.T) {
		const burstSize = 20
		w := newDoorsWorld(t, "--rate-limit", "1", "--rate-burst", strconv.Itoa(burstSize))
		ws, refused := initSocket(t, w.srv.base, "ApiKey "+w.key)
		if refused != nil {
			t.Fatalf("connection_init refused: %v", refused)
		}
		out := burst(t, ws, 200, countQuery)
		t.Logf("200 at once, a burst of %d: %s", burstSize, out)
		if out.close != 0 || out.answered+out.refused["RATE_LIMITED"] != 200 || out.answered < burstSize-1 || out.answered > 100 {
			t.Fatalf("200 at once past the rate limit: %s; want each answered or refused RATE_LIMITED, the socket open", out)
		}
		stillOpen(t, ws)
	})
}

// tab is one browser tab of a subscriber: its socket, connection_init with its own
// session, one subscription and a query, as a page loads.
func tab(t *testing.T, base, token string) (lost string) {
	ws, refused := initSocket(t, base, "Bearer "+token)
	if refused != nil {
		return fmt.Sprintf("connection_init closed %d %q", refused.Code, refused.Reason)
	}
	defer ws.CloseNow()
	sendText(t, ws,
		`{"type":"subscribe","id":"events","payload":{"query":"subscription { messageEvents { cursor } }"}}`,
		`{"type":"subscribe","id":"page","payload":{"query":"{ messages(limit: 10) { totalCount } }"}}`)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		m, err := readMessage(ctx, ws)
		var ce websocket.CloseError
		switch {
		case errors.As(err, &ce):
			return fmt.Sprintf("closed %d %q", ce.Code, ce.Reason)
		case err != nil:
			return err.Error()
		case m.Type == "error":
			return fmt.Sprintf("%s refused: %s", m.ID, m.Payload)
		case m.Type == "complete" && m.ID == "page":
			return ""
		}
	}
}

// Eleven tabs of one person, each with its own session, reconnect at once (a laptop
// waking up): with the default limits every one connects, subscribes and loads its page.
func TestSocketTabsOfOneSubscriberConnect(t *testing.T) {
	w := newDoorsWorld(t)
	const tabs = 11
	tokens := make([]string, tabs)
	for i := range tokens {
		tokens[i] = w.token(t, "alice")
	}
	lost := make([]string, tabs)
	var wg sync.WaitGroup
	for i := range tokens {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lost[i] = tab(t, w.srv.base, tokens[i])
		}()
	}
	wg.Wait()
	n := 0
	for i, l := range lost {
		if l != "" {
			n++
			t.Logf("tab %d: %s", i+1, l)
		}
	}
	t.Logf("%d tabs at once: %d lost", tabs, n)
	if n > 0 {
		t.Fatalf("%d of %d tabs of one subscriber lost their socket", n, tabs)
	}
}

// A socket the server must close for a limit is closed with 1013 Try Again Later and
// the reason, which graphql-ws's client retries with back-off (never 4429, which it
// takes as fatal): here a subscriber past its rate limit at connection_init, whichever
// of its sessions sends it. Its other sockets stay open.
func TestSocketClosedForLimitsWith1013(t *testing.T) {
	w := newDoorsWorld(t, "--session-rate-limit", "0.01", "--session-rate-burst", "2")
	open, refused := initSocket(t, w.srv.base, "Bearer "+w.token(t, "alice"))
	if refused != nil {
		t.Fatalf("the first socket was refused: %v", refused)
	}
	if _, refused := initSocket(t, w.srv.base, "Bearer "+w.token(t, "alice")); refused != nil {
		t.Fatalf("the second socket was refused: %v", refused)
	}
	_, refused = initSocket(t, w.srv.base, "Bearer "+w.token(t, "alice"))
	if refused == nil || refused.Code != 1013 || !strings.HasPrefix(refused.Reason, "Try Again Later: rate limit exceeded for this subscriber (all its sessions together): retry after ") {
		t.Fatalf("the third session's socket: %v; want 1013 naming the subscriber's limit", refused)
	}
	stillOpen(t, open)
}
