package idle

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"messages/cmd/loadtest/loopback"
	"messages/graph/gqlclient"
)

// ephemeralPorts is about how many connections one source address can hold to one
// server address: Linux's default ip_local_port_range, 32768-60999.
const ephemeralPorts = 28_000

// subscriptionDocument is what every socket subscribes to, on either side: this server's
// messageEvents with what an inbox selects; the reference server's schema has the same
// fields.
const subscriptionDocument = `subscription { messageEvents { kind cursor message { _id } } }`

// fileSlack is the descriptors a process needs besides its sockets: the listener, the
// database pool, logs, the runtime's own.
const fileSlack = 1000

// raiseFileLimit lets this process, and the servers it starts (they inherit it), hold
// sockets open: each socket is a descriptor at each end. It raises the soft limit to
// what sockets need, and the hard limit too when allowed (root with CAP_SYS_RESOURCE);
// it returns the most sockets the limit then allows.
func raiseFileLimit(sockets int) (int, error) {
	want := uint64(sockets + fileSlack)
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, err
	}
	if lim.Max < want {
		raised := syscall.Rlimit{Cur: want, Max: want}
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &raised); err == nil {
			return sockets, nil
		}
	}
	// Set even when already high enough: the servers started then inherit this limit,
	// not the one this process started with.
	lim.Cur = min(want, lim.Max)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, fmt.Errorf("raising the file limit to %d: %w", lim.Cur, err)
	}
	return int(lim.Cur) - fileSlack, nil
}

// sourceClients are upgrade clients, one for each loopback source address from
// 127.0.0.2 on, so the sockets to one server spread over several addresses' ephemeral
// ports.
func sourceClients(n int) []*http.Client {
	clients := make([]*http.Client, n)
	for i := range clients {
		dialer := &net.Dialer{
			Timeout: 30 * time.Second, KeepAlive: -1, Control: loopback.DialControl,
			LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(2+i))},
		}
		clients[i] = &http.Client{Transport: &http.Transport{Proxy: nil, DialContext: dialer.DialContext, DisableKeepAlives: true}}
	}
	return clients
}

// idleSocket is one open socket and its one subscription, or one event stream (its
// subscription, with no socket, and the function that closes it).
type idleSocket struct {
	conn *gqlclient.Conn
	sub  *gqlclient.Subscription
	stop context.CancelFunc
}

// close closes the socket or the stream.
func (s idleSocket) close() {
	if s.conn != nil {
		_ = s.conn.Close()
		return
	}
	s.stop()
}

// state reports whether the subscription is still open and whether anything arrived on
// it: an idle subscription gets nothing, and ends only when its socket does.
func (s idleSocket) state() (open, got bool) {
	select {
	case _, ok := <-s.sub.Results():
		if !ok {
			return false, false
		}
		return true, true
	default:
		return true, false
	}
}

// openSockets opens n sockets to base, each acknowledged and holding one subscription
// the server has taken (a query sent after it on the same socket has been answered).
// It returns those that opened and the first error of those that did not.
func openSockets(ctx context.Context, base, apiKey string, n, dialers int, clients []*http.Client,
	open func(ctx context.Context, base, apiKey string, client *http.Client) (idleSocket, error), log io.Writer) ([]idleSocket, error) {
	out := make([]idleSocket, n)
	var opened atomic.Int64
	var mu sync.Mutex
	var firstErr error
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(dialers, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				s, err := open(ctx, base, apiKey, clients[i%len(clients)])
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					continue
				}
				out[i] = s
				if k := opened.Add(1); k%10_000 == 0 {
					fmt.Fprintf(log, "  %d sockets open\n", k)
				}
			}
		}()
	}
	for i := range n {
		if ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	sockets := out[:0]
	for _, s := range out {
		if s.sub != nil {
			sockets = append(sockets, s)
		}
	}
	if firstErr != nil {
		firstErr = fmt.Errorf("%d of %d sockets did not open; the first: %w", n-len(sockets), n, firstErr)
	}
	return sockets, errors.Join(firstErr, ctx.Err())
}

// openSocket dials url, sends connection_init with the API key (the reference server
// takes any), subscribes, and waits for a query sent after the subscription to be
// answered, so the subscription is running when it returns.
func openSocket(ctx context.Context, base, apiKey string, client *http.Client) (idleSocket, error) {
	url := "ws" + base[len("http"):] + "/graphql"
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	conn, err := gqlclient.DialWith(ctx, url, gqlclient.DialOptions{
		Payload: map[string]any{"Authorization": "ApiKey " + apiKey}, HTTPClient: client})
	if err != nil {
		return idleSocket{}, err
	}
	sub, err := conn.Subscribe(ctx, gqlclient.Request{Query: subscriptionDocument}, 1)
	if err == nil {
		err = answered(ctx, conn)
	}
	if err != nil {
		_ = conn.Close()
		return idleSocket{}, err
	}
	if open, _ := (idleSocket{conn: conn, sub: sub}).state(); !open {
		_ = conn.Close()
		return idleSocket{}, fmt.Errorf("the subscription ended at once: %v", sub.Err())
	}
	return idleSocket{conn: conn, sub: sub}, nil
}

// openStream subscribes over an event stream (graphql-sse's distinct connections mode)
// on a connection of its own, and returns once the server answered with the stream's
// first bytes; the subscription lasts until the stream is closed (idleSocket.close).
func openStream(ctx context.Context, base, apiKey string, client *http.Client) (idleSocket, error) {
	sctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	opened := make(chan error, 1)
	var sub *gqlclient.Subscription
	go func() {
		var err error
		sub, err = gqlclient.SubscribeSSE(sctx, client, base+"/graphql", http.Header{"Authorization": {"ApiKey " + apiKey}},
			gqlclient.Request{Query: subscriptionDocument}, 1)
		opened <- err
	}()
	select {
	case err := <-opened:
		if err != nil {
			stop()
			return idleSocket{}, err
		}
	case <-time.After(time.Minute):
		stop()
		return idleSocket{}, errors.New("no answer to an event stream's request within a minute")
	}
	s := idleSocket{sub: sub, stop: stop}
	if open, _ := s.state(); !open {
		stop()
		return idleSocket{}, fmt.Errorf("the stream ended at once: %v", sub.Err())
	}
	return s, nil
}

// answered runs `{ __typename }` on conn and waits for its end.
func answered(ctx context.Context, conn *gqlclient.Conn) error {
	q, err := conn.Subscribe(ctx, gqlclient.Request{Query: `{ __typename }`}, 1)
	if err != nil {
		return err
	}
	for {
		select {
		case _, ok := <-q.Results():
			if !ok {
				return q.Err()
			}
		case <-ctx.Done():
			return fmt.Errorf("no answer to a query after subscribe: %w", ctx.Err())
		}
	}
}

// countOpen counts the sockets whose subscription is still open, and those that got
// anything.
func countOpen(sockets []idleSocket) (open, got int) {
	for _, s := range sockets {
		o, g := s.state()
		if o {
			open++
		}
		if g {
			got++
		}
	}
	return open, got
}

// closeSockets closes every socket, parallel at a time.
func closeSockets(sockets []idleSocket, parallel int) {
	var wg sync.WaitGroup
	next := make(chan int)
	for range min(parallel, len(sockets)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				sockets[i].close()
			}
		}()
	}
	for i := range sockets {
		next <- i
	}
	close(next)
	wg.Wait()
}
