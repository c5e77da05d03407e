package models

import (
	"context"
	"sync"
)

// Readiness lets a transport take a live stream's events as they are queued instead of
// parking a goroutine on its channel. The transport puts one in an operation's context
// with what to call when events are queued; the resolver that opens the operation's
// stream claims it, handing that function to the stream (service.EventsQuery.Ready) and
// saying how to see that a read would not wait. An operation whose stream claims
// nothing, or whose streams claim it twice, is waited for the usual way.
type Readiness struct {
	ready func()

	mu     sync.Mutex
	queued func() bool
	claims int
}

// NewReadiness returns a Readiness whose stream calls ready, without blocking, each
// time events are queued.
func NewReadiness(ready func()) *Readiness { return &Readiness{ready: ready} }

type readinessKey struct{}

// WithReadiness returns ctx carrying r, for the stream the operation opens.
func WithReadiness(ctx context.Context, r *Readiness) context.Context {
	return context.WithValue(ctx, readinessKey{}, r)
}

// ReadinessFrom is ctx's Readiness, nil without one.
func ReadinessFrom(ctx context.Context) *Readiness {
	r, _ := ctx.Value(readinessKey{}).(*Readiness)
	return r
}

// Claim records queued, which reports whether a read of the stream would find an event
// or its end without waiting, and returns the function the stream calls when events are
// queued.
func (r *Readiness) Claim(queued func() bool) func() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.queued = queued
	r.claims++
	return r.ready
}

// Claimed returns the claiming stream's queued, and whether exactly one stream claimed r.
func (r *Readiness) Claimed() (queued func() bool, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.queued, r.claims == 1
}
