package migrate

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"messages/models"
	"sync"
	"time"
)

// migrationLock serialises migrations of one MySQL-protocol database across instances,
// wherever they connect, in two steps held by the migrating connection:
//
//  1. MySQL's named lock (GET_LOCK), which instances on one server queue on and which the
//     server releases the moment its holder's connection closes, so a crashed migrator
//     never blocks one that starts after it on the same server;
//  2. a lease in a row of its own table (LockTable), which every node of a
//     cluster sees: GET_LOCK is local to a Galera node, so two instances on two nodes
//     both get it. The lease is claimed by an UPDATE of that one row in a committed
//     transaction of its own; on Galera the two claims are certified in one order and
//     exactly one commits (the other's 1213 or unmatched UPDATE means "held"). It expires
//     unless its holder renews it every third of the lease, so a migrator that crashed on
//     another node blocks the others for at most the lease (DefaultLease).
//
// The row lease alone would serialise every engine, but a crash would then cost the next
// start on a single server a whole lease, which GET_LOCK avoids: a lease held by another
// connection of this very server while this one holds GET_LOCK is a dead one, taken over
// at once. Neither needs a trigger or a stored procedure, so the same lock works where
// those are missing (Vitess, TiDB).
type migrationLock struct {
	db *sql.DB
	// lost cancels the migration when renewing the lease finds it taken by another
	// migrator (the holder stalled for longer than the lease): its next statement fails
	// rather than running alongside the other's.
	lost context.CancelCauseFunc
	// lease is how long the lease lasts without renewal (WithMigrationLease).
	lease time.Duration

	mu     sync.Mutex
	holder string        // this claim's id while the lease is held
	stop   chan struct{} // closed to end the renewals
	done   chan struct{} // closed when the renewals have ended
}

// LockTable holds the lease: one row, id 1. It is not part of the schema the migrations
// make.
const LockTable = "schema_migration_lock"

// lockName is per database: named locks are server-wide, and one server may hold several
// databases. MySQL limits names to 64 characters.
const lockName = "LEFT(CONCAT('messages-migrate:', DATABASE()), 64)"

// ErrMigrationLeaseLost ends a migration whose lease another migrator took over.
var ErrMigrationLeaseLost = errors.New("the migration lease was taken over by another migrator (this one stalled for longer than the lease)")

// SessionLock takes the named lock, then the lease, waiting for each until ctx's
// deadline (5 minutes without one).
func (l *migrationLock) SessionLock(ctx context.Context, conn *sql.Conn) error {
	wait := 5 * time.Minute
	if deadline, ok := ctx.Deadline(); ok {
		wait = time.Until(deadline)
	}
	var got sql.NullInt64
	if err := conn.QueryRowContext(ctx, "SELECT GET_LOCK("+lockName+", ?)", int(math.Ceil(max(wait, time.Second).Seconds()))).Scan(&got); err != nil {
		return fmt.Errorf("take the migration lock: %w", err)
	}
	if got.Int64 != 1 {
		// Another instance is still migrating; waiting longer may succeed.
		return fmt.Errorf("another instance held the migration lock for %s: %w", wait.Round(time.Second), context.DeadlineExceeded)
	}
	if err := l.claim(ctx, conn); err != nil {
		_, _ = conn.ExecContext(context.WithoutCancel(ctx), "DO RELEASE_LOCK("+lockName+")")
		return err
	}
	return nil
}

