package store_test

import (
	"testing"

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
