package graph

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/99designs/gqlgen/graphql"
	"github.com/coder/websocket"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"messages/graph/errcode"
	"messages/graph/extension"
	"messages/models"
)

// socketTransport serves GraphQL over WebSocket with the graphql-transport-ws protocol
// (https://github.com/enisdenjo/graphql-ws/blob/master/PROTOCOL.md), what the graphql-ws
// client speaks. Every operation a socket carries passes the Gate as a request does: the
// credential of connection_init is authenticated (Open) and watched for revocation and
// expiry (Watch), each subscribe takes a rate-limit token before it is parsed (Admit),
// each query and mutation runs under the request deadline and a byte budget (Operation),
// and a mutation whose extensions carry an idempotencyKey runs once per key
// (Idempotent). The socket itself is bounded: connection_init within InitTimeout,
// MaxSubscriptions at once, MaxInFlight queries and mutations at once, messages of at
// most ReadLimit bytes.
//
// Close codes, as the protocol defines them, with a reason naming what was hit:
//
//	4400  a message that is not the protocol's (not JSON, an unknown type, a bad payload)
//	4401  subscribe before connection_ack
//	4403  connection_init refused, or its credential revoked or expired while open
//	4406  a subprotocol other than graphql-transport-ws
//	4408  no connection_init within InitTimeout
//	4409  subscribe with the id of an operation still running
//	4429  a second connection_init; over the caller's rate limit at connection_init; more
//	      subscriptions or operations in flight than the socket may hold; more than
//	      maxRefusedInRow operations in a row sent past the rate limit
//	1008  a ping not answered within the ping interval
//	1013  the database could not be asked at connection_init: retry later
//
// An operation refused before it runs (over the rate limit, a document that does not
// parse or validate) gets an error message for its id, and the socket stays open.
type socketTransport struct {
	gate Gate
	o    SocketOptions
}

// Subprotocol is graphql-transport-ws, the only WebSocket subprotocol served.
const Subprotocol = "graphql-transport-ws"

// SocketOptions bound each GraphQL WebSocket; zero fields take the defaults.
type SocketOptions struct {
	// InitTimeout is how long a socket may stay open without connection_init.
	InitTimeout time.Duration
	// MaxSubscriptions is how many subscriptions one socket may hold at once.
	MaxSubscriptions int
	// MaxInFlight is how many queries and mutations one socket may run at once.
	MaxInFlight int
	// ReadLimit is the largest message accepted, in bytes; larger closes with 1009.
	ReadLimit int64
	// Ping, when positive, is how often the server sends a ping, closing a socket whose
	// client has not answered the previous one (1008).
	Ping time.Duration
}

// DefaultSocketOptions: an inbox holds one or two subscriptions and runs a query or two at
// a time; an admin console a few more.
var DefaultSocketOptions = SocketOptions{
	InitTimeout:      10 * time.Second,
	MaxSubscriptions: 50,
	MaxInFlight:      16,
	ReadLimit:        128 << 10, // a 32 KiB document and a mutation's 64 KiB payload, with room
}

func (o SocketOptions) withDefaults() SocketOptions {
	d := DefaultSocketOptions
	if o.InitTimeout <= 0 {
		o.InitTimeout = d.InitTimeout
	}
	if o.MaxSubscriptions <= 0 {
		o.MaxSubscriptions = d.MaxSubscriptions
	}
	if o.MaxInFlight <= 0 {
		o.MaxInFlight = d.MaxInFlight
	}
	if o.ReadLimit <= 0 {
		o.ReadLimit = d.ReadLimit
	}
	return o
}

// The protocol's close codes (see socketTransport).
const (
	closeBadRequest      = 4400
	closeUnauthorized    = 4401
	closeForbidden       = 4403
	closeSubprotocol     = 4406
	closeInitTimeout     = 4408
	closeSubscriberTaken = 4409
	closeTooMany         = 4429
	closeNoPong          = 1008
	closeTryAgain        = 1013
)

// socketWriteTimeout bounds one message's write: a client that stops reading is closed
// rather than holding its operations' goroutines.
const socketWriteTimeout = 10 * time.Second

var _ graphql.Transport = socketTransport{}

// Supports takes WebSocket upgrades.
func (socketTransport) Supports(r *http.Request) bool {
	return r.Method == http.MethodGet && r.Header.Get("Upgrade") != ""
}

