package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"strings"
	"time"

	mysqldriver "github.com/go-sql-driver/mysql"
	"gorm.io/gorm"

	"messages/models"
	"messages/models/cluster"
)

// A mark on MySQL, outside a caller's transaction, takes two round trips instead of four:
// the first sends the UPDATE and the SELECT of the record as stored after it as one text
// (MySQL's multi-statements), the second COMMIT. The connections of these batches run
// with autocommit off, so the UPDATE opens the transaction that COMMIT (or ROLLBACK)
// ends, with no START TRANSACTION before it: MariaDB answers each statement of a text
// with a write of its own, and the reader waits for each. What the mark promises stays:
//   - all or nothing when the client goes away: COMMIT is sent only after the record was
//     read back and only while the request is alive; if it ends while the batch waits for
//     a row lock, the driver closes the connection and the server rolls the transaction
//     back, as before;
//   - a conflict (a deadlock, or Galera's failed certification, which COMMIT reports) is
//     run again under the store's RetryPolicy, the batch from the start;
//   - counters and the change feed are the UPDATE's triggers and changed_at, unchanged;
//   - with read replicas, the caller's next lists read from the primary (replicas.go);
//   - a keyed (idempotent) mark runs inside the caller's transaction and so takes the
//     general path of mark.go, as does every mark on SQLite.
//
// Multi-statements are on only for the pool of these batches (batchPool), never for the
// pool every other query uses, and every value is a ? that the driver interpolates
// (interpolateParams, escaped for the connection's utf8mb4), never text pasted into SQL.

// markReadSQL is the record as stored after the mark, with its subscriber's and its
// template's versions for the record caches (recordcache.go), the columns in the order
// joinedScan reads them. Its condition is the UPDATE's: no row means the UPDATE matched
// none (missing, another subscriber's, another tenant's). The UPDATE's subquery on the
// subscriber is here the join that reads the subscriber's version, which must then
// exist and be the named one: MariaDB optimizes and runs a subquery of its own for each
// statement, a twentieth of its time in a mark.
var markReadSQL = `SELECT ` + messageSelect + `, s.changed_at AS subscriber_version, t.changed_at AS template_version
FROM messages
JOIN subscribers s ON s.id = messages.subscriber_id AND s.environment_id = messages.environment_id AND s.subscriber_id = ?
LEFT JOIN templates t ON t.id = messages.template_id AND t.environment_id = messages.environment_id
WHERE messages.id = ? AND messages.environment_id = ?`

// markBatchUpdateSQL is markSQL naming the index that finds the row: its primary key.
// Without the hint MariaDB plans a single-table UPDATE with its range optimizer, which
// asks InnoDB to estimate the rows of every index the condition could use (the eight
// that begin with environment_id) before it settles on the primary key, whose id = ?
// matches one row; the estimates were a quarter of the UPDATE's time (about 100 of
// 380 µs at 1,000,000 messages). A SELECT needs no hint: it reads a row found by its
// whole primary key as a constant, without estimates. MySQL, MariaDB and TiDB all take
// the hint; without it the statement does the same, more slowly.
var markBatchUpdateSQL = strings.Replace(markSQL, "UPDATE messages\n", "UPDATE messages FORCE INDEX (PRIMARY)\n", 1)

// markBatchSQL is the first round trip of a batched mark: its UPDATE begins the
// transaction (autocommit is off on the batches' connections).
var markBatchSQL = markBatchUpdateSQL + ";\n" + markReadSQL

// openBatchPool opens the pool of batched marks: the primary's DSN with multi-statements
// and autocommit off (every batch ends in COMMIT or ROLLBACK, or its connection is
// closed), through the same failover over several hosts, at most half as many
// connections as the primary's pool (marks are short).
func openBatchPool(dsn string, retryAfter time.Duration, pool PoolOptions) (*sql.DB, error) {
	cfg, err := mysqldriver.ParseDSN(dsn)
	if err != nil {
		return nil, err
	}
	cfg.MultiStatements = true
	if cfg.Params == nil {
		cfg.Params = map[string]string{}
	}
	cfg.Params["autocommit"] = "0"
	dsn = cfg.FormatDSN()
	var db *sql.DB
	if c, ok := cluster.NewHostsConnector(dsn, retryAfter); ok {
		db = sql.OpenDB(c)
	} else if db, err = sql.Open("mysql", dsn); err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(max(pool.MaxOpenConns/2, 1))
	db.SetMaxIdleConns(max(pool.MaxIdleConns/2, 1))
	db.SetConnMaxLifetime(pool.ConnMaxLifetime)
	db.SetConnMaxIdleTime(pool.ConnMaxIdleTime)
	return db, nil
}

