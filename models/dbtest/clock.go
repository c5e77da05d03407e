package dbtest

import (
	"sync"
	"time"
)

// Clock is a settable clock for what a test drives by time (rate-limit buckets, expiry),
// so the test advances it instead of sleeping. Safe for the server's goroutines.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a clock standing at start.
func NewClock(start time.Time) *Clock { return &Clock{now: start} }

// Now is the clock's time; pass the method value where a func() time.Time is wanted.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}
