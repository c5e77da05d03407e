package store

import (
	"context"

	"messages/models/cluster"

	"gorm.io/gorm"
)

// Retries returns the store's retry counters, for metrics.
func (s *Store) Retries() *cluster.RetryStats { return &s.retryStats }

// RetryTransaction is Transaction, run again from the start, after a jittered backoff,
// when it loses a conflict with a concurrent transaction (see models.IsConflict), up to
// its policy's attempts (WithRetryPolicy) and never past ctx's deadline: fn must be safe
// to run more than once, everything it did in a failed attempt being rolled back, and
// must not act outside the database before it returns. After the last attempt the
// conflict is returned, which models.IsUnavailable reports (503, retry later). Inside an
// outer transaction it is a savepoint of that one, run once: a conflict rolls the whole
// outer transaction back, so the outer one is what runs again.
//
// A conflict a statement met is the attempt's error whatever fn returned: the server
// has rolled back (or, after a lock wait timeout, may no longer hold) what fn did, so it
// must not commit.
func (s *Store) RetryTransaction(ctx context.Context, fn func(ctx context.Context) error) error {
	if inTx(ctx) {
		return s.savepoint(ctx, fn)
	}
	return s.o.retry.Run(ctx, &s.retryStats, s.attempt(fn))
}

// attempt is fn in a transaction of its own, which rolls back when a statement met a
// conflict, whatever fn returned.
func (s *Store) attempt(fn func(ctx context.Context) error) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			err := fn(WithTx(ctx, tx))
			if c := cluster.Conflict(ctx); c != nil {
				return c
			}
			return err
		})
	}
}
