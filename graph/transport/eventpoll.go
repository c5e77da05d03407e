package transport

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/99designs/gqlgen/graphql"
	"github.com/lesismal/nbio"
	"github.com/lesismal/nbio/nbhttp"

	"messages/models"
)

// A subscription over an event stream, like a WebSocket, costs no goroutine while it is
// idle: once its first bytes are sent, the connection is taken over from net/http and
// handed to the poller (poller.go), which tells the stream when the client leaves; the
// change feed calls the stream when events are queued, and a drain writes them, each as a
// chunk of the response net/http began (HTTP/1.1 chunked encoding). The handler's
// goroutine, net/http's reader of the connection and its 8 KB of buffers end with the
// handover. A stream the poller cannot take (HTTP/2, a connection that is not TCP, a
// subscription whose stream does not take a models.Readiness) keeps its handler's
// goroutine, with the same behaviour.

// polledStream is one subscription's event stream on the poller.
type polledStream struct {
	// cancel ends the subscription, with the reason of its last event when it is not the
	// client's leaving.
	cancel    context.CancelCauseFunc
	stopWatch func()
	release   func() // uncounts the connection at the edge

	responses graphql.ResponseHandler
	ctx       context.Context
	queued    func() bool
	armed     atomic.Bool
	taking    atomic.Bool

	mu   sync.Mutex
	conn *nbio.Conn
	// pingSlot is the stream's slot in streamPings, once registered (pinged).
	pingSlot int
	pinged   bool
	ended    bool // the last chunk was written, or the connection closed
	closed   bool // the subscription ended and what watched it stopped
}

// pollSubscription serves the subscription oc on the poller, having sent the stream's
// first bytes through w; it reports false, having done nothing, when the stream cannot go
// there (the caller then serves it on its goroutine).
func (t EventStream) pollSubscription(ctx context.Context, s *eventStream, r *http.Request, exec graphql.GraphExecutor, oc *graphql.OperationContext) bool {
	pl, err := poller()
	if err != nil || r.ProtoMajor != 1 {
		return false
	}
	// The stream outlives the request, which ends with the handover, and keeps its values.
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	p := &polledStream{cancel: cancel}
	readiness := models.NewReadiness(func() { p.ready() })
	p.stopWatch = t.gate.Watch(ctx, func(err error) { cancel(err) })
	p.responses, p.ctx = exec.DispatchOperation(models.WithReadiness(models.WithBudget(ctx, nil), readiness), oc)
	queued, claimed := readiness.Claimed()
	if !claimed {
		// Its stream waits on a goroutine: it stays on the handler's, which ends the
		// subscription when the client leaves.
		stop := context.AfterFunc(r.Context(), func() { cancel(nil) })
		defer stop()
		defer p.stopWatch()
		s.relay(p.ctx, p.responses)
		return true
	}
	p.queued = queued
	conn, err := handOver(pl.engine, s.w, p)
	if err != nil {
		// The connection could not be taken over: closed, and the subscription with it.
		p.close()
		return true
	}
	p.mu.Lock()
	p.conn, p.release = conn.nbc, conn.release
	if !p.closed {
		p.pingSlot, p.pinged = streamPings().add(p, relayOf(conn.nbc)), true
	}
	p.mu.Unlock()
	p.armed.Store(true)
	// Its end (the client's leaving, a revoked credential) is written by a drain too.
	context.AfterFunc(p.ctx, p.ready)
	p.ready() // what was queued before it was armed
	return true
}

// polledConn is a connection handed over to the poller.
type polledConn struct {
	nbc     *nbio.Conn
	release func()
}

// handOver takes w's connection from net/http (what it has buffered of the response
// written first) and adds it to the poller, which calls session's CloseAndClean when the
// client leaves; what the client sends is dropped (an event stream's client sends
// nothing).
func handOver(engine *nbhttp.Engine, w http.ResponseWriter, session nbhttp.ParserCloser) (polledConn, error) {
	h := &handover{ResponseWriter: w}
	conn, brw, err := h.Hijack()
	if err != nil {
		return polledConn{}, err
	}
	release := h.uncounter()
	fail := func(err error) (polledConn, error) {
		_ = conn.Close()
		release()
		return polledConn{}, err
	}
	if err := brw.Flush(); err != nil {
		return fail(err)
	}
	if _, ok := conn.(*net.TCPConn); !ok {
		return fail(errors.New("not a TCP connection"))
	}
	nbc, err := nbio.NBConn(conn) // closes conn, keeping a duplicate of its descriptor
	if err != nil {
		return fail(err)
	}
	nbc.SetSession(session)
	nbc.OnData(func(*nbio.Conn, []byte) {})
	if err := engine.AddTransferredConn(nbc); err != nil {
		release()
		return polledConn{}, err
	}
	return polledConn{nbc: nbc, release: release}, nil
}

