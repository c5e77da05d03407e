package store

import (
	"sync/atomic"

	"gorm.io/gorm"
)

// statementCounter counts the SQL statements a store sends (transaction BEGIN and COMMIT
// aside), for /metrics and for benchmarks that report statements per request.
type statementCounter struct{ n atomic.Uint64 }

// Statements is how many SQL statements the store has sent since it was opened, not
// counting BEGIN and COMMIT.
func (s *Store) Statements() uint64 { return s.statements.n.Load() }

// countStatements registers the counter after each kind of statement GORM runs on db (the
// primary's handle or a replica's).
func (s *Store) countStatements(db *gorm.DB) error {
	count := func(db *gorm.DB) {
		if !db.DryRun { // a subquery rendered into the statement that holds it
			s.statements.n.Add(1)
		}
	}
	cb := db.Callback()
	for _, err := range []error{
		cb.Query().After("gorm:query").Register("messages:count_statements", count),
		cb.Row().After("gorm:row").Register("messages:count_statements", count),
		cb.Raw().After("gorm:raw").Register("messages:count_statements", count),
		cb.Create().After("gorm:create").Register("messages:count_statements", count),
		cb.Update().After("gorm:update").Register("messages:count_statements", count),
		cb.Delete().After("gorm:delete").Register("messages:count_statements", count),
	} {
		if err != nil {
			return err
		}
	}
	return nil
}
