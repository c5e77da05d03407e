package inboxsocket

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/coder/websocket"

	"messages/models"
	"messages/models/changefeed"
	"messages/models/service"
)

// Close codes, each with a reason naming what was hit. None ends the client's live
// updates for good: its socket (partysocket 1.3, as @novu/js 3.19.2 opens it) reconnects
// after every close and every refused upgrade, with back-off from 3 s to 10 s and no limit
// on attempts, so load is answered with 1013 and limits with 429 before the upgrade.
const (
	// closeForbidden: the session expired or the API key that issued it was revoked,
	// as the GraphQL socket closes for the same reasons.
	closeForbidden = 4403
	// closeRestart: the server is shutting down; reconnect (to another instance).
	closeRestart = websocket.StatusCode(1012)
	// closeTryAgain: the client read too slowly, or the feed failed; reconnect.
	closeTryAgain = websocket.StatusTryAgainLater
)

// maxBatch is how many queued events one pass takes before the counts are read again.
const maxBatch = 64

// socket is one open inbox socket.
type socket struct {
	h       *Handler
	ctx     context.Context // the caller's; cancelled when the socket closes
	cancel  context.CancelFunc
	release func()
	sub     *changefeed.Subscription
	counts  *service.CountFollow // the subscriber's in-app counts, shared (events.go)
	ws      *websocket.Conn
	stop    func() // stops the watch of the credential

	// taking is set while a goroutine takes the queued events; it is set from the
	// socket's creation until start, so none runs before there is a socket to write to.
	taking  atomic.Bool
	closing atomic.Bool
	// The counts the client was last told, known only to the goroutine taking events
	// (one at a time); -1 when a read of them failed.
	unread models.UnreadCounts
	unseen int
	// announced are the ids of the last messages announced, newest last, known only to
	// the goroutine taking events: the feed may deliver a change again (its GraphQL
	// clients upsert by id), and the platform's client adds each notification_received
	// to its list.
	announced []string
}

// maxAnnounced is how many announced ids a socket remembers.
const maxAnnounced = 8

// announce reports whether id is new to the client, and remembers it.
func (s *socket) announce(id string) bool {
	for _, a := range s.announced {
		if a == id {
			return false
		}
	}
	if len(s.announced) == maxAnnounced {
		copy(s.announced, s.announced[1:])
		s.announced = s.announced[:maxAnnounced-1]
	}
	s.announced = append(s.announced, id)
	return true
}

// start begins serving on ws: the credential is watched, and events queued since the
// subscription opened are taken.
func (s *socket) start(ws *websocket.Conn) {
	s.ws = ws
	s.stop = s.h.watch.Watch(s.ctx, func(err error) {
		s.close(closeForbidden, "Forbidden: "+models.ErrorMessage(err))
	})
	s.taking.Store(false)
	if len(s.sub.Events()) > 0 || s.counts.Waiting() {
		s.ready()
	}
}

// read reads the client's messages until the socket closes: each "ping" is answered
// "pong", anything else is ignored, and a socket silent for IdleTimeout is dropped.
func (s *socket) read() {
	defer s.finish()
	for {
		// Not the socket's context: a close in progress must still read the client's
		// answer.
		ctx, cancel := context.WithTimeout(context.Background(), s.h.o.IdleTimeout)
		typ, data, err := s.ws.Read(ctx)
		cancel()
		if err != nil {
			return
		}
		if typ == websocket.MessageText && string(data) == "ping" {
			s.send(pong)
		}
	}
}

// finish releases what the socket held once it is over.
func (s *socket) finish() {
	s.closing.Store(true)
	s.cancel() // closes the subscription
	if s.stop != nil {
		s.stop()
	}
	s.release()
	if s.ws != nil {
		_ = s.ws.CloseNow()
	}
}

// close closes the socket with code and reason, once.
func (s *socket) close(code websocket.StatusCode, reason string) {
	if !s.closing.CompareAndSwap(false, true) {
		return
	}
	s.cancel()
	// A close frame's reason holds at most 123 bytes. The handshake waits for the
	// client's answer: not on the caller's time.
	go func() { _ = s.ws.Close(code, clip(reason, 123)) }()
}

// send writes one message, reporting whether it went; a client that does not take it
// within WriteTimeout loses the socket.
func (s *socket) send(msg []byte) bool {
	if s.closing.Load() {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.h.o.WriteTimeout)
	defer cancel()
	return s.ws.Write(ctx, websocket.MessageText, msg) == nil
}

// ready is the subscription's signal that events are queued: it starts a goroutine to
// take them unless one is taking them already. It never blocks.
func (s *socket) ready() {
	if s.taking.CompareAndSwap(false, true) {
		go s.take()
	}
}

// take sends what the queued events say until none is left, then ends: an idle socket
// keeps no goroutine here.
func (s *socket) take() {
	for {
		if !s.pass() {
			return // the stream or the socket is over: nothing more is taken
		}
		s.taking.Store(false)
		// An event queued after the pass found none, whose ready saw taking still set,
		// is this goroutine's to take.
		if len(s.sub.Events()) == 0 && !s.counts.Waiting() || !s.taking.CompareAndSwap(false, true) {
			return
		}
	}
}

// pass takes up to maxBatch queued events, a notification_received for each message
// new to the inbox, then the counts if new ones were read, sent for what they changed.
// It reports false once the stream or the socket is over.
func (s *socket) pass() bool {
	return s.takeEvents() && s.sendCounts()
}

// takeEvents takes up to maxBatch queued events and sends a notification_received for
// each message new to the inbox. It reports false once the stream or the socket is over.
func (s *socket) takeEvents() bool {
	for range maxBatch {
		var e *changefeed.Event
		select {
		case e = <-s.sub.Events():
		default:
		}
		if e == nil {
			break
		}
		if e.Err != nil {
			s.end(e.Err)
			return false
		}
		if !e.Change.Created || !s.announce(e.Change.Message.ID) {
			continue
		}
		msg, err := notificationReceived(e.Change.Message)
		if err != nil {
			s.h.logger.Error("inbox socket: a message could not be encoded", "messageId", e.Change.Message.ID, "error", err)
			continue
		}
		if !s.send(msg) {
			return false
		}
	}
	return !s.closing.Load()
}

// end closes the socket for the reason the feed ended its stream.
func (s *socket) end(err error) {
	switch {
	case errors.Is(err, changefeed.ErrShuttingDown):
		s.close(closeRestart, "the server is shutting down: reconnect")
	case errors.Is(err, changefeed.ErrSlowConsumer):
		s.close(closeTryAgain, "the client read too slowly: reconnect")
	default:
		s.h.logger.Warn("inbox socket: the change feed ended the stream", "error", err)
		s.close(closeTryAgain, "live events failed: reconnect")
	}
}

// clip shortens s to at most n bytes, on a character boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
