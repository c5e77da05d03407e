package models_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	mysqldriver "github.com/go-sql-driver/mysql"
	"gorm.io/gorm"

	"messages/models"
	"messages/models/dbtest"
	"messages/models/store"
)

// timeoutError is a net.Error that timed out, as a read past its deadline returns.
type timeoutError struct{}

func (timeoutError) Error() string   { return "i/o timeout" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

func TestIsUnavailableClassifies(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"unavailableDeadline", fmt.Errorf("query: %w", context.DeadlineExceeded), true},
		{"unavailableBadConn", driver.ErrBadConn, true},
		{"unavailableInvalidConn", fmt.Errorf("commit: %w", mysqldriver.ErrInvalidConn), true},
		{"unavailableRefused", &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}, true},
		{"unavailableReset", fmt.Errorf("read: %w", syscall.ECONNRESET), true},
		{"unavailableBrokenPipe", syscall.EPIPE, true},
		{"unavailableIOTimeout", fmt.Errorf("read tcp: %w", timeoutError{}), true},
		{"unavailablePing", fmt.Errorf("database unreachable: %w", &net.OpError{Op: "read", Err: errors.New("EOF")}), true},
		{"unavailableTooManyConnections", &mysqldriver.MySQLError{Number: 1040, Message: "Too many connections"}, true},
		{"unavailableServerShutdown", &mysqldriver.MySQLError{Number: 1053, Message: "Server shutdown in progress"}, true},
		{"unavailableLockWaitTimeout", &mysqldriver.MySQLError{Number: 1205, Message: "Lock wait timeout exceeded"}, true},
		{"unavailableConnectionKilled", &mysqldriver.MySQLError{Number: 1927, Message: "Connection was killed"}, true},
		{"unavailableDeadlockAfterRetries", &mysqldriver.MySQLError{Number: 1213, Message: "Deadlock found when trying to get lock; try restarting transaction"}, true},
		{"unavailableGaleraNodeNotReady", &mysqldriver.MySQLError{Number: 1047, Message: "WSREP has not yet prepared node for application use"}, true},
		{"unavailableTriggerParseAbortedAfterRetries", &mysqldriver.MySQLError{Number: 1064, Message: "Trigger 'messages_count_update' has an error in its body: 'Query was empty'"}, true},
		{"unavailableVitessNoHealthyTablet", &mysqldriver.MySQLError{Number: 1105, Message: `target: messages.-80.primary: no healthy tablet available for 'keyspace:"messages" shard:"-80" tablet_type:PRIMARY'`}, true},
		{"unavailableVitessNotServing", &mysqldriver.MySQLError{Number: 1105, Message: "target: messages.-80.primary: vttablet: operation not allowed in state NOT_SERVING"}, true},
		{"unavailableVitessTabletLostMySQL", &mysqldriver.MySQLError{Number: 2013, Message: "target: messages.-80.primary: vttablet: Lost connection to MySQL server during query (errno 2013) (sqlstate HY000)"}, true},
		{"unavailableVitessPoolFull", &mysqldriver.MySQLError{Number: 1203, Message: "target: messages.-80.primary: vttablet: transaction pool connection limit exceeded"}, true},
		{"availableVitessUnsupported", &mysqldriver.MySQLError{Number: 1105, Message: "VT12001: unsupported: DELETE with LIMIT on a sharded table"}, false},
		{"availableSyntaxError", &mysqldriver.MySQLError{Number: 1064, Message: "You have an error in your SQL syntax"}, false},
		{"availableNil", nil, false},
		{"availableClientCancelled", context.Canceled, false},
		{"availableDuplicateKey", &mysqldriver.MySQLError{Number: 1062, Message: "Duplicate entry"}, false},
		{"availableMissingTable", &mysqldriver.MySQLError{Number: 1146, Message: "Table doesn't exist"}, false},
		{"availableAccessDenied", &mysqldriver.MySQLError{Number: 1045, Message: "Access denied"}, false},
		{"availableNotFound", gorm.ErrRecordNotFound, false},
		// A pool the program closed itself is a bug, not an outage: it stays a 500.
		{"availableClosedPool", errors.New("sql: database is closed"), false},
		{"availableTxDone", sql.ErrTxDone, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := models.IsUnavailable(tt.err); got != tt.want {
				t.Errorf("IsUnavailable(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}

func TestErrorCodeOfUnavailability(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name          string
		err           error
		code, message string
	}{
		{"codedWins", fmt.Errorf("x: %w", models.Errorf(models.ENOTFOUND, "message not found")), models.ENOTFOUND, "message not found"},
		{"unavailableUncoded", fmt.Errorf("begin: %w", driver.ErrBadConn), models.EUNAVAILABLE, models.UnavailableMessage},
		{"unavailableCoded", models.Unavailable(time.Now()), models.EUNAVAILABLE, models.UnavailableMessage},
		{"internalUncoded", errors.New("near \"SELEC\": syntax error"), models.EINTERNAL, "internal error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := models.ErrorCode(tt.err); got != tt.code {
				t.Errorf("ErrorCode = %q, want %q", got, tt.code)
			}
			if got := models.ErrorMessage(tt.err); got != tt.message {
				t.Errorf("ErrorMessage = %q, want %q", got, tt.message)
			}
		})
	}
	if u := models.Unavailable(time.Now()); !models.IsID(u.ID) {
		t.Errorf("Unavailable has id %q, want an id to log the cause under", u.ID)
	}
}

