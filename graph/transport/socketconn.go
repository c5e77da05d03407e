package transport

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/lesismal/nbio/nbhttp/websocket"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"messages/models"
)

// socket is one open WebSocket and the operations it runs. It holds no goroutine of
// its own: the poller calls it with each message, on the socket's close, and with each
// pong, and its timers with its deadlines.
type socket struct {
	t    WebSocket
	exec graphql.GraphExecutor

	// ops is cancelled when the socket closes, ending every operation.
	ops    context.Context
	cancel context.CancelFunc

	mu sync.Mutex
	// ws is the WebSocket, once upgraded; release uncounts its connection at the edge
	// once it is closed.
	ws      *websocket.Conn
	release func()
	// closed: a close frame was sent or received, and nothing more is sent; ended: the
	// connection is closed and the socket's operations ended.
	closed, ended bool
	initiated     bool
	caller        context.Context // the operations' context once connection_init is accepted
	running       map[string]*socketOp
	subs          int
	inFlight      int
	stopWatch     func()
	initTimer     *time.Timer
	// pingSlot is the socket's slot in the transport's pinger, once pinged (pinged).
	pingSlot int
	pinged   bool
	unponged bool
	// inbox holds the messages received and not yet handled, in order, and their bytes;
	// a goroutine handles them while there are any (handling).
	inbox      [][]byte
	inboxBytes int
	handling   bool
	// freed is signalled when a query or mutation finishes, for a subscribe waiting for
	// its slot (awaitSlot).
	freed chan struct{}
}

// closeWait is how long a socket the server closes waits for the client's close frame
// before its connection is closed all the same.
const closeWait = 5 * time.Second

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

// newSocket returns the socket of the upgrade request r. Its operations outlive the
// request, which ends with the upgrade, and keep its values.
func newSocket(t WebSocket, exec graphql.GraphExecutor, r *http.Request) *socket {
	ops, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
	// The request's headers are not kept (a kilobyte a socket): its operations' credential
	// is connection_init's, and no operation reads a header.
	s := &socket{t: t, exec: exec, ops: ops, cancel: cancel, running: map[string]*socketOp{}, freed: make(chan struct{}, 1)}
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

// handlers sets the socket's handlers on u, the upgrader of its request.
func (s *socket) handlers(u *websocket.Upgrader) {
	u.OnMessage(func(c *websocket.Conn, typ websocket.MessageType, data []byte) {
		s.attach(c)
		if typ != websocket.TextMessage {
			s.close(closeBadRequest, "Invalid message received: the protocol's messages are text")
			return
		}
		s.receive(data)
	})
	u.SetPongHandler(func(*websocket.Conn, string) {
		s.mu.Lock()
		s.unponged = false
		s.mu.Unlock()
	})
	u.SetCloseHandler(s.answerClose)
	u.OnClose(func(*websocket.Conn, error) { s.finish() })
}

// maxInboxBytes bounds the bytes of the messages a socket has received and not yet
// handled (while its operations in flight are at MaxInFlight, or connection_init or a
// subscribe waits on the database): past it each subscribe is refused by itself, at once
// (it then holds nothing), and the other messages (complete, ping, pong, all small) still
// wait in turn, up to twice the bound. Past that the socket is closed with 1013, which
// clients retry.
const maxInboxBytes = 1 << 20

// receive queues a message the poller read, to be handled in order on a goroutine that
// lasts as long as messages wait: the poller's own goroutine, which calls it, must not
// wait on what a message asks (the database, Redis, a slot among the operations in
// flight). The poller reads every socket, so the messages a socket's client sends while
// its operations run wait here, not in the kernel's buffer.
func (s *socket) receive(data []byte) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	if waiting := s.inboxBytes + len(data); waiting > maxInboxBytes {
		s.mu.Unlock()
		if id, ok := subscribeID(data); ok {
			s.refuse(id, gqlerror.List{presentCoded(models.Errorf(models.ERATELIMITED,
				"too many operations waiting on this socket (%d bytes of messages not yet handled): send it again once some are answered", maxInboxBytes))})
			return
		}
		if waiting > 2*maxInboxBytes {
			s.close(closeTryAgain, fmt.Sprintf("Try Again Later: more than %d bytes of messages waiting", 2*maxInboxBytes))
			return
		}
		s.mu.Lock()
	}
	// The poller reuses data once this returns.
	s.inbox = append(s.inbox, bytes.Clone(data))
	s.inboxBytes += len(data)
	start := !s.handling
	s.handling = true
	s.mu.Unlock()
	if start {
		go s.handleInbox()
	}
}

// handleInbox handles the queued messages in order until none waits.
func (s *socket) handleInbox() {
	for {
		s.mu.Lock()
		if len(s.inbox) == 0 || s.closed {
			s.inbox, s.inboxBytes, s.handling = nil, 0, false
			s.mu.Unlock()
			return
		}
		msg := s.inbox[0]
		s.inbox[0] = nil
		s.inbox = s.inbox[1:]
		s.inboxBytes -= len(msg)
		s.mu.Unlock()
		s.handle(msg)
	}
}

