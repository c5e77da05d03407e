package store_test

import (
	"testing"

	"messages/models"
	"messages/models/dbtest"
	"messages/models/store"
)

// A page shows a template as it is now, whoever changed it (here plain SQL, twice in a
// row: on SQLite within one millisecond), and reads it from the database only when its
// version changed.
func TestTemplateCacheFollowsEveryChange(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		tn := dbtest.NewTenant(t, s, "tpl")
		sub, tpl := tn.Subscriber(t, "sub-1"), tn.Template(t, "before")
		tn.Message(t, sub, tpl, nil)
		log := dbtest.RecordStatements(t, s)
		name := func(t *testing.T) (string, dbtest.StatementCounts) {
			t.Helper()
			log.Take()
			p := list(t, s, tn.Env.ID, models.ListFilter{}, models.Page{Size: 10}, models.ListOptions{Templates: true})
			if len(p.Data) != 1 || p.Data[0].Template == nil {
				t.Fatalf("page %+v, want one message with its template", p.Data)
			}
			return p.Data[0].Template.Name, dbtest.CountStatements(log.Take())
		}

		if got, cost := name(t); got != "before" || cost.Templates != 1 {
			t.Fatalf("first page: template %q in %d template reads, want %q in 1", got, cost.Templates, "before")
		}
		if got, cost := name(t); got != "before" || cost != (dbtest.StatementCounts{All: 1}) {
			t.Fatalf("second page: template %q, statements %+v, want %q from the cache in 1 statement", got, cost, "before")
		}
		for _, next := range []string{"renamed", "renamed again"} {
			if err := s.DB().Exec(`UPDATE templates SET name = ? WHERE id = ?`, next, tpl.ID).Error; err != nil {
				t.Fatal(err)
			}
			if got, cost := name(t); got != next || cost.Templates != 1 {
				t.Errorf("after an UPDATE: template %q in %d template reads, want %q in 1", got, cost.Templates, next)
			}
		}
	})
}

// Likewise a subscriber: a page shows it as it is now, whoever changed it, and reads it
// from the database only when its version changed.
func TestSubscriberCacheFollowsEveryChange(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		tn := dbtest.NewTenant(t, s, "sub")
		sub, tpl := tn.Subscriber(t, "sub-1"), tn.Template(t, "tpl")
		tn.Message(t, sub, tpl, nil)
		log := dbtest.RecordStatements(t, s)
		name := func(t *testing.T) (string, dbtest.StatementCounts) {
			t.Helper()
			log.Take()
			p := list(t, s, tn.Env.ID, models.ListFilter{}, models.Page{Size: 10}, models.ListOptions{Subscribers: true})
			if len(p.Data) != 1 || p.Data[0].Subscriber == nil {
				t.Fatalf("page %+v, want one message with its subscriber", p.Data)
			}
			return p.Data[0].Subscriber.FirstName, dbtest.CountStatements(log.Take())
		}

		if got, cost := name(t); got != sub.FirstName || cost.Subscribers != 1 {
			t.Fatalf("first page: subscriber %q in %d subscriber reads, want %q in 1", got, cost.Subscribers, sub.FirstName)
		}
		if got, cost := name(t); got != sub.FirstName || cost != (dbtest.StatementCounts{All: 1}) {
			t.Fatalf("second page: subscriber %q, statements %+v, want %q from the cache in 1 statement", got, cost, sub.FirstName)
		}
		for _, next := range []string{"Grace", "Hedy"} {
			if err := s.DB().Exec(`UPDATE subscribers SET first_name = ? WHERE id = ?`, next, sub.ID).Error; err != nil {
				t.Fatal(err)
			}
			if got, cost := name(t); got != next || cost.Subscribers != 1 {
				t.Errorf("after an UPDATE: subscriber %q in %d subscriber reads, want %q in 1", got, cost.Subscribers, next)
			}
		}
		if err := s.DB().Exec(`DELETE FROM subscribers WHERE id = ?`, sub.ID).Error; err != nil {
			t.Fatal(err)
		}
		log.Take()
		p := list(t, s, tn.Env.ID, models.ListFilter{}, models.Page{Size: 10}, models.ListOptions{Subscribers: true})
		if len(p.Data) != 1 || p.Data[0].Subscriber != nil {
			t.Errorf("after the subscriber's row is gone: page %+v, want its message without a subscriber", p.Data)
		}
	})
}
