package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"time"

	"messages/graph/gqlclient"
	"messages/models"
)

// eventsBench is what the event scenarios share: the database, an HTTP client, the
// environment of the API key and its subscribers.
type eventsBench struct {
	c    eventsConfig
	log  io.Writer
	db   *sql.DB
	http *http.Client
	// ws makes the WebSocket upgrades: loopback only, no timeout (a socket lives long).
	ws          *http.Client
	envID       string
	orgID       string
	subscribers []subscriberRef // ordered by external id
}

// subscriberRef is a subscriber's row id (messages.subscriber_id) and external id.
type subscriberRef struct{ id, external string }

func newEventsBench(ctx context.Context, c eventsConfig, log io.Writer) (*eventsBench, error) {
	db, err := openFloorDB(ctx, c.databaseURL, 8)
	if err != nil {
		return nil, err
	}
	b := &eventsBench{c: c, log: log, db: db, http: newHTTPClient(c.writers*2, 30*time.Second, false), ws: newWebSocketClient(0)}
	if err := b.discover(ctx); err != nil {
		b.close()
		return nil, err
	}
	return b, nil
}

func (b *eventsBench) close() { _ = b.db.Close() }

// discover finds the API key's environment (from a message it lists) and its subscribers.
func (b *eventsBench) discover(ctx context.Context) error {
	var page struct {
		Data []struct {
			EnvironmentID  string `json:"_environmentId"`
			OrganizationID string `json:"_organizationId"`
		} `json:"data"`
	}
	if err := b.getJSON(ctx, b.c.baseURL+"/v1/messages?limit=1", &page); err != nil {
		return fmt.Errorf("finding the environment: %w", err)
	}
	if len(page.Data) == 0 {
		return errors.New("the API key's environment has no message: seed it first")
	}
	b.envID, b.orgID = page.Data[0].EnvironmentID, page.Data[0].OrganizationID
	rows, err := b.db.QueryContext(ctx, `SELECT id, subscriber_id FROM subscribers WHERE environment_id = ? ORDER BY subscriber_id`, b.envID)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var s subscriberRef
		if err := rows.Scan(&s.id, &s.external); err != nil {
			return err
		}
		b.subscribers = append(b.subscribers, s)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	need := max(b.c.burstSubs, b.c.writers+1)
	if len(b.subscribers) < need {
		return fmt.Errorf("the environment has %d subscribers; the scenarios need %d", len(b.subscribers), need)
	}
	fmt.Fprintf(b.log, "environment %s: %d subscribers\n", b.envID, len(b.subscribers))
	return nil
}

// getJSON GETs url with the API key and decodes the answer.
func (b *eventsBench) getJSON(ctx context.Context, url string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "ApiKey "+b.c.apiKey)
	resp, err := b.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %d %s", url, resp.StatusCode, clipText(string(body), 200))
	}
	return json.Unmarshal(body, v)
}