// The errors the drivers really return when the database goes away are classified as
// unavailable, not only the ones written by hand above.
func TestIsUnavailableRealDriverErrors(t *testing.T) {
	t.Parallel()
	t.Run("mysqlRefused", func(t *testing.T) {
		t.Parallel()
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		_ = ln.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, err = store.Open(ctx, "mysql://root@"+addr+"/nothing", store.DefaultPool)
		if err == nil || !models.IsUnavailable(err) {
			t.Fatalf("Open on a closed port: %v, want an unavailability error", err)
		}
	})

	t.Run("mysqlDeadline", func(t *testing.T) {
		t.Parallel()
		s := dbtest.Open(t, store.DialectMySQL)
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		done := make(chan error, 1)
		go func() { done <- s.DB().WithContext(ctx).Exec("SELECT SLEEP(5)").Error }()
		select {
		case err := <-done:
			if !models.IsUnavailable(err) {
				t.Fatalf("a query past its deadline returned %v, want an unavailability error", err)
			}
		case <-time.After(2 * time.Second):
			t.Fatal("the query had not given up 2s after its 200ms deadline")
		}
	})

	t.Run("mysqlConnectionKilled", func(t *testing.T) {
		t.Parallel()
		s := dbtest.Open(t, store.DialectMySQL)
		sqlDB, err := s.DB().DB()
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		conn, err := sqlDB.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		var id int64
		if err := conn.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&id); err != nil {
			t.Fatal(err)
		}
		if _, err := sqlDB.ExecContext(ctx, fmt.Sprintf("KILL CONNECTION %d", id)); err != nil {
			t.Fatal(err)
		}
		_, err = conn.ExecContext(ctx, "SELECT 1")
		if !models.IsUnavailable(err) {
			t.Fatalf("a query on a killed connection returned %v, want an unavailability error", err)
		}
	})

	t.Run("sqliteBusy", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "busy.db")
		open := func() *sql.DB {
			db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(0)")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = db.Close() })
			return db
		}
		holder, waiter := open(), open()
		ctx := context.Background()
		if _, err := holder.ExecContext(ctx, "CREATE TABLE t (x INTEGER)"); err != nil {
			t.Fatal(err)
		}
		conn, err := holder.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
			t.Fatal(err)
		}
		defer func() { _, _ = conn.ExecContext(ctx, "ROLLBACK") }()
		_, err = waiter.ExecContext(ctx, "INSERT INTO t VALUES (1)")
		if !models.IsUnavailable(err) {
			t.Fatalf("a write to a locked database returned %v, want an unavailability error", err)
		}
	})
}
