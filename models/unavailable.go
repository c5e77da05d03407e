package models

import (
	"context"
	"database/sql/driver"
	"errors"
	"net"
	"regexp"
	"strings"
	"syscall"
	"time"

	sqlitedriver "github.com/glebarez/go-sqlite"
	mysqldriver "github.com/go-sql-driver/mysql"
)

// UnavailableMessage is all a client learns when the database cannot be reached: the
// cause goes to the log under the error id.
const UnavailableMessage = "database unavailable, retry later"

// MySQL server errors that mean "not now" rather than "never".
// A conflict (1205, 1213) reaches a client only once RetryTransaction has spent its
// attempts on it.
var unavailableMySQLErrors = map[uint16]bool{
	1040: true, // ER_CON_COUNT_ERROR: too many connections
	1047: true, // ER_UNKNOWN_COM_ERROR: a Galera node out of the cluster's primary component ("WSREP has not yet prepared node")
	1053: true, // ER_SERVER_SHUTDOWN: server shutdown in progress
	1205: true, // ER_LOCK_WAIT_TIMEOUT: a lock was held too long by another transaction
	1213: true, // ER_LOCK_DEADLOCK: the transaction was rolled back (a deadlock, a Galera certification failure)
	1927: true, // ER_CONNECTION_KILLED (MariaDB): the server closed this connection
	// Through Vitess's vtgate, which passes on what its tablets got from their MySQL:
	1203: true, // ER_TOO_MANY_USER_CONNECTIONS: a tablet's connection or transaction pool is full (RESOURCE_EXHAUSTED)
	2002: true, // CR_CONNECTION_ERROR: a tablet cannot reach its MySQL (a MySQL server never sends the client's own errors)
	2003: true, // CR_CONN_HOST_ERROR: likewise
	2006: true, // CR_SERVER_GONE_ERROR: a tablet's MySQL went away
	2013: true, // CR_SERVER_LOST: a tablet lost its MySQL mid-query
}

// vitessUnavailable matches what vtgate answers, as error 1105 (ER_UNKNOWN_ERROR) with
// its own text, when a shard has no primary to serve it: no tablet of the shard is
// healthy (its primary or the primary's MySQL is down, or out of service), or the tablet
// is not serving (a failover, a restart). Vitess matches the second itself (vterrors.RxOp).
var vitessUnavailable = regexp.MustCompile(`no healthy tablet available for|operation not allowed in state (NOT_SERVING|SHUTTING_DOWN)`)

// SQLite result codes of a database held by another writer (SQLITE_BUSY, SQLITE_LOCKED).
const (
	sqliteBusy   = 5
	sqliteLocked = 6
)

// IsUnavailable reports whether err means the database could not be reached or did not
// answer in time, so the same request may succeed later: refused, reset or timed-out
// connections, a connection the driver gave up on, a deadline passed while waiting for
// the database, a server shutting down or out of connections, a locked or busy
// database, and a transaction that lost a conflict on every attempt (IsConflict). A client that cancelled its own request (context.Canceled) is not unavailability.
func IsUnavailable(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, ErrRolledBack) ||
		errors.Is(err, driver.ErrBadConn) ||
		errors.Is(err, mysqldriver.ErrInvalidConn) ||
		errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.ECONNABORTED) ||
		errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, syscall.ETIMEDOUT) ||
		errors.Is(err, syscall.EHOSTUNREACH) ||
		errors.Is(err, syscall.ENETUNREACH) {
		return true
	}
	var netErr net.Error
	if errors.As(err, &netErr) && netErr.Timeout() {
		return true
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) {
		// Dialling, reading or writing the database's socket failed.
		return true
	}
	var myErr *mysqldriver.MySQLError
	if errors.As(err, &myErr) {
		return unavailableMySQLErrors[myErr.Number] || IsConflict(err) ||
			myErr.Number == 1105 && vitessUnavailable.MatchString(myErr.Message)
	}
	var liteErr *sqlitedriver.Error
	if errors.As(err, &liteErr) {
		// Extended result codes keep the primary code in the low byte.
		switch liteErr.Code() & 0xff {
		case sqliteBusy, sqliteLocked:
			return true
		}
	}
	return false
}

// Unavailable is the error a client sees when the database is unreachable: code
// EUNAVAILABLE, a safe message, and a fresh id under which the cause is logged.
func Unavailable(now time.Time) *Error {
	return &Error{Code: EUNAVAILABLE, Message: UnavailableMessage, ID: NewID(now)}
}

// IsConflict reports whether err means the transaction lost a conflict with a concurrent
// one and running it again from the start may succeed: MySQL's deadlock (1213), which is
// also how Galera reports a transaction that failed certification or was aborted by a
// replicated write, and a lock wait timeout (1205). After 1213 the server has already
// rolled the whole transaction back; after 1205 only the statement, so the transaction
// must be rolled back before it runs again, which RetryTransaction does. A request that
// waits for a lock on purpose and means something by the timeout (an idempotency claim)
// turns its 1205 into its own answer before anything sees it.
//
// On a Galera node there is a third form: a transaction aborted by a replicated write
// while the server was opening a table reports the table's triggers as unparsable (1064,
// "Trigger ... has an error in its body", at a different place each time, or "Query was
// empty"): the abort stops the parser of the trigger's body midway. The stored
// definitions are intact, and running the transaction again succeeds. A trigger that is
// really broken fails the same way on every attempt, and ends as spent attempts do, with
// the database's message in the log.
func IsConflict(err error) bool {
	if errors.Is(err, ErrRolledBack) {
		return true
	}
	var myErr *mysqldriver.MySQLError
	if !errors.As(err, &myErr) {
		return false
	}
	return myErr.Number == 1213 || myErr.Number == 1205 ||
		myErr.Number == 1064 && strings.Contains(myErr.Message, "has an error in its body")
}

// ErrRolledBack is a store call finding that its transaction was rolled back under it
// (its own uncommitted row is gone): a conflict like a deadlock, reported by no error of
// the database's.
var ErrRolledBack = errors.New("the transaction was rolled back by the database")