// postGraphQL sends query to base's /graphql and fails on a status other than 200 or
// any error in the answer.
func (b *eventsBench) postGraphQL(ctx context.Context, base, query string, vars map[string]any) error {
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/graphql", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "ApiKey "+b.c.apiKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := b.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	var r struct {
		Errors []gqlclient.Error `json:"errors"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(out, &r) != nil || len(r.Errors) > 0 {
		return fmt.Errorf("graphql: %d %s", resp.StatusCode, clipText(string(out), 200))
	}
	return nil
}

// newWebSocketClient makes upgrade requests over loopback only; rcvbuf > 0 sets each
// socket's receive buffer (SO_RCVBUF) in bytes, so a client that stops reading stops
// taking data after that much.
func newWebSocketClient(rcvbuf int) *http.Client {
	dialer := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: -1, Control: func(network, address string, rc syscall.RawConn) error {
		if err := dialLoopbackOnly(network, address, rc); err != nil {
			return err
		}
		if rcvbuf <= 0 {
			return nil
		}
		var serr error
		err := rc.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, rcvbuf) })
		return errors.Join(err, serr)
	}}
	return &http.Client{Transport: &http.Transport{Proxy: nil, DialContext: dialer.DialContext, DisableKeepAlives: true}}
}

// wsURL is base's GraphQL endpoint as a WebSocket URL.
func wsURL(base string) string { return "ws" + strings.TrimPrefix(base, "http") + "/graphql" }

// dial opens one acknowledged socket to base with the API key.
func (b *eventsBench) dial(ctx context.Context, base string, client *http.Client) (*gqlclient.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return gqlclient.DialWith(ctx, wsURL(base), gqlclient.DialOptions{
		Payload: map[string]any{"Authorization": "ApiKey " + b.c.apiKey}, HTTPClient: client})
}

// subscribe starts query on conn and returns once the server has run its resolver: a
// query on the same socket, answered after it, orders the subscription before what the
// caller does next.
func subscribe(ctx context.Context, conn *gqlclient.Conn, query string, vars map[string]any, buffer int) (*gqlclient.Subscription, error) {
	s, err := conn.Subscribe(ctx, gqlclient.Request{Query: query, Variables: vars}, buffer)
	if err != nil {
		return nil, err
	}
	ping, err := conn.Subscribe(ctx, gqlclient.Request{Query: `{ __typename }`}, 1)
	if err != nil {
		return nil, err
	}
	t := time.NewTimer(30 * time.Second)
	defer t.Stop()
	for {
		select {
		case _, ok := <-ping.Results():
			if !ok {
				return s, ping.Err()
			}
		case <-t.C:
			return nil, errors.New("the server did not answer a query after subscribe within 30s")
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// eventsQuery is what a subscriber of the benchmark selects: what an inbox needs to
// place the event and resume after it.
const eventsQuery = `subscription($s: String) {
  messageEvents(subscriberId: $s) { kind cursor message { _id subscriber { subscriberId } } }
}`

// receivedEvent is one result of messageEvents as the benchmark reads it.
type receivedEvent struct {
	kind, id, subscriber string
	// code is the first error's extensions.code: a result that ends the stream.
	code string
}

// decodeEvent reads a messageEvents result.
func decodeEvent(r gqlclient.Result) (receivedEvent, error) {
	var e receivedEvent
	if len(r.Errors) > 0 {
		e.code = r.Errors[0].Code()
		if e.code == "" {
			e.code = "UNKNOWN"
		}
		return e, nil
	}
	var d struct {
		MessageEvents *struct {
			Kind    string `json:"kind"`
			Message *struct {
				ID         string `json:"_id"`
				Subscriber *struct {
					SubscriberID string `json:"subscriberId"`
				} `json:"subscriber"`
			} `json:"message"`
		} `json:"messageEvents"`
	}
	if err := json.Unmarshal(r.Data, &d); err != nil {
		return e, err
	}
	if d.MessageEvents == nil || d.MessageEvents.Message == nil {
		return e, fmt.Errorf("event without a message: %s", clipText(string(r.Data), 200))
	}
	e.kind, e.id = d.MessageEvents.Kind, d.MessageEvents.Message.ID
	if s := d.MessageEvents.Message.Subscriber; s != nil {
		e.subscriber = s.SubscriberID
	}
	return e, nil
}

// rawMessage is one row inserted with plain SQL, as another program of the platform
// writes them: no code of the server runs.
type rawMessage struct {
	id           string
	subscriberID string // the subscriber's row id
	payload      string // JSON, or empty for NULL
}

// rawColumns are the columns a raw insert sets; the rest take their defaults, the
// change stamps included.
const rawColumns = `(id, environment_id, organization_id, subscriber_id, created_at, transaction_id, subject,
	channel, email, phone, direct_webhook_url, title, cta, error_text, content, payload)`

// rawRow is one row's values: six placeholders, the rest constant. The call to action has
// a primary button, so the row can be marked.
const rawRow = `(?, ?, ?, ?, ?, 'events-bench', 'Live events benchmark', 'in_app', '', '', '',
	'Inserted with plain SQL', '{"type":"redirect","action":{"status":"pending","buttons":[{"type":"primary","content":"OK"}]}}', '', '[]', ?)`

// rawInsert is one multi-row INSERT of rows in environment env/org at createdAt.
func rawInsert(env, org string, createdAt time.Time, rows []rawMessage) (string, []any) {
	var q strings.Builder
	q.WriteString("INSERT INTO messages " + rawColumns + " VALUES ")
	args := make([]any, 0, 6*len(rows))
	for i, r := range rows {
		if i > 0 {
			q.WriteString(", ")
		}
		q.WriteString(rawRow)
		var payload any
		if r.payload != "" {
			payload = r.payload
		}
		args = append(args, r.id, env, org, r.subscriberID, createdAt.UTC(), payload)
	}
	return q.String(), args
}

// rawChunk bounds the rows of one INSERT statement.
const rawChunk = 1000

// insertRaw writes rows in one transaction, rawChunk rows a statement, and returns when
// the commit has returned.
func (b *eventsBench) insertRaw(ctx context.Context, rows []rawMessage) (time.Time, error) {
	tx, err := b.db.BeginTx(ctx, nil)
	if err != nil {
		return time.Time{}, err
	}
	now := time.Now()
	for len(rows) > 0 {
		n := min(len(rows), rawChunk)
		q, args := rawInsert(b.envID, b.orgID, now, rows[:n])
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			_ = tx.Rollback()
			return time.Time{}, err
		}
		rows = rows[n:]
	}
	if err := tx.Commit(); err != nil {
		return time.Time{}, err
	}
	return time.Now(), nil
}

// newRawMessages makes n rows, the i-th for subs[i % len(subs)].
func newRawMessages(n int, subs []subscriberRef, payload string) []rawMessage {
	rows := make([]rawMessage, n)
	now := time.Now()
	for i := range rows {
		rows[i] = rawMessage{id: models.NewID(now), subscriberID: subs[i%len(subs)].id, payload: payload}
	}
	return rows
}

// dbStatus reads global status counters of the database server.
func (b *eventsBench) dbStatus(ctx context.Context, names ...string) (map[string]int64, error) {
	q := "SHOW GLOBAL STATUS WHERE Variable_name IN (?" + strings.Repeat(", ?", len(names)-1) + ")"
	args := make([]any, len(names))
	for i, n := range names {
		args[i] = n
	}
	rows, err := b.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var name string
		var v int64
		if err := rows.Scan(&name, &v); err != nil {
			return nil, err
		}
		out[name] = v
	}
	return out, rows.Err()
}

// otherClients counts the database server's connections to other databases: their
// queries are in the global counters too.
func (b *eventsBench) otherClients(ctx context.Context) (int, error) {
	var n int
	err := b.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM information_schema.PROCESSLIST
		WHERE DB IS NOT NULL AND DB <> DATABASE() AND COMMAND <> 'Sleep'`).Scan(&n)
	return n, err
}

// windowRows is how many rows the feed's poll reads again each time: those stamped
// within lookback of the newest change.
func (b *eventsBench) windowRows(ctx context.Context, lookback time.Duration) (int, error) {
	var n int
	err := b.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM messages WHERE changed_at >=
		(SELECT MAX(changed_at) FROM messages) - INTERVAL ? MICROSECOND`, lookback.Microseconds()).Scan(&n)
	return n, err
}

// socketSet is a group of sockets, each with its subscriptions, closed together.
type socketSet struct {
	mu    sync.Mutex
	conns []*gqlclient.Conn
}

func (s *socketSet) add(c *gqlclient.Conn) {
	s.mu.Lock()
	s.conns = append(s.conns, c)
	s.mu.Unlock()
}

func (s *socketSet) closeAll(parallel int) {
	s.mu.Lock()
	conns := s.conns
	s.conns = nil
	s.mu.Unlock()
	forEach(len(conns), parallel, func(i int) { _ = conns[i].Close() })
}

// forEach calls f(0..n-1) on up to parallel goroutines.
func forEach(n, parallel int, f func(i int)) {
	var wg sync.WaitGroup
	next := make(chan int)
	for range min(parallel, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				f(i)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}