// attach records the socket's WebSocket, when a message came before the upgrade returned.
func (s *socket) attach(c *websocket.Conn) {
	s.mu.Lock()
	if s.ws == nil {
		s.ws = c
	}
	s.mu.Unlock()
}

// opened records the upgraded WebSocket and how to uncount its connection at the edge,
// at once if it closed already.
func (s *socket) opened(ws *websocket.Conn, release func()) {
	s.mu.Lock()
	if s.ws == nil {
		s.ws = ws
	}
	ended := s.ended
	if !ended {
		s.release = release
	}
	s.mu.Unlock()
	if ended {
		release()
	}
}

// answerClose answers the client's close frame with its code, unless the server's close
// frame went first; the poller then closes the connection.
func (s *socket) answerClose(c *websocket.Conn, code int, _ string) {
	s.mu.Lock()
	sent := s.closed
	s.closed = true
	s.mu.Unlock()
	s.cancel()
	switch {
	case sent:
	case code == 1005: // the client's frame had no code: neither has the answer
		_ = c.WriteMessage(websocket.CloseMessage, nil)
	default:
		_ = c.WriteClose(code, "")
	}
}

// finish ends every operation and stops watching the credential once the connection is
// closed, and uncounts it at the edge.
func (s *socket) finish() {
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		return
	}
	s.ended, s.closed = true, true
	stop, release := s.stopWatch, s.release
	if s.initTimer != nil {
		s.initTimer.Stop()
	}
	pinged, slot := s.pinged, s.pingSlot
	s.inbox = nil
	s.mu.Unlock()
	s.cancel()
	if pinged {
		s.t.pings.remove(s, slot)
	}
	if stop != nil {
		stop()
	}
	if release != nil {
		release()
	}
}

// subscribeID is the id of a subscribe message, read without its payload.
func subscribeID(data []byte) (string, bool) {
	var m struct {
		Type string  `json:"type"`
		ID   *string `json:"id"`
	}
	if json.Unmarshal(data, &m) != nil || m.Type != "subscribe" || m.ID == nil || *m.ID == "" {
		return "", false
	}
	return *m.ID, true
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
	if !again {
		// Not kept for the socket's life: a stopped timer is still 200 bytes.
		s.initTimer.Stop()
		s.initTimer = nil
	}
	s.mu.Unlock()
	if again {
		s.close(closeSecondInit, "Too many initialisation requests")
		return
	}
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
			// graphql-ws's client reconnects after 1013 with back-off (4429, which this was,
			// it takes as fatal and never reconnects).
			s.close(closeTryAgain, "Try Again Later: "+models.ErrorMessage(err))
		case models.ErrorCode(err) == models.EUNAVAILABLE:
			s.close(closeTryAgain, "Try Again Later: database unavailable")
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
	if s.t.pings != nil {
		s.pingSlot, s.pinged = s.t.pings.add(s, relayOf(s.ws.Conn)), true
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

// ping sends a ping frame, closing the socket when the previous one went unanswered;
// the transport's pinger calls it every Ping.
func (s *socket) ping() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	silent := s.unponged
	s.unponged = true
	ws := s.ws
	s.mu.Unlock()
	if silent {
		s.close(closeNoPong, "no pong within the ping interval")
		return
	}
	if err := ws.WriteMessage(websocket.PingMessage, nil); err != nil {
		_ = ws.Close()
	}
}

// send writes one message; a client that does not take it (its queue past the poller's
// bound, or nothing written within socketWriteTimeout) is closed. Once the socket is
// closing nothing more is sent: its operations end with the close, not with a complete
// that would read as their normal end.
func (s *socket) send(msg []byte) {
	s.mu.Lock()
	closed, ws := s.closed, s.ws
	s.mu.Unlock()
	if closed || ws == nil {
		return
	}
	if ws.IsBlockingMod() {
		// Read by a goroutine of its own (poller.go): the write waits, within a deadline.
		_ = ws.SetWriteDeadline(time.Now().Add(socketWriteTimeout))
	}
	if err := ws.WriteMessage(websocket.TextMessage, msg); err != nil {
		s.cancel()
		_ = ws.Close()
	}
}

// close closes the socket with code and reason, once; operations end with it. The
// client answers with its own close frame, on which the poller closes the connection;
// a client that does not is closed after closeWait.
func (s *socket) close(code int, reason string) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	ws := s.ws
	s.mu.Unlock()
	s.cancel()
	if ws == nil {
		return
	}
	// A close frame's reason holds at most 123 bytes.
	if err := ws.WriteClose(code, clip(reason, 123)); err != nil {
		_ = ws.Close()
		return
	}
	time.AfterFunc(closeWait, func() { _ = ws.Close() })
}
