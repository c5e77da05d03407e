package store_test

import (
	"context"
	"io"
	"net"
	"net/url"
	"sync"
	"testing"
	"time"

	"messages/models/dbtest"
	"messages/models/store"
)

// TestOpenSeveralHosts: a DATABASE_URL naming a host that is down before one that is up
// opens, migrates and serves through the one that is up.
func TestOpenSeveralHosts(t *testing.T) {
	u, err := url.Parse(dbtest.URL(t, store.DialectMySQL))
	if err != nil {
		t.Fatal(err)
	}
	gone, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := gone.Addr().String()
	gone.Close()
	u.Host = down + "," + u.Host
	ctx := context.Background()
	s, err := store.Open(ctx, u.String(), store.DefaultPool)
	if err != nil {
		t.Fatalf("open %s: %v", u.Host, err)
	}
	defer s.Close()
	if err := s.Migrate(ctx); err != nil {
		t.Fatalf("migrate through %s: %v", u.Host, err)
	}
	if err := s.Ping(ctx); err != nil {
		t.Fatal(err)
	}
}

// tcpProxy forwards connections from a loopback port to a server; it can be stopped and
// started again on the same port, as a node that goes away and returns.
type tcpProxy struct {
	t      *testing.T
	addr   string
	target string
	mu     sync.Mutex
	ln     net.Listener
	conns  map[net.Conn]bool
}

func newTCPProxy(t *testing.T, target string) *tcpProxy {
	p := &tcpProxy{t: t, target: target, conns: map[net.Conn]bool{}}
	p.start("127.0.0.1:0")
	t.Cleanup(p.stop)
	return p
}

func (p *tcpProxy) start(addr string) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		p.t.Fatal(err)
	}
	p.mu.Lock()
	p.ln, p.addr = ln, ln.Addr().String()
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", p.target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns[c] = true
			p.mu.Unlock()
			go func() { _, _ = io.Copy(s, c); s.Close() }()
			go func() {
				_, _ = io.Copy(c, s)
				c.Close()
				p.mu.Lock()
				delete(p.conns, c)
				p.mu.Unlock()
			}()
		}
	}()
}

// stop closes the listener and every connection through it.
func (p *tcpProxy) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		c.Close()
	}
}

// open is how many connections go through the proxy now.
func (p *tcpProxy) open() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns)
}

// TestSeveralHostsMoveBackToTheFirst: the first host down, the pool uses the second;
// once the first returns, every connection moves back to it.
func TestSeveralHostsMoveBackToTheFirst(t *testing.T) {
	u, err := url.Parse(dbtest.URL(t, store.DialectMySQL))
	if err != nil {
		t.Fatal(err)
	}
	first := newTCPProxy(t, u.Host)
	first.stop()
	u.Host = first.addr + "," + u.Host
	ctx := context.Background()
	s, err := store.Open(ctx, u.String(), store.PoolOptions{MaxOpenConns: 4, MaxIdleConns: 4, ConnMaxLifetime: 300 * time.Millisecond, ConnMaxIdleTime: time.Minute},
		store.WithHostRetryAfter(200*time.Millisecond))
	if err != nil {
		t.Fatalf("open %s with the first host down: %v", u.Host, err)
	}
	defer s.Close()
	sqlDB, err := s.DB().DB()
	if err != nil {
		t.Fatal(err)
	}
	use := func() {
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				if err := s.DB().Exec("DO SLEEP(0.01)").Error; err != nil {
					t.Errorf("query: %v", err)
				}
			})
		}
		wg.Wait()
	}
	use()
	if n := sqlDB.Stats().OpenConnections; n == 0 || first.open() != 0 {
		t.Fatalf("first host down: %d connections open, %d of them to the first host; want some, none", n, first.open())
	}

	first.start(first.addr)
	deadline := time.Now().Add(10 * time.Second)
	for {
		use()
		open := sqlDB.Stats().OpenConnections
		if open > 0 && first.open() == open {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("first host back: %d of %d connections to it after 10 s, want all", first.open(), open)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
