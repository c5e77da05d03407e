package edge

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"
)

// Connection defaults: far above what one browser or SDK holds (browsers keep six
// connections to a host, an SDK's pool a few dozen), far below what exhausts the
// server's file descriptors.
const (
	// DefaultMaxConnectionsPerAddress bounds the connections one client address holds.
	DefaultMaxConnectionsPerAddress = 256
	// DefaultMaxUnauthenticatedConnections bounds the connections, all addresses
	// together, on which no request has been authenticated yet.
	DefaultMaxUnauthenticatedConnections = 1024
)

// ConnectionOptions bound the connections the server holds; 0 means unbounded.
type ConnectionOptions struct {
	// PerAddress is how many connections one client address may hold at once. Behind a
	// load balancer every client has the balancer's address: raise it or set 0 there.
	PerAddress int
	// Unauthenticated is how many connections may be open with no request authenticated
	// on them yet: what a client without a credential can hold.
	Unauthenticated int
}

// Connections bounds the connections of a listener: per client address, and those not
// yet authenticated, in total. A connection over a bound is answered at once with 429
// (its address holds too many) or 503 (too many unauthenticated) in the error body of
// errs and closed, before any of its bytes are read. A connection counts as
// authenticated once a request or a WebSocket's connection_init on it is (Gate.Open).
type Connections struct {
	o    ConnectionOptions
	errs ErrorWriter

	mu     sync.Mutex
	byAddr map[string]int
	unauth int

	open              atomic.Int64
	refusedAddress    atomic.Uint64
	refusedUnauthentd atomic.Uint64
}

// NewConnections returns the bounds of o, whose refusals errs writes.
func NewConnections(o ConnectionOptions, errs ErrorWriter) *Connections {
	return &Connections{o: o, errs: errs, byAddr: map[string]int{}}
}

// Listen wraps ln so that each connection it accepts is counted, and refused when over
// a bound.
func (c *Connections) Listen(ln net.Listener) net.Listener {
	return &boundedListener{Listener: ln, c: c}
}

// ConnContext is the http.Server's ConnContext: it lets the guards of a request mark its
// connection authenticated.
func (c *Connections) ConnContext(ctx context.Context, conn net.Conn) context.Context {
	if t, ok := conn.(*trackedConn); ok {
		return context.WithValue(ctx, connKey{}, t)
	}
	return ctx
}

// Open is the number of connections open, for metrics.
func (c *Connections) Open() int64 { return c.open.Load() }

// Unauthenticated is the number of open connections not authenticated yet, for metrics.
func (c *Connections) Unauthenticated() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.unauth
}

// Refused counts the connections refused because their address held too many
// (perAddress) and because too many were unauthenticated (unauthenticated), for metrics.
func (c *Connections) Refused() (perAddress, unauthenticated uint64) {
	return c.refusedAddress.Load(), c.refusedUnauthentd.Load()
}

type connKey struct{}

// MarkAuthenticated records that a request on ctx's connection was authenticated, so it
// no longer counts against the bound of unauthenticated connections.
func MarkAuthenticated(ctx context.Context) {
	if t, ok := ctx.Value(connKey{}).(*trackedConn); ok && t.authenticated.CompareAndSwap(false, true) {
		t.c.mu.Lock()
		t.c.unauth--
		t.c.mu.Unlock()
	}
}

// admit counts a new connection from addr, or says why it is refused.
func (c *Connections) admit(addr string) (status int, message string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.o.PerAddress > 0 && c.byAddr[addr] >= c.o.PerAddress:
		c.refusedAddress.Add(1)
		return http.StatusTooManyRequests, fmt.Sprintf("this address holds %d connections, the most one client may: reuse them", c.o.PerAddress)
	case c.o.Unauthenticated > 0 && c.unauth >= c.o.Unauthenticated:
		c.refusedUnauthentd.Add(1)
		return http.StatusServiceUnavailable, "the server holds too many connections without a credential: retry shortly"
	}
	c.byAddr[addr]++
	c.unauth++
	c.open.Add(1)
	return 0, ""
}

// release uncounts a closed connection.
func (c *Connections) release(t *trackedConn) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byAddr[t.addr]--; c.byAddr[t.addr] <= 0 {
		delete(c.byAddr, t.addr)
	}
	if !t.authenticated.Load() {
		c.unauth--
	}
	c.open.Add(-1)
}

// refuse answers a refused connection with status and closes it, without reading from
// it, in the background: a client that does not read cannot hold the accept loop.
func (c *Connections) refuse(conn net.Conn, status int, message string) {
	res := &responseBuffer{header: http.Header{}}
	req := &http.Request{Method: http.MethodGet, URL: &url.URL{Path: "/"}, Header: http.Header{}}
	c.errs.WriteError(res, req, &StatusError{Status: status, Message: message})
	res.header.Set("Connection", "close")
	res.header.Set("Content-Length", fmt.Sprint(res.body.Len()))
	if status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable {
		res.header.Set("Retry-After", "1")
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "HTTP/1.1 %d %s\r\n", status, http.StatusText(status))
	_ = res.header.Write(&b)
	b.WriteString("\r\n")
	b.Write(res.body.Bytes())
	go func() {
		_ = conn.SetWriteDeadline(time.Now().Add(time.Second))
		_, _ = conn.Write(b.Bytes())
		_ = conn.Close()
	}()
}

// boundedListener counts and bounds the connections it accepts.
type boundedListener struct {
	net.Listener
	c *Connections
}

// Accept returns the next connection within the bounds, refusing those over them.
func (l *boundedListener) Accept() (net.Conn, error) {
	for {
		conn, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		addr := conn.RemoteAddr().String()
		if host, _, err := net.SplitHostPort(addr); err == nil {
			addr = host
		}
		if status, message := l.c.admit(addr); status != 0 {
			l.c.refuse(conn, status, message)
			continue
		}
		return &trackedConn{Conn: conn, c: l.c, addr: addr}, nil
	}
}

// trackedConn is a counted connection; closing it, however often, uncounts it once. A
// hijacked connection (a WebSocket) is the same value, so it is uncounted when the socket
// closes.
type trackedConn struct {
	net.Conn
	c             *Connections
	addr          string
	authenticated atomic.Bool
	closed        atomic.Bool
}

// CloseWrite half-closes the connection when it can, as net/http does before closing a
// connection it refused (431, a body it will not read), so that the client reads the
// refusal instead of a reset.
func (t *trackedConn) CloseWrite() error {
	if cw, ok := t.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// Close closes the connection and uncounts it.
func (t *trackedConn) Close() error {
	t.uncount()
	return t.Conn.Close()
}

// uncount uncounts the connection, once.
func (t *trackedConn) uncount() {
	if !t.closed.Swap(true) {
		t.c.release(t)
	}
}

// Detach hands the connection over to an owner that closes it without this wrapper (a
// WebSocket poller, which takes the descriptor underneath): it returns the connection
// underneath and the function that uncounts it, which the owner calls once it closed
// it. Until then the connection still counts against its address's bound.
func (t *trackedConn) Detach() (net.Conn, func()) {
	return t.Conn, t.uncount
}
