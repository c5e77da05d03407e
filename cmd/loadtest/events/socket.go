package events

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"messages/cmd/loadtest/loopback"
	"messages/cmd/loadtest/report"
	"messages/graph/gqlclient"
)

// newWebSocketClient makes upgrade requests over loopback only; rcvbuf > 0 sets each
// socket's receive buffer (SO_RCVBUF) in bytes, so a client that stops reading stops
// taking data after that much.
func newWebSocketClient(rcvbuf int) *http.Client {
	dialer := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: -1, Control: func(network, address string, rc syscall.RawConn) error {
		if err := loopback.DialControl(network, address, rc); err != nil {
			return err
		}
		if rcvbuf <= 0 {
			return nil
		}
		var serr error
		err := rc.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, rcvbuf) })
		return errors.Join(err, serr)
	}}
	return &http.Client{Transport: &http.Transport{Proxy: nil, DialContext: dialer.DialContext, DisableKeepAlives: true}}
}

// wsURL is base's GraphQL endpoint as a WebSocket URL.
func wsURL(base string) string { return "ws" + strings.TrimPrefix(base, "http") + "/graphql" }

// dial opens one acknowledged socket to base with the API key.
func (b *eventsBench) dial(ctx context.Context, base string, client *http.Client) (*gqlclient.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return gqlclient.DialWith(ctx, wsURL(base), gqlclient.DialOptions{
		Payload: map[string]any{"Authorization": "ApiKey " + b.c.apiKey}, HTTPClient: client})
}

// subscribe starts query on conn and returns once the server has run its resolver: a
// query on the same socket, answered after it, orders the subscription before what the
// caller does next.
func subscribe(ctx context.Context, conn *gqlclient.Conn, query string, vars map[string]any, buffer int) (*gqlclient.Subscription, error) {
	s, err := conn.Subscribe(ctx, gqlclient.Request{Query: query, Variables: vars}, buffer)
	if err != nil {
		return nil, err
	}
	ping, err := conn.Subscribe(ctx, gqlclient.Request{Query: `{ __typename }`}, 1)
	if err != nil {
		return nil, err
	}
	t := time.NewTimer(30 * time.Second)
	defer t.Stop()
	for {
		select {
		case _, ok := <-ping.Results():
			if !ok {
				return s, ping.Err()
			}
		case <-t.C:
			return nil, errors.New("the server did not answer a query after subscribe within 30s")
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// eventsQuery is what a subscriber of the benchmark selects: what an inbox needs to
// place the event and resume after it.
const eventsQuery = `subscription($s: String) {
  messageEvents(subscriberId: $s) { kind cursor message { _id subscriber { subscriberId } } }
}`

// receivedEvent is one result of messageEvents as the benchmark reads it.
type receivedEvent struct {
	kind, id, subscriber string
	// code is the first error's extensions.code: a result that ends the stream.
	code string
}

// decodeEvent reads a messageEvents result.
func decodeEvent(r gqlclient.Result) (receivedEvent, error) {
	var e receivedEvent
	if len(r.Errors) > 0 {
		e.code = r.Errors[0].Code()
		if e.code == "" {
			e.code = "UNKNOWN"
		}
		return e, nil
	}
	var d struct {
		MessageEvents *struct {
			Kind    string `json:"kind"`
			Message *struct {
				ID         string `json:"_id"`
				Subscriber *struct {
					SubscriberID string `json:"subscriberId"`
				} `json:"subscriber"`
			} `json:"message"`
		} `json:"messageEvents"`
	}
	if err := json.Unmarshal(r.Data, &d); err != nil {
		return e, err
	}
	if d.MessageEvents == nil || d.MessageEvents.Message == nil {
		return e, fmt.Errorf("event without a message: %s", report.Clip(string(r.Data), 200))
	}
	e.kind, e.id = d.MessageEvents.Kind, d.MessageEvents.Message.ID
	if s := d.MessageEvents.Message.Subscriber; s != nil {
		e.subscriber = s.SubscriberID
	}
	return e, nil
}

// socketSet is a group of sockets, each with its subscriptions, closed together.
type socketSet struct {
	mu    sync.Mutex
	conns []*gqlclient.Conn
}

func (s *socketSet) add(c *gqlclient.Conn) {
	s.mu.Lock()
	s.conns = append(s.conns, c)
	s.mu.Unlock()
}

func (s *socketSet) closeAll(parallel int) {
	s.mu.Lock()
	conns := s.conns
	s.conns = nil
	s.mu.Unlock()
	forEach(len(conns), parallel, func(i int) { _ = conns[i].Close() })
}

// forEach calls f(0..n-1) on up to parallel goroutines.
func forEach(n, parallel int, f func(i int)) {
	var wg sync.WaitGroup
	next := make(chan int)
	for range min(parallel, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				f(i)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}

// listener counts the events of one subscription and keeps the time of the last.
type listener struct {
	events atomic.Int64
	wrong  atomic.Int64 // events of another subscriber
	last   atomic.Int64 // unix nanoseconds
	ended  atomic.Value // the error code that ended the stream, if any
}

// listen reads s until it ends; want is the subscriber the events must be for ("" any).
func (l *listener) listen(s *gqlclient.Subscription, want string, arrivals chan<- time.Time) {
	for r := range s.Results() {
		at := time.Now()
		ev, err := decodeEvent(r)
		if err != nil {
			continue
		}
		if ev.code != "" {
			l.ended.Store(ev.code)
			continue
		}
		if want != "" && ev.subscriber != want {
			l.wrong.Add(1)
		}
		l.events.Add(1)
		l.last.Store(at.UnixNano())
		if arrivals != nil {
			arrivals <- at
		}
	}
}

// countEvents adds up what listeners received (a nil one did not open): the events, the
// listeners that got exactly per, and the events for the wrong subscriber.
func countEvents(listeners []*listener, per int) (got, complete, wrong int) {
	for _, l := range listeners {
		if l == nil {
			continue
		}
		e := int(l.events.Load())
		got += e
		if e == per {
			complete++
		}
		wrong += int(l.wrong.Load())
	}
	return got, complete, wrong
}

// openSubscriptions opens n sockets to the base URL, each with one subscription to
// subscriber subs[i % len(subs)], counted by listeners[i]. It returns how many opened.
func (b *eventsBench) openSubscriptions(ctx context.Context, set *socketSet, n int, subs []subscriberRef, arrivals chan<- time.Time) ([]*listener, int, error) {
	listeners := make([]*listener, n)
	var opened atomic.Int64
	var mu sync.Mutex
	var firstErr error
	forEach(n, b.c.dialers, func(i int) {
		if ctx.Err() != nil {
			return
		}
		conn, err := b.dial(ctx, b.c.baseURL, b.ws)
		var s *gqlclient.Subscription
		if err == nil {
			set.add(conn)
			s, err = subscribe(ctx, conn, eventsQuery, map[string]any{"s": subs[i%len(subs)].external}, 64)
		}
		if err != nil {
			mu.Lock()
			if firstErr == nil {
				firstErr = err
			}
			mu.Unlock()
			return
		}
		l := &listener{}
		listeners[i] = l
		go l.listen(s, subs[i%len(subs)].external, arrivals)
		if k := opened.Add(1); k%2000 == 0 {
			fmt.Fprintf(b.log, "%d subscriptions open\n", k)
		}
	})
	if firstErr != nil {
		fmt.Fprintf(b.log, "%d of %d subscriptions failed to open; the first: %v\n", int64(n)-opened.Load(), n, firstErr)
	}
	return listeners, int(opened.Load()), ctx.Err()
}
