package transport

import (
	"bufio"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/lesismal/nbio"
	"github.com/lesismal/nbio/logging"
	"github.com/lesismal/nbio/nbhttp"
)

// An open GraphQL WebSocket costs no goroutine while it is idle. Once upgraded, its
// connection is handed over to the poller (nbio's engine over epoll): the poller's
// goroutine reads what arrives on every socket and answers control frames itself, and a
// socket's messages are handled in order on a goroutine that lives only while they wait
// (socket.receive). What an idle socket holds is its state (the socket, the WebSocket's
// framing state, its subscriptions as registrations): about 16 KB of memory, against
// about 50 KB when a goroutine read each socket with its stack and buffers. A connection
// the poller cannot take (not TCP: TLS terminated here) is read by a goroutine of its
// own, with the same behaviour.

// pollerReadLimit bounds the bytes a socket's partial frames may hold while they arrive,
// above the largest message any socket accepts (SocketOptions.ReadLimit).
const pollerReadLimit = 1 << 20

// pollerWriteBuffer bounds the bytes queued for a client that does not read: past it the
// socket is closed rather than holding the server's memory.
const pollerWriteBuffer = 4 << 20

// polling is the process's one poller, started with the first transport that uses it (so
// its fixed cost is paid at start, not by the first socket): like the runtime's own
// network poller it serves every listener, and it lives as long as the process.
type polling struct {
	engine *nbhttp.Engine
	// relays run work on the poller's goroutines, one for each (relay).
	relays []*relay
}

var poller = sync.OnceValues(func() (*polling, error) {
	logging.SetLogger(pollerLog{})
	e := nbhttp.NewEngine(nbhttp.Config{
		Name:                    "websocket",
		ReleaseWebsocketPayload: true,
		SupportServerOnly:       true, // no pool for client connections, which it never makes
		// What the poller reads is handled on its own goroutine: control frames (a pong, a
		// close) at once, and a socket's messages queued for a goroutine of the socket's
		// that lasts while they wait (socket.receive), as connection_init and subscribe
		// may wait on the database or Redis, which must not hold other sockets'.
		ServerExecutor:     func(f func()) { f() },
		ReadLimit:          pollerReadLimit,
		MaxWriteBufferSize: pollerWriteBuffer,
		WriteTimeout:       socketWriteTimeout,
		// 64 KiB frames: a page of results goes out in a few.
		MaxWebsocketFramePayloadSize: 64 << 10,
	})
	if err := e.Start(); err != nil {
		return nil, fmt.Errorf("websocket poller: %w", err)
	}
	relays, err := newRelays(e)
	if err != nil {
		e.Stop()
		return nil, fmt.Errorf("websocket poller: %w", err)
	}
	return &polling{engine: e, relays: relays}, nil
})

// relayOf is the relay into the poller goroutine that reads conn, nil when the poller
// does not read it.
func relayOf(conn net.Conn) *relay {
	nbc, ok := conn.(*nbio.Conn)
	if !ok {
		return nil
	}
	p, err := poller()
	if err != nil || len(p.relays) == 0 {
		return nil
	}
	return p.relays[nbc.Hash()%len(p.relays)]
}

// A relay runs functions on one of the poller's goroutines, the one that reads the
// connections it is the relay of. The keep-alive pings go through it: written on the
// goroutine that reads their answers, in one batch, the pongs gather while it writes and
// are read in a few of its wakes, where a pinger of its own woke it for one or two pongs
// at a time, and the runtime with it (at 10,000 idle sockets, a few hundred wakes every
// few seconds: most of the process's idle CPU).
//
// It is one end of a socket pair that the poller reads: run queues the function and, when
// the queue was empty, writes a byte to the other end; the poller, reading it, runs what
// is queued.
type relay struct {
	// wake writes the byte that wakes the poller; an error means it will not come.
	wake func() error

	mu   sync.Mutex
	jobs []func()
}

// run has f called on the relay's poller goroutine, after what was queued before it.
// f must not block: the poller reads every connection of its goroutine.
func (r *relay) run(f func()) {
	r.mu.Lock()
	first := len(r.jobs) == 0
	r.jobs = append(r.jobs, f)
	r.mu.Unlock()
	if !first {
		return
	}
	if err := r.wake(); err != nil {
		// Cannot happen while the process runs; the work is done here rather than lost.
		r.drain()
	}
}

// drain runs what is queued; the poller calls it when the wake arrives.
func (r *relay) drain() {
	r.mu.Lock()
	jobs := r.jobs
	r.jobs = nil
	r.mu.Unlock()
	for _, f := range jobs {
		f()
	}
}

// pollerLog sends the poller's own warnings and errors to the process's log; its
// informational lines (engine started) are dropped.
type pollerLog struct{}

func (pollerLog) Debug(string, ...any) {}
func (pollerLog) Info(string, ...any)  {}
func (pollerLog) Warn(format string, v ...any) {
	slog.Warn("websocket poller", "detail", clip(fmt.Sprintf(format, v...), 2048))
}
func (pollerLog) Error(format string, v ...any) {
	slog.Error("websocket poller", "detail", clip(fmt.Sprintf(format, v...), 2048))
}

// detachable is a connection the server's edge counts (against its address's bound):
// handed over, it gives the connection underneath, which the poller can take, and the
// function that uncounts it once closed.
type detachable interface {
	Detach() (net.Conn, func())
}

// handover is the upgraded request's response writer as the poller's upgrader sees it:
// hijacking gives the connection underneath the edge's counting wrapper, and records
// what the new owner must do: uncount it once closed, and refuse it when the client sent
// bytes before the handshake's answer (RFC 6455 4.1 forbids it; net/http has read them
// into a buffer the poller never sees).
type handover struct {
	http.ResponseWriter
	conn    net.Conn // once hijacked
	release func()
	early   bool
}

// Hijack takes the connection over from net/http.
func (h *handover) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, brw, err := http.NewResponseController(h.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	h.early = brw.Reader.Buffered() > 0
	if d, ok := conn.(detachable); ok {
		conn, h.release = d.Detach()
	}
	h.conn = conn
	// The server's read and write timeouts bound a request's transfer; a socket's first
	// message is bounded by InitTimeout instead, and its operations each by the Gate.
	_ = conn.SetDeadline(time.Time{})
	return conn, brw, nil
}

// uncounter is what uncounts the connection at the edge once it is closed (nothing
// when it was not counted there). It is the edge's function itself, not one that keeps
// the handover: that would keep the response writer, and with it net/http's buffers of
// the connection, 8 KB for as long as the socket is open.
func (h *handover) uncounter() func() {
	if h.release != nil {
		return h.release
	}
	return func() {}
}

// abandon closes the connection of an upgrade that failed after the hijack.
func (h *handover) abandon() {
	if h.conn != nil {
		_ = h.conn.Close()
		h.uncounter()()
	}
}
