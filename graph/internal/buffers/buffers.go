// Package buffers keeps the byte buffers of answers that are written out before their
// request ends (an HTTP answer's body, a root field's JSON), so that a busy server reuses
// them instead of allocating and collecting one or two of a page's size per request.
package buffers

import "sync"

// Pool is a pool of byte buffers of at most a bounded capacity: a buffer grown past it
// (a page of thousands of messages) is left to the collector, so that a rare large
// answer does not keep its memory in every pooled buffer.
type Pool struct {
	pool        sync.Pool
	maxCapacity int
}

// New returns a pool whose buffers start at capacity initial and are kept up to
// maxCapacity.
func New(initial, maxCapacity int) *Pool {
	p := &Pool{maxCapacity: maxCapacity}
	p.pool.New = func() any {
		b := make([]byte, 0, initial)
		return &b
	}
	return p
}

// Get returns an empty buffer.
func (p *Pool) Get() *[]byte {
	b := p.pool.Get().(*[]byte)
	*b = (*b)[:0]
	return b
}

// Put returns buf to the pool, holding used: what was appended to it, which may have
// moved to a larger array. Nothing may read used after.
func (p *Pool) Put(buf *[]byte, used []byte) {
	if cap(used) > p.maxCapacity {
		return
	}
	*buf = used[:0]
	p.pool.Put(buf)
}
