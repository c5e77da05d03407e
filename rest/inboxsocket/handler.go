// Package inboxsocket is the live socket of the platform's inbox client (@novu/js 3.19.2,
// which @novu/react's <Inbox /> runs on): GET /v1/inbox/socket?token=<session token>, a
// plain WebSocket without a subprotocol, the one the client's "cloud" socket
// (partysocket) opens. It tells the subscriber's browser what the change feed sees of
// its in-app messages, whoever wrote them: notification_received for each new message,
// unread_count_changed and unseen_count_changed when the counts move.
//
// The edge authenticates the upgrade with the token of its query, checks its origin,
// takes a rate-limit token and counts its connection against the caps before this
// package sees it (cmd/server/edge.Mount.TokenQuery); the socket ends, with 4403, when
// the Watcher says its session expired or the API key that issued it was revoked.
//
// An idle socket holds one goroutine, its reader, and no timer beyond its read deadline:
// events are taken by a goroutine started when the feed queues one
// (changefeed.Feed.SubscribeReady), which ends once they are sent. docs/inbox.md has
// the figure per socket.
package inboxsocket

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"messages/models"
	"messages/models/service"
)

// Watcher ends a door when its credential stops being valid (cmd/server/edge.Gate).
type Watcher interface {
	// Watch calls end, once, when ctx's credential is revoked or expires; stop
	// unregisters.
	Watch(ctx context.Context, end func(error)) (stop func())
}

// ErrorWriter answers a refused upgrade with the /v1 error body (rest.ErrorWriter).
type ErrorWriter interface {
	WriteError(w http.ResponseWriter, r *http.Request, err error)
}

// Options bound the sockets; zero fields take DefaultOptions.
type Options struct {
	// PerSubscriber is how many sockets one subscriber may hold on this instance: a
	// browser tab holds one.
	PerSubscriber int
	// IdleTimeout closes a socket that sent nothing for that long: the client pings
	// every 25 s, or once a minute from a tab the browser throttles.
	IdleTimeout time.Duration
	// ReadLimit is the largest message accepted, in bytes; the client sends only "ping".
	ReadLimit int64
	// WriteTimeout bounds one message's write: a client that stops reading is closed.
	WriteTimeout time.Duration
}

// DefaultOptions are the bounds of a socket.
var DefaultOptions = Options{
	PerSubscriber: 16,
	IdleTimeout:   150 * time.Second,
	ReadLimit:     1 << 10,
	WriteTimeout:  10 * time.Second,
}

func (o Options) withDefaults() Options {
	d := DefaultOptions
	if o.PerSubscriber <= 0 {
		o.PerSubscriber = d.PerSubscriber
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = d.IdleTimeout
	}
	if o.ReadLimit <= 0 {
		o.ReadLimit = d.ReadLimit
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = d.WriteTimeout
	}
	return o
}

// Handler serves GET /v1/inbox/socket behind the edge's guards.
type Handler struct {
	service *service.Service
	watch   Watcher
	errors  ErrorWriter
	logger  *slog.Logger
	o       Options

	mu   sync.Mutex
	held map[string]int // sockets open, by environment and subscriber
}

// New returns the socket handler over svc, whose sockets watch drops when their
// credential fails, whose refusals errs writes and whose failures logger reports.
func New(svc *service.Service, watch Watcher, errs ErrorWriter, logger *slog.Logger, o Options) *Handler {
	if logger == nil {
		logger = slog.Default()
	}
	return &Handler{service: svc, watch: watch, errors: errs, logger: logger, o: o.withDefaults(), held: map[string]int{}}
}

// inApp is the channel the inbox shows.
var inApp = models.ChannelInApp

