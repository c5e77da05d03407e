package dbtest

import (
	"context"
	"io"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"messages/models/store"
)

// RoundTrips relays a store's MySQL connections and counts the commands its clients
// send: each command is one round trip (a text with several statements is one). Tests
// open a store on URL and read Count around what they measure.
type RoundTrips struct {
	// URL is the database URL it was made for, with the relay's address as the host.
	URL      string
	commands atomic.Int64
}

// Count is how many commands every connection through the relay has sent so far.
func (r *RoundTrips) Count() int64 { return r.commands.Load() }

// CountRoundTrips starts a relay to the MySQL server of databaseURL (a URL from URL),
// stopped in t.Cleanup.
func CountRoundTrips(t testing.TB, databaseURL string) *RoundTrips {
	t.Helper()
	u, err := url.Parse(databaseURL)
	if err != nil || u.Scheme != store.DialectMySQL {
		t.Fatalf("CountRoundTrips needs a mysql:// URL, not %q", databaseURL)
	}
	upstream := u.Host
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u.Host = ln.Addr().String()
	r := &RoundTrips{URL: u.String()}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() {
		cancel()
		_ = ln.Close()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			client, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				r.relay(ctx, client, upstream)
			}()
		}
	}()
	return r
}

// relay copies one connection both ways until either side closes it or ctx ends.
func (r *RoundTrips) relay(ctx context.Context, client net.Conn, upstream string) {
	defer client.Close()
	d := net.Dialer{Timeout: 5 * time.Second}
	server, err := d.DialContext(ctx, "tcp", upstream)
	if err != nil {
		return
	}
	defer server.Close()
	stop := context.AfterFunc(ctx, func() { _ = client.Close(); _ = server.Close() })
	defer stop()
	done := make(chan struct{}, 2)
	go func() {
		_, _ = io.Copy(server, io.TeeReader(client, &commandCounter{n: &r.commands}))
		_ = server.Close()
		done <- struct{}{}
	}()
	go func() {
		_, _ = io.Copy(client, server)
		_ = client.Close()
		done <- struct{}{}
	}()
	<-done
	<-done
}

// commandCounter follows what a MySQL client sends: packets of a 3-byte little-endian
// payload length, a sequence id and the payload. A packet with sequence id 0 begins a
// command (the handshake's packets have ids from 1; the store uses neither TLS nor
// compression). The benchmark's proxy (cmd/loadtest/events/dbproxy) reads the stream the
// same way.
type commandCounter struct {
	n         *atomic.Int64
	header    [4]byte
	have      int // header bytes read
	remaining int // payload bytes of the current packet not yet passed
}

// Write feeds the bytes the client sent.
func (c *commandCounter) Write(b []byte) (int, error) {
	n := len(b)
	for len(b) > 0 {
		if c.remaining == 0 {
			k := copy(c.header[c.have:], b)
			c.have += k
			b = b[k:]
			if c.have < 4 {
				break
			}
			c.have = 0
			c.remaining = int(c.header[0]) | int(c.header[1])<<8 | int(c.header[2])<<16
			if c.header[3] == 0 && c.remaining > 0 {
				c.n.Add(1)
			}
			continue
		}
		k := min(len(b), c.remaining)
		c.remaining -= k
		b = b[k:]
	}
	return n, nil
}