// markBatched is MarkMessageAction in two round trips (see above), attempts run again
// after a conflict under the store's RetryPolicy.
func (s *Store) markBatched(ctx context.Context, environmentID string, a models.MarkAction) (*models.Message, error) {
	var got *markedRow
	err := s.o.retry.Run(ctx, &s.retryStats, func(ctx context.Context) error {
		var err error
		got, err = s.markBatchAttempt(ctx, environmentID, a)
		return err
	})
	if err != nil {
		return nil, err
	}
	s.noteWrite()
	if s.replicas != nil {
		// The caller's next lists read from the primary, as after a write through GORM.
		s.replicas.noteCallerWrite(ctx)
	}
	// The subscriber and template from the record caches, or read once more (outside the
	// transaction, which did not change them) when not cached at their versions.
	msgs := []*models.Message{got.msg}
	err = s.attachEmbedded(ctx, environmentID, msgs, []time.Time{got.subscriberVersion}, []time.Time{got.templateVersion},
		embedded{Subscribers: true, Templates: true})
	if err != nil {
		return nil, err
	}
	return got.msg, nil
}

// markedRow is the record a batched mark read back, with its embedded records' versions.
type markedRow struct {
	msg                                *models.Message
	subscriberVersion, templateVersion time.Time
}

// markBatchAttempt is one attempt: the batch, the test hook, COMMIT. Whatever fails
// before COMMIT succeeds rolls the transaction back.
func (s *Store) markBatchAttempt(ctx context.Context, environmentID string, a models.MarkAction) (*markedRow, error) {
	conn, err := s.batchPool.Conn(ctx)
	if err != nil {
		return nil, err
	}
	committed := false
	defer func() {
		if !committed {
			rollback(ctx, conn)
		}
		_ = conn.Close()
	}()
	// The connection as a GORM transaction: the batch goes through GORM's callbacks (the
	// statement counter, the slow and failed statement log, the SQL spans), and store
	// calls the test hook makes join this transaction, as savepoints of it.
	tx := s.db.Session(&gorm.Session{NewDB: true, Context: ctx})
	tx.Statement.ConnPool = batchTx{conn}
	s.statements.n.Add(1) // the text holds two statements, the UPDATE and the SELECT
	got, err := readMarked(ctx, tx, environmentID, a, s.jsonFaults)
	if err != nil {
		return nil, cluster.NoteConflict(ctx, err)
	}
	if hook := s.o.markHook; hook != nil {
		if err := cluster.NoteConflict(ctx, hook(WithTx(ctx, tx), a.MessageID)); err != nil {
			return nil, err
		}
	}
	if err := cluster.Conflict(ctx); err != nil {
		return nil, err
	}
	if got == nil {
		// Missing, another subscriber's, or another tenant's: the same answer for all.
		return nil, errNotFound("message")
	}
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		return nil, cluster.NoteConflict(ctx, err)
	}
	committed = true
	return got, nil
}

// readMarked sends the batch through tx, the batch's connection, and reads the record it
// selects; nil when the UPDATE matched no message. JSON columns holding no JSON are
// reported to faults.
func readMarked(ctx context.Context, tx *gorm.DB, environmentID string, a models.MarkAction, faults *jsonFaults) (*markedRow, error) {
	// The text as the statement's SQL and its values as its vars, which is what Raw
	// builds, without Raw's copy of the 2.5 KB text a byte at a time in search of the ?s
	// (about 20 µs a mark): the driver finds them when it interpolates the values. Raw("")
	// only gives the statement an instance of its own to write to.
	stmt := tx.Raw("")
	stmt.Statement.SQL.WriteString(markBatchSQL)
	stmt.Statement.Vars = []any{string(a.Status), string(a.Type), a.Payload, a.MessageID, environmentID, environmentID, a.SubscriberID,
		a.SubscriberID, a.MessageID, environmentID}
	rows, err := stmt.Rows()
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var got *markedRow
	scan := newJoinedScan(embedded{Subscribers: true, Templates: true}, faults)
	for rows.Next() {
		msg, err := scan.read(rows)
		if err != nil {
			return nil, err
		}
		if err := models.BudgetFrom(ctx).Charge(messageBytes(msg)); err != nil {
			return nil, err
		}
		got = &markedRow{msg: msg, subscriberVersion: scan.subscriberVersion.Time, templateVersion: scan.templateVersion.Time}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return got, rows.Close()
}

// rollback ends the open transaction of conn: ROLLBACK while ctx lives, or else (and if
// that fails) the connection is closed, which makes the server roll back.
func rollback(ctx context.Context, conn *sql.Conn) {
	if ctx.Err() == nil {
		if _, err := conn.ExecContext(ctx, "ROLLBACK"); err == nil {
			return
		}
	}
	_ = conn.Raw(func(any) error { return driver.ErrBadConn })
}

// batchTx is a batched mark's connection as GORM sees a transaction in progress, so that
// GORM's Transaction on it makes savepoints: the test hook's store calls join the mark.
type batchTx struct{ *sql.Conn }

// Commit is never called by GORM on a transaction it did not begin; it commits all the same.
func (t batchTx) Commit() error {
	_, err := t.ExecContext(context.Background(), "COMMIT")
	return err
}

// Rollback, likewise.
func (t batchTx) Rollback() error {
	_, err := t.ExecContext(context.Background(), "ROLLBACK")
	return err
}

var _ gorm.TxCommitter = batchTx{}
