// Package gqlclient is a small client for GraphQL subscriptions: graphql-transport-ws
// over WebSocket and graphql-sse's distinct connections mode over HTTP. The end-to-end
// tests and the load generator (cmd/loadtest) speak to the server through it; browsers
// and Node clients use the published graphql-ws and graphql-sse packages instead.
package gqlclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/coder/websocket"
)

// Subprotocol is the WebSocket subprotocol of graphql-ws's current protocol.
const Subprotocol = "graphql-transport-ws"

// Request is one GraphQL operation.
type Request struct {
	Query string `json:"query,omitempty"`
	// DocumentID names a trusted document instead of a Query (GraphQL over HTTP's
	// persisted documents).
	DocumentID string         `json:"documentId,omitempty"`
	Variables  map[string]any `json:"variables,omitempty"`
	// Extensions are the request's extensions: over a WebSocket, idempotencyKey stands
	// for the Idempotency-Key header a POST carries.
	Extensions map[string]any `json:"extensions,omitempty"`
}

// Result is one execution result: an event of a subscription.
type Result struct {
	Data   json.RawMessage `json:"data"`
	Errors []Error         `json:"errors"`
}

// Error is one entry of a result's errors.
type Error struct {
	Message    string         `json:"message"`
	Extensions map[string]any `json:"extensions"`
}

// Code is the error's extensions.code.
func (e Error) Code() string { s, _ := e.Extensions["code"].(string); return s }

// OperationError is how an operation refused before it ran ended: the errors of the
// protocol's error message.
type OperationError struct{ Errors []Error }

func (e *OperationError) Error() string {
	msgs := make([]string, len(e.Errors))
	for i, err := range e.Errors {
		msgs[i] = err.Message
	}
	return strings.Join(msgs, "; ")
}

// CloseError is how the server closed a socket: its code and reason.
type CloseError struct {
	Code   int
	Reason string
}

func (e *CloseError) Error() string { return fmt.Sprintf("closed %d: %s", e.Code, e.Reason) }

// Conn is one acknowledged graphql-transport-ws connection; its subscriptions share it.
type Conn struct {
	ws     *websocket.Conn
	nextID atomic.Int64

	mu     sync.Mutex
	subs   map[string]*Subscription
	err    error
	closed chan struct{}
}

// Dial opens a socket to url (ws:// or wss://), sends connection_init with payload and
// waits for connection_ack. A refused init returns the *CloseError the server closed with.
func Dial(ctx context.Context, url string, header http.Header, payload map[string]any) (*Conn, error) {
	return DialWith(ctx, url, DialOptions{Header: header, Payload: payload})
}

// handshake sends connection_init on an open socket and waits for connection_ack.
func handshake(ctx context.Context, ws *websocket.Conn, payload map[string]any) (*Conn, error) {
	ws.SetReadLimit(16 << 20)
	c := &Conn{ws: ws, subs: map[string]*Subscription{}, closed: make(chan struct{})}
	if err := c.write(ctx, map[string]any{"type": "connection_init", "payload": payload}); err != nil {
		return nil, closeErr(err)
	}
	for {
		var m message
		if err := c.read(ctx, &m); err != nil {
			_ = ws.CloseNow()
			return nil, closeErr(err)
		}
		if m.Type == "connection_ack" {
			break
		}
		if m.Type == "ping" {
			_ = c.write(ctx, map[string]any{"type": "pong"})
		}
	}
	go c.run()
	return c, nil
}

type message struct {
	ID      string          `json:"id,omitempty"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

func (c *Conn) write(ctx context.Context, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return c.ws.Write(ctx, websocket.MessageText, b)
}

func (c *Conn) read(ctx context.Context, m *message) error {
	_, b, err := c.ws.Read(ctx)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, m)
}

func closeErr(err error) error {
	var ce websocket.CloseError
	if errors.As(err, &ce) {
		return &CloseError{Code: int(ce.Code), Reason: ce.Reason}
	}
	return err
}

// run reads messages until the socket ends, answering pings and routing events.
func (c *Conn) run() {
	ctx := context.Background()
	var err error
	for {
		var m message
		if err = c.read(ctx, &m); err != nil {
			break
		}
		switch m.Type {
		case "ping":
			_ = c.write(ctx, map[string]any{"type": "pong"})
		case "next", "error", "complete":
			c.mu.Lock()
			s := c.subs[m.ID]
			if m.Type != "next" {
				delete(c.subs, m.ID)
			}
			c.mu.Unlock()
			if s != nil {
				s.deliver(m)
			}
		}
	}
	c.mu.Lock()
	c.err = closeErr(err)
	subs := c.subs
	c.subs = map[string]*Subscription{}
	c.mu.Unlock()
	for _, s := range subs {
		s.end(c.err)
	}
	close(c.closed)
}

// Err is why the connection ended, once it has.
func (c *Conn) Err() error {
	<-c.closed
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Close closes the socket normally.
func (c *Conn) Close() error { return c.ws.Close(websocket.StatusNormalClosure, "") }

// Subscribe starts an operation; its results arrive on the subscription's Results.
// buffer bounds the results waiting to be read; when full, reading the socket waits.
func (c *Conn) Subscribe(ctx context.Context, req Request, buffer int) (*Subscription, error) {
	id := strconv.FormatInt(c.nextID.Add(1), 10)
	s := &Subscription{id: id, conn: c, results: make(chan Result, buffer), done: make(chan struct{})}
	c.mu.Lock()
	c.subs[id] = s
	c.mu.Unlock()
	if err := c.write(ctx, map[string]any{"id": id, "type": "subscribe", "payload": req}); err != nil {
		return nil, err
	}
	return s, nil
}

// Subscription is one operation on a Conn, or one SSE stream.
type Subscription struct {
	id      string
	conn    *Conn
	results chan Result
	done    chan struct{}
	once    sync.Once
	err     error
	stop    func()
}

// Results delivers the operation's results; it is closed when the operation completes.
func (s *Subscription) Results() <-chan Result { return s.results }

// Err is why the subscription ended, once Results is closed: nil when it completed, a
// protocol error's message, or how the connection closed.
func (s *Subscription) Err() error { return s.err }

func (s *Subscription) deliver(m message) {
	switch m.Type {
	case "next":
		var r Result
		if err := json.Unmarshal(m.Payload, &r); err == nil {
			s.results <- r
		}
	case "error":
		var errs []Error
		_ = json.Unmarshal(m.Payload, &errs)
		s.end(&OperationError{Errors: errs})
	case "complete":
		s.end(nil)
	}
}

func (s *Subscription) end(err error) {
	s.once.Do(func() {
		s.err = err
		close(s.results)
		close(s.done)
	})
}

// Stop ends the subscription from the client's side.
func (s *Subscription) Stop(ctx context.Context) error {
	if s.stop != nil {
		s.stop()
		return nil
	}
	s.conn.mu.Lock()
	delete(s.conn.subs, s.id)
	s.conn.mu.Unlock()
	return s.conn.write(ctx, map[string]any{"id": s.id, "type": "complete"})
}
