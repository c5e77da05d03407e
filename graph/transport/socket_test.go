package transport

import (
	"context"
	"testing"
)

// The messages a socket has received and not yet handled are bounded in bytes: while one
// is handled (waiting for a slot among the operations in flight, or on the database), the
// client may queue up to maxInboxBytes more. Past it a subscribe is refused by itself and
// not queued, the socket kept; other messages still queue up to twice the bound, and one
// byte past that closes the socket.
func TestSocketInboxBounded(t *testing.T) {
	ops, cancel := context.WithCancel(context.Background())
	s := &socket{ops: ops, cancel: cancel, handling: true}
	msg := make([]byte, 64<<10) // not a subscribe
	fill := func(n int) {
		for range n / len(msg) {
			s.receive(msg)
		}
	}
	fill(maxInboxBytes)
	if s.closed || len(s.inbox) != maxInboxBytes/len(msg) {
		t.Fatalf("closed %v with %d messages waiting, want open with %d", s.closed, len(s.inbox), maxInboxBytes/len(msg))
	}
	s.receive([]byte(`{"type":"subscribe","id":"past","payload":{"query":"{ __typename }"}}`))
	if s.closed || len(s.inbox) != maxInboxBytes/len(msg) {
		t.Fatalf("a subscribe past the bound: closed %v, %d waiting; want refused by itself, not queued", s.closed, len(s.inbox))
	}
	fill(maxInboxBytes)
	if s.closed || len(s.inbox) != 2*maxInboxBytes/len(msg) {
		t.Fatalf("closed %v with %d messages waiting, want open with %d", s.closed, len(s.inbox), 2*maxInboxBytes/len(msg))
	}
	s.receive([]byte("x"))
	if !s.closed || ops.Err() == nil {
		t.Fatal("a message past twice the bound left the socket open")
	}
	s.receive(msg)
	if len(s.inbox) != 2*maxInboxBytes/len(msg) {
		t.Fatalf("a closed socket queued a message: %d waiting", len(s.inbox))
	}
}

func TestSubscribeID(t *testing.T) {
	for msg, want := range map[string]string{
		`{"type":"subscribe","id":"7","payload":{}}`: "7",
		`{"type":"subscribe","id":"","payload":{}}`:  "",
		`{"type":"subscribe","payload":{}}`:          "",
		`{"type":"complete","id":"7"}`:               "",
		`not json`:                                   "",
	} {
		if got, ok := subscribeID([]byte(msg)); got != want || ok != (want != "") {
			t.Errorf("subscribeID(%s) = %q, %v; want %q", msg, got, ok, want)
		}
	}
}
