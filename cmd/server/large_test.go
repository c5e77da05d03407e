//go:build !race

package main

import (
	"context"
	"testing"
	"time"

	"messages/models/dbtest"
	"messages/models/store"
)

// The changes over a subscriber's 100,000 messages. They are left out of race builds:
// under the race detector writing the 100,000 rows alone takes over five minutes on
// SQLite and the change does not finish in the test's bound, so CI (.ci/run) runs them
// in a pass of their own without it, and `go test ./...` runs them as it is.

// markAllMessages over a subscriber's 100,000 messages, with the production deadline of
// a few seconds, is never refused for its size: it answers that it is done, or that it
// was accepted and carries on; either way the change completes, and the counters the
// API answers with equal COUNT over the rows.
func TestBulkChangeOf100000Messages(t *testing.T) {
	for _, dialect := range dbtest.Dialects {
		t.Run(dialect, func(t *testing.T) {
			st, tn, srv := largeInbox(t, dialect)
			env := tn.Env.ID

			r, m := markAll(t, srv.base, tn.Key, "read: true")
			if m == nil {
				t.Fatalf("markAllMessages over %d messages: %d after %s: %s", bulkMessages, r.status, r.took, r.body)
			}
			after := finished(t, st, env, m, 5*time.Minute)
			t.Logf("read all: answered %s after %s with %d changed; done %s later", map[bool]string{true: "done", false: "accepted"}[m.Done],
				r.took.Round(time.Millisecond), m.Changed, after.Round(time.Millisecond))
			want := inboxCounts{Read: bulkMessages}
			if got := rowsOf(t, st, env); got != want {
				t.Errorf("rows after reading all: %+v, want %+v", got, want)
			}
			if got := countersOf(t, st, env); got != want {
				t.Errorf("counters after reading all: %+v, want %+v", got, want)
			}

			// Repeated, it changes nothing and says so at once.
			if r, m := markAll(t, srv.base, tn.Key, "read: true"); m == nil || *m != (marked{Changed: 0, Done: true}) {
				t.Errorf("reading all again: %d %s", r.status, r.body)
			}

			// The inbox API's "mark all seen", as @novu/js sends it.
			r, m = inboxBulk(t, srv.base, inboxToken(t, srv.base, tn.Key, "alice"), "seen")
			if m == nil {
				t.Fatalf("POST /v1/inbox/notifications/seen over %d messages: %d after %s: %s", bulkMessages, r.status, r.took, r.body)
			}
			after = finished(t, st, env, m, 5*time.Minute)
			t.Logf("seen all: answered %d after %s with %d changed; done %s later", r.status, r.took.Round(time.Millisecond), m.Changed, after.Round(time.Millisecond))
			want = inboxCounts{Read: bulkMessages, Seen: bulkMessages}
			if got, counters := rowsOf(t, st, env), countersOf(t, st, env); got != want || counters != want {
				t.Errorf("after seeing all: rows %+v, counters %+v, want %+v", got, counters, want)
			}

			// /v1's mark-all, as @novu/api's subscribers.messages.markAll sends it.
			r, m = v1MarkAll(t, srv.base, tn.Key, "unread")
			if m == nil {
				t.Fatalf("POST /v1/subscribers/alice/messages/mark-all over %d messages: %d after %s: %s", bulkMessages, r.status, r.took, r.body)
			}
			if m.Changed != bulkMessages {
				// @novu/api reads nothing but this number: it is every message the mark
				// changes, done or carried on.
				t.Errorf("/v1 mark-all over %d messages answered %d", bulkMessages, m.Changed)
			}
			after = finished(t, st, env, m, 5*time.Minute)
			t.Logf("/v1 unread all: answered %d after %s with %d changed; done %s later", r.status, r.took.Round(time.Millisecond), m.Changed, after.Round(time.Millisecond))
			want = inboxCounts{Unread: bulkMessages, Seen: bulkMessages}
			if got, counters := rowsOf(t, st, env), countersOf(t, st, env); got != want || counters != want {
				t.Errorf("after marking all unread: rows %+v, counters %+v, want %+v", got, counters, want)
			}
		})
	}
}

// Deleting all of a subscriber's 100,000 messages in one call, as @novu/js's deleteAll()
// sends it, with the production deadline of a few seconds, is never refused for its
// size: it answers that it is done, or that it was accepted and carries on (the bulk
// changes' job); either way every message goes, leaving a tombstone each, and the
// counters equal COUNT(*).
func TestDeleteOf100000Messages(t *testing.T) {
	for _, dialect := range dbtest.Dialects {
		t.Run(dialect, func(t *testing.T) {
			st, tn, srv := largeInbox(t, dialect)
			env := tn.Env.ID

			r, m := inboxBulk(t, srv.base, inboxToken(t, srv.base, tn.Key, "alice"), "delete")
			if m == nil {
				t.Fatalf("POST /v1/inbox/notifications/delete over %d messages: %d after %s: %s", bulkMessages, r.status, r.took, r.body)
			}
			after := finished(t, st, env, m, 5*time.Minute)
			t.Logf("delete all: answered %d after %s with %d deleted; done %s later", r.status, r.took.Round(time.Millisecond), m.Changed, after.Round(time.Millisecond))
			if got, counters := rowsOf(t, st, env), countersOf(t, st, env); got != (inboxCounts{}) || counters != (inboxCounts{}) {
				t.Errorf("after deleting all: rows %+v, counters %+v, want none", got, counters)
			}
			var tombs int64
			if err := st.DB().Model(&store.MessageDeletion{}).Where("environment_id = ?", env).Count(&tombs).Error; err != nil {
				t.Fatal(err)
			}
			if tombs != bulkMessages {
				t.Errorf("%d tombstones, want %d", tombs, bulkMessages)
			}
			// Repeated, it deletes nothing and says so at once.
			if r, m := inboxBulk(t, srv.base, inboxToken(t, srv.base, tn.Key, "alice"), "delete"); m == nil || *m != (marked{Changed: 0, Done: true}) {
				t.Errorf("deleting all again: %d %s", r.status, r.body)
			}
		})
	}
}

// largeInbox is a database of the dialect holding alice's bulkMessages in-app messages,
// and a production server on it whose requests have a deadline of 3 s.
func largeInbox(t *testing.T, dialect string) (*store.Store, *dbtest.Tenant, *running) {
	t.Helper()
	databaseURL := dbtest.URL(t, dialect)
	st, err := store.Open(context.Background(), databaseURL, store.DefaultPool)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	if err := st.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	tn := bulkInbox(t, st, bulkMessages)
	t.Setenv("DATABASE_URL", databaseURL)
	t.Setenv("APP_ENV", "production")
	return st, tn, start(t, "--request-timeout", "3s")
}