// ready is called by the stream when events are queued: it starts a drain unless one runs.
func (p *polledStream) ready() {
	if p.armed.Load() && p.taking.CompareAndSwap(false, true) {
		go p.drain()
	}
}

// drain writes what the stream has queued, and ends the response when the stream ends:
// its subscription ended, its client left, or its credential stopped being valid (then
// with a last event carrying the reason).
func (p *polledStream) drain() {
	for {
		if p.ctx.Err() != nil {
			p.end()
			return
		}
		for p.queued() {
			res := p.responses(p.ctx)
			if res == nil || p.ctx.Err() != nil {
				p.end()
				return
			}
			p.write(eventNext(encodeResult(res)))
		}
		p.taking.Store(false)
		if (!p.queued() && p.ctx.Err() == nil) || !p.taking.CompareAndSwap(false, true) {
			return
		}
	}
}

// eventNext is the event of one result.
func eventNext(data []byte) []byte {
	b := make([]byte, 0, len(data)+20)
	b = append(b, "event: next\ndata: "...)
	b = append(b, data...)
	return append(b, "\n\n"...)
}

// write sends text as one chunk of the response. A connection that takes no more is
// closed, once the stream's lock is released: the poller calls CloseAndClean as it closes.
func (p *polledStream) write(text []byte) {
	p.mu.Lock()
	if p.ended || p.conn == nil {
		p.mu.Unlock()
		return
	}
	chunk := make([]byte, 0, len(text)+12)
	chunk = strconv.AppendInt(chunk, int64(len(text)), 16)
	chunk = append(chunk, "\r\n"...)
	chunk = append(chunk, text...)
	chunk = append(chunk, "\r\n"...)
	conn := p.conn
	_, err := conn.Write(chunk)
	if err != nil {
		p.ended = true
	}
	p.mu.Unlock()
	if err != nil {
		_ = conn.Close()
	}
}

// streamPings pings the polled event streams every eventStreamKeepAlive.
var streamPings = sync.OnceValue(func() *pinger { return newPinger(eventStreamKeepAlive) })

// keepAliveComment is the comment an idle stream gets every eventStreamKeepAlive.
var keepAliveComment = []byte(": ping\n\n")

// ping writes the keep-alive comment; streamPings calls it.
func (p *polledStream) ping() { p.write(keepAliveComment) }

// end writes the reason the subscription was ended for, when it was not its end or the
// client's leaving, the complete event and the response's last chunk, and closes the
// connection.
func (p *polledStream) end() {
	if cause := endCause(p.ctx); cause != nil {
		p.write(eventNext(causeResult(cause)))
	}
	p.write([]byte("event: complete\n\n"))
	p.mu.Lock()
	conn := p.conn
	if !p.ended && conn != nil {
		p.ended = true
		_, _ = conn.Write([]byte("0\r\n\r\n"))
	}
	p.mu.Unlock()
	if conn != nil {
		_ = conn.Close()
	}
	p.close()
}

// close ends the subscription and stops what watched it, once the response ended or the
// connection closed.
func (p *polledStream) close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.ended, p.closed = true, true
	pinged, slot := p.pinged, p.pingSlot
	release := p.release
	p.release = nil
	p.mu.Unlock()
	if pinged {
		streamPings().remove(p, slot)
	}
	p.cancel(nil)
	p.stopWatch()
	if release != nil {
		release()
	}
}

// The poller's session of the connection (nbhttp.ParserCloser): what arrives is dropped,
// and the connection's close ends the subscription.

// UnderlayerConn is the connection.
func (p *polledStream) UnderlayerConn() net.Conn {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.conn
}

// Parse drops what the client sent.
func (p *polledStream) Parse([]byte) error { return nil }

// CloseAndClean is called by the poller once the connection is closed.
func (p *polledStream) CloseAndClean(error) { p.close() }
