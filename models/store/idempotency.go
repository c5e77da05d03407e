package store

import (
	"context"
	"errors"
	"fmt"
	"math"
	"messages/models"
	"messages/models/cluster"
	"sync/atomic"
	"time"

	mysqldriver "github.com/go-sql-driver/mysql"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// ClaimIdempotencyKey inserts k in the transaction ctx carries, before the request runs.
// When a live record of the key exists it inserts nothing and returns that record, for
// the caller to replay or refuse; an expired one is replaced. While another transaction
// holds the key (another instance running the same request), the insert waits at most
// lockWait on MySQL, then fails with a conflict error; SQLite's one connection never
// lets two transactions overlap. A deadlock is returned as it is, and marks the
// transaction for RetryTransaction to run again: by then the other request's record is
// committed (replayed) or still held (a conflict).
func (s *Store) ClaimIdempotencyKey(ctx context.Context, k *models.IdempotencyKey, lockWait time.Duration) (*models.IdempotencyKey, error) {
	if !inTx(ctx) {
		return nil, errors.New("ClaimIdempotencyKey must run inside Store.Transaction")
	}
	k.CreatedAt = k.CreatedAt.UTC().Truncate(time.Millisecond)
	k.ExpiresAt = k.ExpiresAt.UTC().Truncate(time.Millisecond)
	k.Status, k.ContentType, k.Body = 0, "", nil
	var existing *models.IdempotencyKey
	err := s.withLockWait(ctx, lockWait, func(db *gorm.DB) error {
		// Two rounds at most: a record found expired (or purged between the insert and
		// the read) is replaced by a second insert.
		for range 2 {
			err := db.Create(k).Error
			if err == nil {
				return nil
			}
			if !errors.Is(err, gorm.ErrDuplicatedKey) {
				return err
			}
			// A locking read sees the latest committed row, not the transaction's snapshot.
			var row models.IdempotencyKey
			err = db.Clauses(clause.Locking{Strength: clause.LockingStrengthUpdate}).
				Where("environment_id = ? AND idempotency_key = ?", k.EnvironmentID, k.Key).
				Take(&row).Error
			if errors.Is(err, gorm.ErrRecordNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			if row.ExpiresAt.After(k.CreatedAt) {
				existing = &row
				return nil
			}
			if err := db.Where("environment_id = ? AND idempotency_key = ?", k.EnvironmentID, k.Key).
				Delete(&models.IdempotencyKey{}).Error; err != nil {
				return err
			}
		}
		return models.IdempotencyKeyBusy(k.Key)
	})
	if isLockWaitTimeout(err) {
		return nil, models.IdempotencyKeyBusy(k.Key)
	}
	if err != nil {
		// A deadlock (three claims of one key at once on MySQL) or, on Galera, a claim
		// of the same key committed on another node first: the whole transaction is
		// run again, and then finds the other request's record.
		return nil, cluster.NoteConflict(ctx, err)
	}
	return existing, nil
}

// CompleteIdempotencyKey stores the response of a claimed key, in the transaction ctx
// carries: it commits with the change the request made, or not at all.
func (s *Store) CompleteIdempotencyKey(ctx context.Context, k *models.IdempotencyKey) error {
	if !inTx(ctx) {
		return errors.New("CompleteIdempotencyKey must run inside Store.Transaction")
	}
	res := s.conn(ctx).Model(&models.IdempotencyKey{}).
		Where("environment_id = ? AND idempotency_key = ?", k.EnvironmentID, k.Key).
		Updates(map[string]any{"status": k.Status, "content_type": k.ContentType, "body": k.Body})
	if res.Error != nil {
		return cluster.NoteConflict(ctx, res.Error)
	}
	if res.RowsAffected != 1 {
		// The claim this transaction inserted is gone: the transaction was rolled back
		// under it (on Galera, aborted by a replicated write between two statements), so
		// it is run again like any other conflict.
		return cluster.NoteConflict(ctx, fmt.Errorf("idempotency key of environment %s: %w", k.EnvironmentID, models.ErrRolledBack))
	}
	return nil
}

// purgeBatch bounds one DELETE on MySQL, so the purge never holds many row locks at once.
const purgeBatch = 1000

// PurgeIdempotencyKeys deletes the records expired at now, through the expires_at index,
// and returns how many it deleted: on Vitess shard by shard (eachShard), where a
// DELETE with a LIMIT runs on one shard only.
func (s *Store) PurgeIdempotencyKeys(ctx context.Context, now time.Time) (int64, error) {
	now = now.UTC().Truncate(time.Millisecond)
	if s.dialect != DialectMySQL {
		res := s.conn(ctx).Where("expires_at <= ?", now).Delete(&models.IdempotencyKey{})
		return res.RowsAffected, res.Error
	}
	var total atomic.Int64
	err := s.eachShard(ctx, func(ctx context.Context) error {
		for {
			res := s.conn(ctx).Exec("DELETE FROM idempotency_keys WHERE expires_at <= ? LIMIT ?", now, purgeBatch)
			total.Add(res.RowsAffected)
			if res.Error != nil || res.RowsAffected < purgeBatch {
				return res.Error
			}
		}
	})
	return total.Load(), err
}

// withLockWait runs fn on the transaction ctx carries with InnoDB's lock wait cut to d
// (whole seconds, at least one), then restores the connection's own setting: a second
// instance claiming a key another one holds answers "in progress" in about d instead of
// InnoDB's 50 s. Elsewhere it just runs fn. On Vitess too: vtgate would read the session
// variable from a shard of its choosing, making the claim's transaction one of two
// shards; there a claim waits for the holder until the request's deadline.
func (s *Store) withLockWait(ctx context.Context, d time.Duration, fn func(db *gorm.DB) error) error {
	db := s.conn(ctx)
	if s.dialect != DialectMySQL || s.vitess || d <= 0 {
		return fn(db)
	}
	var prev int
	if err := db.Raw("SELECT @@SESSION.innodb_lock_wait_timeout").Scan(&prev).Error; err != nil {
		return err
	}
	secs := max(1, int(math.Ceil(d.Seconds())))
	if err := db.Exec(fmt.Sprintf("SET SESSION innodb_lock_wait_timeout = %d", secs)).Error; err != nil {
		return err
	}
	err := fn(db)
	// Session variables outlive the transaction: restore even after a failure, or the
	// pooled connection would keep the short wait for every later statement.
	if rerr := db.Exec(fmt.Sprintf("SET SESSION innodb_lock_wait_timeout = %d", prev)).Error; rerr != nil && err == nil {
		return rerr
	}
	return err
}

// isLockWaitTimeout reports MySQL's lock wait timeout (1205): another transaction has
// held the key longer than the claim waits, so the request is answered "in progress"
// rather than run again.
func isLockWaitTimeout(err error) bool {
	var myErr *mysqldriver.MySQLError
	return errors.As(err, &myErr) && myErr.Number == 1205
}
