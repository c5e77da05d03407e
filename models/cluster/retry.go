package cluster

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"messages/models"
)

// RetryPolicy bounds how a transaction that lost a conflict with another one is run again.
type RetryPolicy struct {
	// Attempts is how many times the transaction runs at most, the first included.
	Attempts int
	// BaseDelay is the longest wait before the second attempt; each later one may wait
	// twice as long as the one before, up to MaxDelay. Each wait is drawn uniformly from
	// zero to its bound (full jitter), so transactions that collided do not collide again.
	BaseDelay, MaxDelay time.Duration
}

// DefaultRetryPolicy runs a transaction up to 20 times, waiting at most about 5.4 s in
// all (2.7 s on average), and never past the request's deadline (5 s): enough for 40
// concurrent keyed marks of one row on a 3-node Galera cluster, where each round of
// certification lets one of them through (10 attempts of at most 250 ms left 2 of 40
// answered 503).
var DefaultRetryPolicy = RetryPolicy{Attempts: 20, BaseDelay: 5 * time.Millisecond, MaxDelay: 400 * time.Millisecond}

// RetryStats counts what retried transactions did: Retries is how many times one was
// run again after a conflict, Exhausted how many gave up after their last attempt (or at
// their deadline) and so reached the client as a 503.
type RetryStats struct {
	Retries, Exhausted atomic.Uint64
}

// Run calls attempt until it returns something other than a conflict (see
// models.IsConflict), waiting a jittered backoff between two calls, at most p.Attempts
// times and never past ctx's deadline. attempt gets a context that Attempt and
// NoteConflict read: a conflict noted in it is attempt's error whatever attempt returns.
// After the last attempt the conflict is returned, which models.IsUnavailable reports.
func (p RetryPolicy) Run(ctx context.Context, stats *RetryStats, attempt func(ctx context.Context) error) error {
	for n := 1; ; n++ {
		err := runAttempt(ctx, n, attempt)
		if !models.IsConflict(err) {
			return err
		}
		if n >= p.Attempts || !Sleep(ctx, p.backoff(n)) {
			stats.Exhausted.Add(1)
			return err
		}
		stats.Retries.Add(1)
	}
}

// Once calls attempt once, as Run's first attempt: a conflict noted in its context is its
// error whatever it returns, and it is not run again.
func Once(ctx context.Context, attempt func(ctx context.Context) error) error {
	return runAttempt(ctx, 1, attempt)
}

func runAttempt(ctx context.Context, n int, attempt func(ctx context.Context) error) error {
	st := &attemptState{n: n}
	err := attempt(context.WithValue(ctx, attemptKey{}, st))
	if c := st.err(); c != nil {
		return c
	}
	return err
}

// backoff is the wait before attempt n+1, after attempt n (n >= 1) failed.
func (p RetryPolicy) backoff(n int) time.Duration {
	bound := p.BaseDelay << min(n-1, 20)
	if bound <= 0 || bound > p.MaxDelay {
		bound = p.MaxDelay
	}
	if bound <= 0 {
		return 0
	}
	return rand.N(bound + 1)
}

// attemptState is what one attempt learns from the statements it runs.
type attemptState struct {
	n int

	mu       sync.Mutex
	conflict error // the first conflict a statement of the attempt met
}

type attemptKey struct{}

func (st *attemptState) err() error {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.conflict
}

// NoteConflict records err in the attempt ctx carries when err is a conflict, and
// returns err. Code that runs inside a caller's transaction calls it, so that the
// transaction is rolled back and run again even when the caller turns the error into an
// answer (a mark's 503 written into the response an idempotency key stores).
func NoteConflict(ctx context.Context, err error) error {
	if !models.IsConflict(err) {
		return err
	}
	if st, _ := ctx.Value(attemptKey{}).(*attemptState); st != nil {
		st.mu.Lock()
		if st.conflict == nil {
			st.conflict = err
		}
		st.mu.Unlock()
	}
	return err
}

// Conflict is the first conflict noted in the attempt ctx belongs to, nil if none was:
// a transaction that met one must not commit, whatever its function returned.
func Conflict(ctx context.Context) error {
	if st, _ := ctx.Value(attemptKey{}).(*attemptState); st != nil {
		return st.err()
	}
	return nil
}

// Attempt is the attempt, from 1, that ctx belongs to; 0 outside Run.
func Attempt(ctx context.Context) int {
	if st, _ := ctx.Value(attemptKey{}).(*attemptState); st != nil {
		return st.n
	}
	return 0
}

// Sleep waits d, and reports false instead when ctx ends first or its deadline is
// closer than d: an attempt that could not finish in time is not worth starting.
func Sleep(ctx context.Context, d time.Duration) bool {
	if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < d {
		return false
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
