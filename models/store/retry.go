package store

import (
	"context"
	"math/rand/v2"
	"messages/models"
	"sync"
	"sync/atomic"
	"time"

	"gorm.io/gorm"
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

// RetryStats counts, for one store, what retried transactions did: Retries is
// how many times one was run again after a conflict, Exhausted how many gave up after
// their last attempt (or at their deadline) and so reached the client as a 503.
type RetryStats struct {
	Retries, Exhausted atomic.Uint64
}

// Retries returns the store's retry counters, for metrics.
func (s *Store) Retries() *RetryStats { return &s.retryStats }

// txState is what one attempt of a transaction learns from the statements it runs.
type txState struct {
	attempt int

	mu       sync.Mutex
	conflict error // the first conflict a statement of the attempt met
}

type txStateKey struct{}

// noteConflict records err in the transaction ctx carries when err is a conflict, and
// returns err. Store methods that run inside a caller's transaction call it, so that the
// transaction is rolled back and run again even when the caller turns their error into an
// answer (a mark's 503 written into the response an idempotency key stores).
func noteConflict(ctx context.Context, err error) error {
	if !models.IsConflict(err) {
		return err
	}
	if st, _ := ctx.Value(txStateKey{}).(*txState); st != nil {
		st.mu.Lock()
		if st.conflict == nil {
			st.conflict = err
		}
		st.mu.Unlock()
	}
	return err
}

func (st *txState) err() error {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.conflict
}

// TxAttempt is the attempt, from 1, of the transaction ctx carries; 0 outside one.
func TxAttempt(ctx context.Context) int {
	if st, _ := ctx.Value(txStateKey{}).(*txState); st != nil {
		return st.attempt
	}
	return 0
}

// RetryTransaction is Transaction, run again from the start, after a jittered backoff,
// when it loses a conflict with a concurrent transaction (see IsConflict), up to
// its policy's attempts (WithRetryPolicy) and never past ctx's deadline: fn must be safe to run
// more than once, everything it did in a failed attempt being rolled back, and must not
// act outside the database before it returns. After the last attempt the conflict is
// returned, which IsUnavailable reports (503, retry later). Inside an outer transaction
// it is a savepoint of that one, run once: a conflict rolls the whole outer transaction
// back, so the outer one is what runs again.
func (s *Store) RetryTransaction(ctx context.Context, fn func(ctx context.Context) error) error {
	if inTx(ctx) {
		return s.savepoint(ctx, fn)
	}
	p := s.o.retry
	for attempt := 1; ; attempt++ {
		err := s.attempt(ctx, attempt, fn)
		if !models.IsConflict(err) {
			return err
		}
		if attempt >= p.Attempts || !sleep(ctx, p.backoff(attempt)) {
			s.retryStats.Exhausted.Add(1)
			return err
		}
		s.retryStats.Retries.Add(1)
	}
}

// attempt runs fn once in a transaction of its own. A conflict a statement met is the
// attempt's error whatever fn returned: the server has rolled back (or, after a lock
// wait timeout, may no longer hold) what fn did, so it must not commit.
func (s *Store) attempt(ctx context.Context, n int, fn func(ctx context.Context) error) error {
	st := &txState{attempt: n}
	ctx = context.WithValue(ctx, txStateKey{}, st)
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		err := fn(WithTx(ctx, tx))
		if c := st.err(); c != nil {
			return c
		}
		return err
	})
}

// sleep waits d, and reports false instead when ctx ends first or its deadline is
// closer than d: an attempt that could not finish in time is not worth starting.
func sleep(ctx context.Context, d time.Duration) bool {
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
