package models_test

import (
	"sync"
	"testing"
	"time"

	"messages/models"
	"messages/models/dbtest"
)

// A reused totalCount costs no COUNT until it is CountTTL old; concurrent requests share
// one COUNT; different filters and environments never share a count.
func TestCountCache(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, s *models.Store) {
		now := dbtest.Base
		s.Now = func() time.Time { return now }
		s.CountTTL = 5 * time.Second
		tn := dbtest.NewTenant(t, s, "a")
		other := dbtest.NewTenant(t, s, "b")
		sub, tpl := tn.Subscriber(t, "sub-1"), tn.Template(t, "t")
		for range 5 {
			tn.Message(t, sub, tpl, nil)
		}
		other.Message(t, other.Subscriber(t, "sub-1"), other.Template(t, "t"), nil)
		log := dbtest.RecordStatements(t, s)
		ctx := tn.Context()
		page := models.Page{Size: 2}
		list := func(env string, f models.ListFilter) int {
			t.Helper()
			p, err := s.ListMessages(ctx, env, f, page, models.ListOptions{Count: true})
			if err != nil {
				t.Fatal(err)
			}
			return p.TotalCount
		}

		if got := list(tn.Env.ID, models.ListFilter{}); got != 5 {
			t.Fatalf("first count = %d, want 5", got)
		}
		if n := dbtest.CountStatements(log.Take()).Count; n != 1 {
			t.Fatalf("first list ran %d COUNTs, want 1", n)
		}

		tn.Message(t, sub, tpl, nil)
		if got := list(tn.Env.ID, models.ListFilter{}); got != 5 {
			t.Fatalf("count within TTL = %d, want the cached 5", got)
		}
		if n := dbtest.CountStatements(log.Take()).Count; n != 0 {
			t.Fatalf("list within TTL ran %d COUNTs, want 0", n)
		}

		channel := models.ChannelInApp
		if got := list(tn.Env.ID, models.ListFilter{Channel: &channel}); got != 6 {
			t.Fatalf("another filter's count = %d, want a fresh 6", got)
		}
		if got := list(other.Env.ID, models.ListFilter{}); got != 1 {
			t.Fatalf("another environment's count = %d, want 1", got)
		}
		log.Take()

		now = now.Add(5 * time.Second)
		if got := list(tn.Env.ID, models.ListFilter{}); got != 6 {
			t.Fatalf("count after TTL = %d, want a fresh 6", got)
		}
		if n := dbtest.CountStatements(log.Take()).Count; n != 1 {
			t.Fatalf("list after TTL ran %d COUNTs, want 1", n)
		}

		now = now.Add(time.Minute)
		var wg sync.WaitGroup
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if got := list(tn.Env.ID, models.ListFilter{}); got != 6 {
					t.Errorf("concurrent count = %d, want 6", got)
				}
			}()
		}
		wg.Wait()
		if n := dbtest.CountStatements(log.Take()).Count; n < 1 || n > 8 {
			t.Fatalf("8 concurrent lists ran %d COUNTs", n)
		}
	})
}

// With CountTTL 0 every list counts afresh.
func TestCountCacheOff(t *testing.T) {
	s := dbtest.Open(t, models.DialectSQLite)
	tn := dbtest.NewTenant(t, s, "a")
	sub, tpl := tn.Subscriber(t, "sub-1"), tn.Template(t, "t")
	for range 3 {
		tn.Message(t, sub, tpl, nil)
	}
	count := func() int {
		p, err := s.ListMessages(tn.Context(), tn.Env.ID, models.ListFilter{}, models.Page{Size: 1}, models.ListOptions{Count: true})
		if err != nil {
			t.Fatal(err)
		}
		return p.TotalCount
	}
	if got := count(); got != 3 {
		t.Fatalf("count = %d, want 3", got)
	}
	tn.Message(t, sub, tpl, nil)
	if got := count(); got != 4 {
		t.Fatalf("count after insert = %d, want 4 (no cache)", got)
	}
}
