package store

import (
	"context"
	"messages/models/cluster"

	"gorm.io/gorm"
)

type txKey struct{}

// WithTx returns a context whose store calls run inside tx, so a caller can make several
// of them (an idempotency record and the change it records) commit or roll back as one.
func WithTx(ctx context.Context, tx *gorm.DB) context.Context {
	return context.WithValue(ctx, txKey{}, tx)
}

// inTx reports whether ctx carries a transaction.
func inTx(ctx context.Context) bool {
	tx, _ := ctx.Value(txKey{}).(*gorm.DB)
	return tx != nil
}

// conn is the handle a store method queries through: the transaction ctx carries, the
// shard it targets (OnShard), or the pool. On SQLite the pool has one connection, so a query that bypassed an open
// transaction of its own request would wait for it forever.
func (s *Store) conn(ctx context.Context) *gorm.DB {
	if tx, _ := ctx.Value(txKey{}).(*gorm.DB); tx != nil {
		return tx.WithContext(ctx)
	}
	if shard, _ := ctx.Value(shardKey{}).(*gorm.DB); shard != nil {
		return shard.WithContext(ctx)
	}
	return s.db.WithContext(ctx)
}

// Transaction runs fn in one database transaction, carried by the context fn receives:
// every store call made with that context joins it. An error from fn, or a panic, rolls
// everything back, and so does a conflict a store call met (see IsConflict), which is
// then the error, even if fn made an answer of it. Inside an outer transaction it becomes
// a savepoint of that one. It runs fn once: RetryTransaction runs it again after a
// conflict.
func (s *Store) Transaction(ctx context.Context, fn func(ctx context.Context) error) error {
	if inTx(ctx) {
		return s.savepoint(ctx, fn)
	}
	return cluster.Once(ctx, s.attempt(fn))
}

// savepoint runs fn in a savepoint of the transaction ctx carries. A conflict it returns
// is recorded on that transaction, since the server rolled all of it back, not only the
// savepoint.
func (s *Store) savepoint(ctx context.Context, fn func(ctx context.Context) error) error {
	err := s.conn(ctx).Transaction(func(tx *gorm.DB) error { return fn(WithTx(ctx, tx)) })
	return cluster.NoteConflict(ctx, err)
}
