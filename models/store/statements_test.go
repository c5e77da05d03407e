package store_test

import (
	"testing"
	"time"

	"messages/models"
	"messages/models/dbtest"
	"messages/models/store"
)

// Statements counts what reaches the database: a page with its count is two statements,
// its id subquery none of its own.
func TestStatementsCounter(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		tn := dbtest.NewTenant(t, s, "count")
		sub, tpl := tn.Subscriber(t, "sub-1"), tn.Template(t, "t")
		for range 3 {
			tn.Message(t, sub, tpl, nil)
		}
		log := dbtest.RecordStatements(t, s)
		before := s.Statements()
		list(t, s, tn.Env.ID, models.ListFilter{}, models.Page{Size: 2}, models.ListOptions{Count: true})
		if got, recorded := s.Statements()-before, len(log.Take()); got != 2 || recorded != 2 {
			t.Errorf("a page with its count: counter %d, recorder %d; want 2", got, recorded)
		}
	})
}

// StatementTime adds up how long the statements took, the database's own time included:
// a statement that sleeps 100 ms on MySQL adds at least that.
func TestStatementTime(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		before := s.StatementTime()
		query := "SELECT 1"
		if s.Dialect() == store.DialectMySQL {
			query = "SELECT SLEEP(0.1)"
		}
		var n int
		if err := s.DB().Raw(query).Scan(&n).Error; err != nil {
			t.Fatal(err)
		}
		took := s.StatementTime() - before
		if took <= 0 || (s.Dialect() == store.DialectMySQL && took < 100*time.Millisecond) {
			t.Errorf("%s took %v by the store's account", query, took)
		}
	})
}