// Do upgrades the request and serves the socket until it closes.
func (t socketTransport) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	// The server's read and write timeouts bound a request's transfer; a socket's first
	// message is bounded by InitTimeout instead, and its operations each by the Gate.
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Time{})
	_ = rc.SetWriteDeadline(time.Time{})
	ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{
		Subprotocols: []string{Subprotocol},
		// Origins are checked by the HTTP edge, with the same list as CORS.
		InsecureSkipVerify: true,
	})
	if err != nil {
		return // Accept has answered the request
	}
	s := newSocket(t, ws, exec, r)
	if ws.Subprotocol() != Subprotocol {
		s.close(closeSubprotocol, "Subprotocol not acceptable: use "+Subprotocol)
	}
	s.serve()
}

// socket is one open WebSocket and the operations it runs.
type socket struct {
	t       socketTransport
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
	// more for it.
	stopped bool
}

func newSocket(t socketTransport, ws *websocket.Conn, exec graphql.GraphExecutor, r *http.Request) *socket {
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

// subscribePayload is a subscribe message's operation.
type subscribePayload struct {
	Query         string         `json:"query"`
	OperationName string         `json:"operationName"`
	Variables     map[string]any `json:"variables"`
	Extensions    map[string]any `json:"extensions"`
}

// subscribe runs one operation: admitted by the caller's rate limit, then parsed and
// validated, then run in a goroutine of its own, within the socket's bounds.
func (s *socket) subscribe(id string, payload json.RawMessage) {
	s.mu.Lock()
	ctx, taken := s.caller, s.running[id] != nil
	s.mu.Unlock()
	switch {
	case ctx == nil:
		s.close(closeUnauthorized, "Unauthorized: send connection_init first")
		return
	case taken:
		s.close(closeSubscriberTaken, "Subscriber for "+clip(id, 60)+" already exists")
		return
	}
	start := graphql.Now()
	var p subscribePayload
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.UseNumber()
	if err := dec.Decode(&p); err != nil || len(payload) == 0 {
		s.close(closeBadRequest, "Invalid message received: subscribe's payload must be an object with a query")
		return
	}
	if err := s.t.gate.Admit(ctx); err != nil {
		if s.overLimit() {
			s.close(closeTooMany, "Too many requests: the socket kept sending past its rate limit; "+models.ErrorMessage(err))
			return
		}
		s.refuse(id, gqlerror.List{presentCoded(err)})
		return
	}
	s.mu.Lock()
	s.refusedInRow = 0
	s.mu.Unlock()
	params := &graphql.RawParams{Query: p.Query, OperationName: p.OperationName, Variables: p.Variables,
		Extensions: p.Extensions, Headers: s.headers, ReadTime: graphql.TraceTiming{Start: start, End: graphql.Now()}}
	ctx = graphql.StartOperationTrace(ctx)
	oc, errs := s.exec.CreateOperationContext(ctx, params)
	if errs != nil {
		res := s.exec.DispatchError(graphql.WithOperationContext(ctx, oc), errs)
		s.refuse(id, res.Errors)
		return
	}
	op := &socketOp{subscription: oc.Operation.Operation == ast.Subscription}
	s.mu.Lock()
	switch {
	case s.closed:
		s.mu.Unlock()
		return
	case op.subscription && s.subs >= s.t.o.MaxSubscriptions:
		s.mu.Unlock()
		s.close(closeTooMany, fmt.Sprintf("Too many subscriptions: at most %d on one socket", s.t.o.MaxSubscriptions))
		return
	case !op.subscription && s.inFlight >= s.t.o.MaxInFlight:
		s.mu.Unlock()
		s.close(closeTooMany, fmt.Sprintf("Too many operations in flight: at most %d queries and mutations at once on one socket", s.t.o.MaxInFlight))
		return
	}
	if op.subscription {
		s.subs++
	} else {
		s.inFlight++
	}
	ctx, op.cancel = context.WithCancel(ctx)
	s.running[id] = op
	s.mu.Unlock()
	go s.run(ctx, id, op, oc, params)
}

// run executes an operation and sends its results, then completes it.
func (s *socket) run(ctx context.Context, id string, op *socketOp, oc *graphql.OperationContext, params *graphql.RawParams) {
	defer s.done(id, op)
	if op.subscription {
		// Each event is small and made of records already in memory: no byte budget,
		// which would add up over the subscription's life.
		responses, ctx := s.exec.DispatchOperation(models.WithBudget(ctx, nil), oc)
		for {
			res := responses(ctx)
			if res == nil {
				break
			}
			s.next(id, op, encodeSocketResponse(res))
		}
		s.complete(id, op)
		return
	}
	ctx, release := s.t.gate.Operation(ctx)
	defer release()
	serve := func(ctx context.Context, c extension.IdempotencyClaim) []byte {
		responses, ctx := s.exec.DispatchOperation(extension.WithClaim(ctx, c), oc)
		return encodeSocketResponse(responses(ctx))
	}
	key, _ := params.Extensions["idempotencyKey"].(string)
	if key == "" || oc.Operation.Operation != ast.Mutation {
		// More than one result only when a fragment is deferred.
		responses, ctx := s.exec.DispatchOperation(ctx, oc)
		for res := responses(ctx); res != nil; res = responses(ctx) {
			s.next(id, op, encodeSocketResponse(res))
		}
		s.complete(id, op)
		return
	}
	body, _, err := s.t.gate.Idempotent(ctx, key, serve)
	if err != nil {
		s.refuse(id, gqlerror.List{presentCoded(err)})
		return
	}
	s.next(id, op, body)
	s.complete(id, op)
}

// done uncounts a finished operation.
func (s *socket) done(id string, op *socketOp) {
	op.cancel()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running[id] == op {
		delete(s.running, id)
	}
	if op.subscription {
		s.subs--
	} else {
		s.inFlight--
	}
}

// stop ends the operation the client completed; nothing more is sent for it.
func (s *socket) stop(id string) {
	s.mu.Lock()
	op := s.running[id]
	if op != nil {
		op.stopped = true
		delete(s.running, id)
	}
	s.mu.Unlock()
	if op != nil {
		op.cancel()
	}
}

// next sends one result of op, unless the client completed it.
func (s *socket) next(id string, op *socketOp, payload []byte) {
	s.mu.Lock()
	stopped := op.stopped
	s.mu.Unlock()
	if !stopped && payload != nil {
		s.send(appendMessage(nil, "next", id, payload))
	}
}

// complete tells the client op has no more results, unless the client completed it.
func (s *socket) complete(id string, op *socketOp) {
	s.mu.Lock()
	stopped := op.stopped
	s.mu.Unlock()
	if !stopped {
		s.send(appendMessage(nil, "complete", id, nil))
	}
}

// refuse answers an operation refused before it ran with an error message, which ends it.
func (s *socket) refuse(id string, errs gqlerror.List) {
	b, err := json.Marshal(capErrors(errs))
	if err != nil {
		b = []byte(`[{"message":"internal error","extensions":{"code":"INTERNAL_SERVER_ERROR"}}]`)
	}
	s.send(appendMessage(nil, "error", id, b))
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

// appendMessage appends a protocol message: its type, its id when given, and payload
// (JSON) when given.
func appendMessage(b []byte, typ, id string, payload []byte) []byte {
	b = append(b, `{"type":`...)
	b = strconv.AppendQuote(b, typ)
	if id != "" {
		b = append(b, `,"id":`...)
		b = appendJSONString(b, id)
	}
	if len(payload) > 0 {
		b = append(append(b, `,"payload":`...), payload...)
	}
	return append(b, '}')
}

// appendJSONString appends s as a JSON string.
func appendJSONString(b []byte, s string) []byte {
	q, err := json.Marshal(s)
	if err != nil {
		return append(b, `""`...)
	}
	return append(b, q...)
}

// encodeSocketResponse is a result's JSON, as an HTTP answer's body would be.
func encodeSocketResponse(res *graphql.Response) []byte {
	if res == nil {
		return nil
	}
	res.Errors = capErrors(res.Errors)
	b, err := encodeResponse(res)
	if err != nil {
		// Only a resolver's unmarshalable value gets here.
		return []byte(`{"errors":[{"message":"internal error","extensions":{"code":"INTERNAL_SERVER_ERROR"}}],"data":null}`)
	}
	return b
}

// presentCoded is a coded error as a GraphQL error: its message and extensions.code.
func presentCoded(err error) *gqlerror.Error {
	return &gqlerror.Error{Message: models.ErrorMessage(err), Extensions: map[string]any{"code": errcode.Of(err)}}
}

// clip cuts s to at most n bytes, on a character boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
