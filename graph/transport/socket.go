package transport

import (
	"net/http"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/lesismal/nbio/nbhttp/websocket"
)

// WebSocket serves GraphQL over WebSocket with the graphql-transport-ws protocol
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
// A socket under load waits, it is not closed: a client that sends more queries and
// mutations than MaxInFlight (Apollo Client's GraphQLWsLink sends a page's queries at
// once) has the rest handled in turn as the running ones finish, its later messages
// waiting unhandled meanwhile (back-pressure; socket.receive bounds them). An operation
// refused gets an error message for its id, and the socket stays open: past the rate
// limit (RATE_LIMITED, saying when to retry), past MaxSubscriptions, past the bytes a
// socket may have waiting, a document that does not parse or validate.
//
// Close codes, with a reason naming what was hit. Those of the protocol are 44xx, and
// graphql-ws's client takes 4400, 4401, 4406, 4409 and 4429 as fatal (it never
// reconnects), so none of them is used for load or limits: where the server must close
// a socket for those, it uses 1013, which the client retries with back-off.
//
//	4400  a message that is not the protocol's (not JSON, an unknown type, a bad payload)
//	4401  subscribe before connection_ack
//	4403  connection_init refused, or its credential revoked or expired while open
//	4406  a subprotocol other than graphql-transport-ws
//	4408  no connection_init within InitTimeout
//	4409  subscribe with the id of an operation still running
//	4429  a second connection_init (what the protocol reserves it for)
//	1008  a ping not answered within the ping interval
//	1013  Try Again Later: over the caller's rate limit at connection_init, or the
//	      database could not be asked then; more than twice maxInboxBytes of messages
//	      other than subscribes waiting
//
// An idle socket costs no goroutine: the process's poller reads every socket
// (poller.go), and the server pings each one with a WebSocket ping frame every Ping,
// which browsers and WebSocket libraries answer by themselves.
type WebSocket struct {
	gate Gate
	o    SocketOptions
	// upgrader is what each upgrade copies and completes with its socket's handlers.
	upgrader *websocket.Upgrader
	// pings pings the acknowledged sockets every o.Ping; nil when o.Ping is 0.
	pings *pinger
}

// NewWebSocket returns the transport whose sockets pass gate and are bounded by o; zero
// fields of o take DefaultSocketOptions.
func NewWebSocket(gate Gate, o SocketOptions) WebSocket {
	o = o.withDefaults()
	u := websocket.NewUpgrader()
	u.Subprotocols = []string{subprotocol}
	// Origins are checked by the HTTP edge, with the same list as CORS.
	u.CheckOrigin = func(*http.Request) bool { return true }
	// No read deadline: a socket is kept, or closed, by its pings (Ping).
	u.KeepaliveTime = 0
	u.MessageLengthLimit = int(o.ReadLimit)
	// A connection the poller cannot take is read by a goroutine, written synchronously
	// (under the poller's write timeout), as the poller writes.
	u.BlockingModAsyncWrite = false
	_, _ = poller() // started now; an error is answered on each upgrade (Do)
	t := WebSocket{gate: gate, o: o, upgrader: u}
	if o.Ping > 0 {
		t.pings = newPinger(o.Ping)
	}
	return t
}

// subprotocol is graphql-transport-ws, the only WebSocket subprotocol served.
const subprotocol = "graphql-transport-ws"

// SocketOptions bound each GraphQL WebSocket; zero fields take the defaults.
type SocketOptions struct {
	// InitTimeout is how long a socket may stay open without connection_init.
	InitTimeout time.Duration
	// MaxSubscriptions is how many subscriptions one socket may hold at once; one more
	// is refused by itself.
	MaxSubscriptions int
	// MaxInFlight is how many queries and mutations one socket runs at once; the next
	// waits until one finishes.
	MaxInFlight int
	// ReadLimit is the largest message accepted, in bytes: a larger one is refused on its
	// frame's header, with a 1009 close frame, and the connection dropped at once.
	ReadLimit int64
	// Ping is how often the server sends a ping frame, closing a socket whose client has
	// not answered the previous one (1008); a negative Ping sends none.
	Ping time.Duration
}

// DefaultSocketOptions: an inbox holds one or two subscriptions and runs a query or two at
// a time; an admin console a few more.
var DefaultSocketOptions = SocketOptions{
	InitTimeout:      10 * time.Second,
	MaxSubscriptions: 50,
	MaxInFlight:      16,
	ReadLimit:        128 << 10, // a 32 KiB document and a mutation's 64 KiB payload, with room
	// As graphql-ws's own server: it finds a vanished client within two intervals, and
	// keeps proxies that close idle connections (often after 60 s) from closing a socket.
	Ping: 12 * time.Second,
}

// withDefaults returns o with DefaultSocketOptions' value in each zero field.
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
	if o.Ping == 0 {
		o.Ping = d.Ping
	}
	return o
}

// The protocol's close codes (see WebSocket).
const (
	closeBadRequest      = 4400
	closeUnauthorized    = 4401
	closeForbidden       = 4403
	closeSubprotocol     = 4406
	closeInitTimeout     = 4408
	closeSubscriberTaken = 4409
	closeSecondInit      = 4429
	closeNoPong          = 1008
	closeTryAgain        = 1013
	closeNormal          = 1000
)

// socketWriteTimeout bounds one message's write: a client that stops reading is closed
// rather than holding its operations' goroutines.
const socketWriteTimeout = 10 * time.Second

var _ graphql.Transport = WebSocket{}

// Supports takes WebSocket upgrades.
func (WebSocket) Supports(r *http.Request) bool {
	return r.Method == http.MethodGet && r.Header.Get("Upgrade") != ""
}

// Do upgrades the request and hands the socket over to the poller.
func (t WebSocket) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	pl, err := poller()
	if err != nil {
		http.Error(w, "WebSockets are unavailable on this instance: retry, or use the event stream", http.StatusServiceUnavailable)
		return
	}
	s := newSocket(t, exec, r)
	u := *t.upgrader
	u.Engine = pl.engine
	s.handlers(&u)
	h := &handover{ResponseWriter: w}
	ws, err := u.UpgradeAndTransferConnToPoller(h, r, nil)
	if err != nil {
		// Answered unless the connection was taken: then it is closed.
		h.abandon()
		s.cancel()
		return
	}
	s.opened(ws, h.uncounter())
	switch {
	case h.early:
		s.close(closeBadRequest, "Invalid message received: sent before the handshake's answer")
	case ws.Subprotocol() != subprotocol:
		s.close(closeSubprotocol, "Subprotocol not acceptable: use "+subprotocol)
	}
}