// SessionUnlock ends the renewals, frees the lease and releases the named lock.
func (l *migrationLock) SessionUnlock(ctx context.Context, conn *sql.Conn) error {
	l.mu.Lock()
	holder, stop, done := l.holder, l.stop, l.done
	l.holder = ""
	l.mu.Unlock()
	var errs []error
	if stop != nil {
		close(stop)
		<-done
		_, err := conn.ExecContext(ctx, "UPDATE "+LockTable+" SET holder = '', node = '', expires_at = UTC_TIMESTAMP(6) WHERE id = 1 AND holder = ?", holder)
		if err != nil {
			errs = append(errs, fmt.Errorf("free the migration lease: %w", err))
		}
	}
	if _, err := conn.ExecContext(ctx, "DO RELEASE_LOCK("+lockName+")"); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// claim takes the lease: free, expired, or left by a connection of this server (dead,
// since this one holds the named lock), and starts renewing it.
func (l *migrationLock) claim(ctx context.Context, conn *sql.Conn) error {
	// On Galera the DDL is applied in the same order on every node, so two instances
	// creating the table at once both succeed.
	if _, err := conn.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS "+LockTable+` (
    id         TINYINT      NOT NULL,
    holder     VARCHAR(64)  NOT NULL,
    node       VARCHAR(255) NOT NULL,
    expires_at DATETIME(6)  NOT NULL,
    PRIMARY KEY (id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin`); err != nil {
		return fmt.Errorf("create the migration lease table: %w", err)
	}
	var node string
	if err := conn.QueryRowContext(ctx, "SELECT CONCAT(@@hostname, ':', @@port)").Scan(&node); err != nil {
		return fmt.Errorf("take the migration lease: %w", err)
	}
	holder := models.NewID(time.Now())
	for {
		held, err := l.tryClaim(ctx, conn, holder, node)
		if err != nil && !models.IsConflict(err) {
			return fmt.Errorf("take the migration lease: %w", err)
		}
		if held {
			break
		}
		// Held by a live migrator on another node, or lost to one claiming at the same
		// moment: look again shortly.
		if !sleep(ctx, 200*time.Millisecond+rand.N(300*time.Millisecond)) {
			var other struct {
				holder, node string
				expires      time.Time
			}
			_ = conn.QueryRowContext(context.WithoutCancel(ctx), "SELECT holder, node, expires_at FROM "+LockTable+" WHERE id = 1").
				Scan(&other.holder, &other.node, &other.expires)
			return fmt.Errorf("another instance (on %s) held the migration lease until %s: %w",
				other.node, other.expires.Format(time.RFC3339), context.DeadlineExceeded)
		}
	}
	l.mu.Lock()
	l.holder, l.stop, l.done = holder, make(chan struct{}), make(chan struct{})
	go l.renew(holder, l.stop, l.done)
	l.mu.Unlock()
	return nil
}

// tryClaim makes one attempt at the lease: it commits the row naming holder when the
// lease is free, expired or left behind on this node, and reports whether it did.
func (l *migrationLock) tryClaim(ctx context.Context, conn *sql.Conn, holder, node string) (bool, error) {
	if _, err := conn.ExecContext(ctx, "INSERT IGNORE INTO "+LockTable+" (id, holder, node, expires_at) VALUES (1, '', '', UTC_TIMESTAMP(6))"); err != nil {
		return false, err
	}
	// The DSN sets clientFoundRows, so one affected row means the WHERE matched.
	res, err := conn.ExecContext(ctx, "UPDATE "+LockTable+
		" SET holder = ?, node = ?, expires_at = UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND"+
		" WHERE id = 1 AND (holder = '' OR expires_at < UTC_TIMESTAMP(6) OR node = ?)",
		holder, node, l.lease.Microseconds(), node)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// renew extends the lease every third of it through the pool (the migrating
// connection is busy), until stop closes. When the row no longer names holder, another
// migrator took the lease over and the migration is cancelled.
func (l *migrationLock) renew(holder string, stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	tick := time.NewTicker(l.lease / 3)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), l.lease/3)
		res, err := l.db.ExecContext(ctx, "UPDATE "+LockTable+
			" SET expires_at = UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND WHERE id = 1 AND holder = ?",
			l.lease.Microseconds(), holder)
		cancel()
		if err != nil {
			// A passing failure (a conflict, a node briefly away): the lease still has
			// two thirds of its time, and the next tick tries again.
			continue
		}
		if n, _ := res.RowsAffected(); n == 0 {
			if l.lost != nil {
				l.lost(ErrMigrationLeaseLost)
			}
			return
		}
	}
}

// sleep waits d, and reports false instead when ctx ends first.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
