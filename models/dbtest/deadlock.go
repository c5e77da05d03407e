package dbtest

import (
	"context"
	"database/sql"
	"testing"
	"time"
)

// Deadlock makes a transaction that holds the row of message held lose a real deadlock on
// MySQL. Another transaction, on a connection of its own, changes the messages heavy
// (more rows than the victim has written, so InnoDB chooses the victim as the one to roll
// back), then waits for held; take, run by the caller inside the victim, must then lock
// heavy[0]. Deadlock returns take's error, the deadlock (1213). The other transaction
// commits once the victim is rolled back; the test waits for it before it ends.
func Deadlock(t testing.TB, db *sql.DB, held string, heavy []string, take func() error) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	conn, err := db.Conn(ctx)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	var thread int64
	if err := conn.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&thread); err != nil {
		t.Fatal(err)
	}
	locked, done := make(chan error, 1), make(chan error, 1)
	go func() {
		defer cancel()
		defer conn.Close()
		tx, err := conn.BeginTx(ctx, nil)
		if err != nil {
			locked <- err
			done <- nil
			return
		}
		defer func() { _ = tx.Rollback() }()
		// One row at a time: on a small table, one UPDATE of many ids may scan all of it
		// and wait for held too early.
		for _, id := range heavy {
			if _, err = tx.ExecContext(ctx, `UPDATE messages SET action_status = IF(action_status = 'done', 'pending', 'done')
WHERE id = ?`, id); err != nil {
				break
			}
		}
		locked <- err
		if err != nil {
			done <- nil
			return
		}
		if _, err := tx.ExecContext(ctx, "UPDATE messages SET action_status = action_status WHERE id = ?", held); err != nil {
			done <- err
			return
		}
		done <- tx.Commit()
	}()
	t.Cleanup(func() {
		if err := <-done; err != nil {
			t.Errorf("the deadlock's other transaction: %v", err)
		}
	})
	if err := <-locked; err != nil {
		t.Fatalf("the deadlock's other transaction: %v", err)
	}
	// Wait until the other transaction waits for held, so take closes the cycle.
	for {
		var n int
		if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM information_schema.innodb_trx
WHERE trx_mysql_thread_id = ? AND trx_state = 'LOCK WAIT'`, thread).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("the deadlock's other transaction never waited for the held row")
		case <-time.After(10 * time.Millisecond):
		}
	}
	return take()
}
