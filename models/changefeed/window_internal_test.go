package changefeed

import (
	"context"
	"testing"
	"time"

	"messages/models/dbtest"
	"messages/models/store"
)

// The window a poll reads never moves back, even when the estimate of the database's
// clock is corrected backwards between two polls (a slow round trip): the changes below
// the window were forgotten, and reading them again would publish them twice.
func TestWindowOnlyMovesForward(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		tn := dbtest.NewTenant(t, s, "window")
		sub := tn.Subscriber(t, "alice")
		f := New(s, Options{Interval: time.Hour, Lookback: 200 * time.Millisecond})
		if err := f.start(ctx); err != nil {
			t.Fatal(err)
		}
		// No read of the holds, and so of the clock, but the test's own.
		f.holdsRead = time.Now().Add(time.Hour)
		poll := func() {
			t.Helper()
			if err := f.poll(ctx); err != nil {
				t.Fatal(err)
			}
		}
		dbtest.RawMessage(t, s.DB(), tn.Env, sub.ID, nil)
		poll() // publishes it
		time.Sleep(500 * time.Millisecond)
		poll() // reads it again within the window, then forgets it below the window
		if n := f.stats.Changes.Load(); n != 1 {
			t.Fatalf("%d changes published, want 1", n)
		}
		f.offset -= time.Second // the clock's estimate corrected a second back
		poll()
		poll()
		if n := f.stats.Changes.Load(); n != 1 {
			t.Fatalf("%d changes published after the clock's estimate moved back, want 1", n)
		}
	})
}

// A hold released right after its writer's commit, before any poll saw the commit, still
// has its rows read: the poll that finds the hold gone reads from its start once. On
// MariaDB: SQLite's one connection would keep the feed from polling during the writer's
// transaction, which is the case here.
func TestReleasedHoldReadOnce(t *testing.T) {
	t.Parallel()
	func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		tn := dbtest.NewTenant(t, s, "released")
		sub := tn.Subscriber(t, "alice")
		f := New(s, Options{Interval: time.Hour, Lookback: 100 * time.Millisecond})
		if err := f.start(ctx); err != nil {
			t.Fatal(err)
		}
		poll := func(readHolds bool) {
			t.Helper()
			f.holdsRead = time.Now().Add(time.Hour) // not read by the clock
			if readHolds {
				f.holdsRead = time.Time{}
			}
			if err := f.poll(ctx); err != nil {
				t.Fatal(err)
			}
		}
		release, err := s.HoldChanges(ctx, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		poll(true)
		if f.hold.IsZero() {
			t.Fatal("the poll did not see the hold")
		}
		// A long writer: its row is stamped now and committed six lookbacks later, while
		// the feed polls on.
		tx := s.DB().Begin()
		id := dbtest.RawMessage(t, tx, tn.Env, sub.ID, nil)
		for range 3 {
			time.Sleep(200 * time.Millisecond)
			poll(false)
		}
		if err := tx.Commit().Error; err != nil {
			t.Fatal(err)
		}
		if err := release(ctx); err != nil {
			t.Fatal(err)
		}
		poll(true)
		if n := f.stats.Changes.Load(); n != 1 {
			t.Fatalf("%d changes published after the hold was released, want 1 (message %s)", n, id)
		}
		if !f.hold.IsZero() {
			t.Fatal("the hold is still in force")
		}
	}(t, dbtest.Open(t, store.DialectMySQL))
}