// ServeHTTP upgrades an authenticated request of a subscriber session to the socket.
// Everything that can be refused is refused before the upgrade, with the /v1 error body:
// a request that is not an upgrade (426), a credential that is not a session (403), a
// subscriber holding PerSubscriber sockets (429), a server without live events (503).
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", "GET")
		h.errors.WriteError(w, r, &statusError{http.StatusMethodNotAllowed, "method " + r.Method + " is not allowed here"})
		return
	}
	if !websocketUpgrade(r) {
		w.Header().Set("Upgrade", "websocket")
		h.errors.WriteError(w, r, &statusError{http.StatusUpgradeRequired, "this is a WebSocket: open ws(s)://<host>/v1/inbox/socket?token=<session token>"})
		return
	}
	caller, err := models.CallerFrom(r.Context())
	if err != nil {
		h.errors.WriteError(w, r, err)
		return
	}
	if !caller.Scoped() {
		h.errors.WriteError(w, r, models.Errorf(models.EFORBIDDEN, "the inbox socket is a subscriber's: open it with a session token (?token=), not an API key"))
		return
	}
	release, ok := h.reserve(caller)
	if !ok {
		h.errors.WriteError(w, r, models.Errorf(models.ERATELIMITED, "this subscriber holds %d inbox sockets, the most one may: close one first", h.o.PerSubscriber))
		return
	}
	s, err := h.open(caller, release)
	if err != nil {
		release()
		h.errors.WriteError(w, r, err)
		return
	}
	// The server's read and write timeouts bound a request; the socket's own bound its
	// messages from here on.
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Time{})
	_ = rc.SetWriteDeadline(time.Time{})
	ws, err := websocket.Accept(smallBuffers{w}, r, &websocket.AcceptOptions{
		// The edge checked the origin, with the same list as CORS.
		InsecureSkipVerify: true,
	})
	if err != nil {
		s.finish() // Accept has answered the request
		return
	}
	ws.SetReadLimit(h.o.ReadLimit)
	s.start(ws)
	// The request's goroutine, with the guards' frames beneath it, returns here; the
	// socket's reader is a goroutine of its own.
	go s.read()
}

// reserve counts one more socket of caller's subscriber, unless it holds PerSubscriber;
// release uncounts it.
func (h *Handler) reserve(caller models.Caller) (release func(), ok bool) {
	key := caller.EnvironmentID + "/" + caller.SubscriberID
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.held[key] >= h.o.PerSubscriber {
		return nil, false
	}
	h.held[key]++
	var once sync.Once
	return func() {
		once.Do(func() {
			h.mu.Lock()
			defer h.mu.Unlock()
			if h.held[key]--; h.held[key] <= 0 {
				delete(h.held, key)
			}
		})
	}, true
}

// open subscribes to caller's in-app messages and follows their counts, in that order,
// so a change between the two is not missed.
func (h *Handler) open(caller models.Caller, release func()) (*socket, error) {
	// The socket outlives its request: its context holds the caller and nothing of the
	// request.
	ctx, cancel := context.WithCancel(models.WithCaller(context.Background(), caller))
	s := &socket{h: h, ctx: ctx, cancel: cancel, release: release}
	s.taking.Store(true) // until start: nothing is taken before there is a socket
	sub, err := h.service.Events(ctx, service.EventsQuery{Channel: &inApp, Ready: s.ready})
	if err != nil {
		cancel()
		return nil, err
	}
	s.sub = sub
	if err := s.followCounts(); err != nil {
		cancel()
		return nil, err
	}
	return s, nil
}

// websocketUpgrade reports whether r asks to upgrade to a WebSocket.
func websocketUpgrade(r *http.Request) bool {
	for _, v := range r.Header.Values("Upgrade") {
		if strings.EqualFold(v, "websocket") {
			return true
		}
	}
	return false
}

// statusError is a refusal only HTTP has words for (405, 426); the error writer answers
// with its status.
type statusError struct {
	status  int
	message string
}

func (e *statusError) Error() string { return e.message }

// HTTPStatus is the status of the refusal.
func (e *statusError) HTTPStatus() int { return e.status }
