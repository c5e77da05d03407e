package buffers_test

import (
	"testing"

	"messages/graph/internal/buffers"
)

func TestPoolKeepsBuffersUpToItsCapacity(t *testing.T) {
	p := buffers.New(8, 64)
	buf := p.Get()
	if len(*buf) != 0 || cap(*buf) < 8 {
		t.Fatalf("a new buffer has length %d and capacity %d, want 0 and at least 8", len(*buf), cap(*buf))
	}
	used := append(*buf, "an answer"...)
	p.Put(buf, used)
	if len(*buf) != 0 || cap(*buf) != cap(used) {
		t.Errorf("a buffer given back holds length %d and capacity %d, want 0 and %d (what was appended to it)", len(*buf), cap(*buf), cap(used))
	}

	big := p.Get()
	grown := append(*big, make([]byte, 65)...)
	p.Put(big, grown)
	if cap(*big) == cap(grown) {
		t.Errorf("a buffer grown past the pool's capacity was kept (capacity %d)", cap(*big))
	}
	if got := p.Get(); len(*got) != 0 {
		t.Errorf("Get returned a buffer of length %d, want 0", len(*got))
	}
}
