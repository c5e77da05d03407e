package transport

import (
	"context"
	"testing"
)

// The messages a socket has received and not yet handled are bounded in bytes: while one
// is handled (waiting on the database, say), the client may queue up to maxInboxBytes
// more; one byte past it closes the socket.
func TestSocketInboxBounded(t *testing.T) {
	ops, cancel := context.WithCancel(context.Background())
	s := &socket{ops: ops, cancel: cancel, handling: true}
	msg := make([]byte, 64<<10)
	for range maxInboxBytes / len(msg) {
		s.receive(msg)
	}
	if s.closed || len(s.inbox) != maxInboxBytes/len(msg) {
		t.Fatalf("closed %v with %d messages waiting, want open with %d", s.closed, len(s.inbox), maxInboxBytes/len(msg))
	}
	s.receive([]byte("x"))
	if !s.closed || ops.Err() == nil {
		t.Fatal("a message past the bound left the socket open")
	}
	s.receive(msg)
	if len(s.inbox) != maxInboxBytes/len(msg) {
		t.Fatalf("a closed socket queued a message: %d waiting", len(s.inbox))
	}
}
