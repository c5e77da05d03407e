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
