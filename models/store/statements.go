package store

import (
	"sync/atomic"
	"time"

	"gorm.io/gorm"
)

// statementCounter counts the SQL statements a store sends (transaction BEGIN and COMMIT
// aside) and the time they took, for /metrics and for benchmarks that report statements
// and database time per request.
type statementCounter struct{ n, nanos atomic.Uint64 }

// Statements is how many SQL statements the store has sent since it was opened, not
// counting BEGIN and COMMIT.
func (s *Store) Statements() uint64 { return s.statements.n.Load() }

// StatementTime is how long the store's statements took since it was opened, each from
// its sending until the database's answer arrived (for a query, the answer's first
// packet: MySQL sends a grouped or sorted result once computed, a plain scan while it
// reads), so the database's time and the round trips.
func (s *Store) StatementTime() time.Duration { return time.Duration(s.statements.nanos.Load()) }

// statementStart is where a statement's start is kept on GORM's statement instance.
const statementStart = "messages:statement_start"

// countStatements registers the counter around each kind of statement GORM runs on db
// (the primary's handle or a replica's).
func (s *Store) countStatements(db *gorm.DB) error {
	start := func(db *gorm.DB) { db.InstanceSet(statementStart, time.Now()) }
	count := func(db *gorm.DB) {
		if db.DryRun { // a subquery rendered into the statement that holds it
			return
		}
		s.statements.n.Add(1)
		if t, ok := db.InstanceGet(statementStart); ok {
			s.statements.nanos.Add(uint64(time.Since(t.(time.Time))))
		}
	}
	cb := db.Callback()
	for _, err := range []error{
		cb.Query().Before("gorm:query").Register("messages:start_statements", start),
		cb.Query().After("gorm:query").Register("messages:count_statements", count),
		cb.Row().Before("gorm:row").Register("messages:start_statements", start),
		cb.Row().After("gorm:row").Register("messages:count_statements", count),
		cb.Raw().Before("gorm:raw").Register("messages:start_statements", start),
		cb.Raw().After("gorm:raw").Register("messages:count_statements", count),
		cb.Create().Before("gorm:create").Register("messages:start_statements", start),
		cb.Create().After("gorm:create").Register("messages:count_statements", count),
		cb.Update().Before("gorm:update").Register("messages:start_statements", start),
		cb.Update().After("gorm:update").Register("messages:count_statements", count),
		cb.Delete().Before("gorm:delete").Register("messages:start_statements", start),
		cb.Delete().After("gorm:delete").Register("messages:count_statements", count),
	} {
		if err != nil {
			return err
		}
	}
	return nil
}
