package transport

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/coder/websocket"

	"messages/models"
)

// socket is one open WebSocket and the operations it runs.
type socket struct {
	t       WebSocket
	ws      *websocket.Conn
	exec    graphql.GraphExecutor
	headers http.Header

	// ops is cancelled when the socket closes, ending every operation.
	ops    context.Context
	cancel context.CancelFunc

	writeMu sync.Mutex

	mu        sync.Mutex
	closed    bool
	initiated bool
	caller    context.Context // the operations' context once connection_init is accepted
	running   map[string]*socketOp
	subs      int
	inFlight  int
	stopWatch func()
	initTimer *time.Timer
	pingTimer *time.Timer
	unponged  bool
	// refusedInRow counts the operations refused by the rate limit since one ran.
	refusedInRow int
}

// maxRefusedInRow is how many operations in a row a socket may send past its rate limit,
// each answered RATE_LIMITED with when to retry, before it is closed with 4429: a client
// that ignores the answer costs the server a refusal per message, as fast as it sends.
const maxRefusedInRow = 10

// overLimit counts one more refused operation and reports whether the socket has sent
// too many in a row.
func (s *socket) overLimit() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refusedInRow++
	return s.refusedInRow > maxRefusedInRow
}

// socketOp is one running operation.
type socketOp struct {
	cancel       context.CancelFunc
	subscription bool
	// stopped is set when the client completed the operation: the server sends nothing
	// more for it; finished once it is uncounted.
	stopped, finished bool
	// A subscription whose stream calls the socket when events are queued: its response
	// handler and context, whether a read would not wait, whether it is armed (those are
	// set), and whether a drain runs.
	responses graphql.ResponseHandler
	ctx       context.Context
	queued    func() bool
	armed     atomic.Bool
	taking    atomic.Bool
}

func newSocket(t WebSocket, ws *websocket.Conn, exec graphql.GraphExecutor, r *http.Request) *socket {
	ws.SetReadLimit(t.o.ReadLimit)
	ops, cancel := context.WithCancel(r.Context())
	s := &socket{t: t, ws: ws, exec: exec, headers: r.Header, ops: ops, cancel: cancel, running: map[string]*socketOp{}}
	s.initTimer = time.AfterFunc(t.o.InitTimeout, func() {
		s.mu.Lock()
		initiated := s.initiated
		s.mu.Unlock()
		if !initiated {
			s.close(closeInitTimeout, "Connection initialisation timeout")
		}
	})
	return s
}

// serve reads messages until the socket closes, then ends what it was running.
func (s *socket) serve() {
	defer s.finish()
	for {
		typ, data, err := s.ws.Read(context.Background())
		if err != nil {
			return
		}
		if typ != websocket.MessageText {
			s.close(closeBadRequest, "Invalid message received: the protocol's messages are text")
			continue
		}
		s.handle(data)
	}
}

// finish ends every operation and stops watching the credential once the socket closed.
func (s *socket) finish() {
	s.mu.Lock()
	s.closed = true
	stop := s.stopWatch
	s.initTimer.Stop()
	if s.pingTimer != nil {
		s.pingTimer.Stop()
	}
	s.mu.Unlock()
	s.cancel()
	if stop != nil {
		stop()
	}
	_ = s.ws.CloseNow()
}

// inMessage is a message from the client.
type inMessage struct {
	Type    string          `json:"type"`
	ID      *string         `json:"id"`
	Payload json.RawMessage `json:"payload"`
}

// handle acts on one message.
func (s *socket) handle(data []byte) {
	var m inMessage
	if err := json.Unmarshal(data, &m); err != nil || m.Type == "" {
		s.close(closeBadRequest, "Invalid message received: not a JSON object with a type")
		return
	}
	switch m.Type {
	case "connection_init":
		s.init(m.Payload)
	case "ping":
		s.send(appendMessage(nil, "pong", "", m.Payload))
	case "pong":
		s.mu.Lock()
		s.unponged = false
		s.mu.Unlock()
	case "subscribe":
		if m.ID == nil || *m.ID == "" {
			s.close(closeBadRequest, "Invalid message received: subscribe needs an id")
			return
		}
		s.subscribe(*m.ID, m.Payload)
	case "complete":
		if m.ID == nil {
			s.close(closeBadRequest, "Invalid message received: complete needs an id")
			return
		}
		s.stop(*m.ID)
	default:
		s.close(closeBadRequest, "Invalid message received: unknown type "+clip(m.Type, 40))
	}
}

// init authenticates connection_init's credential (its payload's Authorization, as a
// request's header would carry it) and counts it against the caller's rate limits as a
// request; then acknowledges, and watches the credential for as long as the socket lives.
func (s *socket) init(payload json.RawMessage) {
	s.mu.Lock()
	again := s.initiated
	s.initiated = true
	s.mu.Unlock()
	if again {
		s.close(closeTooMany, "Too many initialisation requests")
		return
	}
	s.initTimer.Stop()
	var fields map[string]any
	if len(payload) > 0 && string(payload) != "null" {
		if err := json.Unmarshal(payload, &fields); err != nil {
			s.close(closeBadRequest, "Invalid message received: connection_init's payload must be an object")
			return
		}
	}
	ctx, err := s.t.gate.Open(s.ops, authorization(fields))
	if err == nil {
		err = s.t.gate.Admit(ctx)
	}
	if err != nil {
		switch {
		case models.ErrorCode(err) == models.ERATELIMITED:
			s.close(closeTooMany, "Too many requests: "+models.ErrorMessage(err))
		case models.ErrorCode(err) == models.EUNAVAILABLE:
			s.close(closeTryAgain, "database unavailable, retry later")
		default:
			s.close(closeForbidden, "Forbidden: "+models.ErrorMessage(err))
		}
		return
	}
	stop := s.t.gate.Watch(ctx, func(err error) { s.close(closeForbidden, "Forbidden: "+models.ErrorMessage(err)) })
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		stop()
		return
	}
	s.caller, s.stopWatch = ctx, stop
	if s.t.o.Ping > 0 {
		s.pingTimer = time.AfterFunc(s.t.o.Ping, s.ping)
	}
	s.mu.Unlock()
	s.send(appendMessage(nil, "connection_ack", "", nil))
}

// authorization is connection_init's credential: its Authorization entry, as graphql-ws
// clients send headers in connectionParams (either case).
func authorization(fields map[string]any) string {
	for _, k := range []string{"Authorization", "authorization"} {
		if v, ok := fields[k].(string); ok && v != "" {
			return v
		}
	}
	return ""
}

// ping sends a ping, closing the socket when the previous one went unanswered.
func (s *socket) ping() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	silent := s.unponged
	s.unponged = true
	s.pingTimer.Reset(s.t.o.Ping)
	s.mu.Unlock()
	if silent {
		s.close(closeNoPong, "no pong within the ping interval")
		return
	}
	s.send(appendMessage(nil, "ping", "", nil))
}

// send writes one message, closing the socket when the client does not take it in time.
// Once the socket is closing nothing more is sent: its operations end with the close, not
// with a complete that would read as their normal end.
func (s *socket) send(msg []byte) {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), socketWriteTimeout)
	defer cancel()
	if err := s.ws.Write(ctx, websocket.MessageText, msg); err != nil {
		s.cancel()
	}
}

// close closes the socket with code and reason, once; operations end with it.
func (s *socket) close(code int, reason string) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	s.mu.Unlock()
	s.cancel()
	// A close frame's reason holds at most 123 bytes. The handshake may wait for the
	// client's answer: not on the caller's time.
	go func() { _ = s.ws.Close(websocket.StatusCode(code), clip(reason, 123)) }()
}
