package store_test

import (
	"context"
	"os"
	"strconv"
	"testing"

	"messages/models"
	"messages/models/dbtest"
	"messages/models/store"
)

// BenchmarkBulkStateChange reads and unreads all of one subscriber's in-app messages
// (BULK_MESSAGES, default 100,000) on MariaDB, each way of writing them side by side on
// the same table, one pass each per iteration: the store's batches (a job's, 500 a
// transaction, each read after the last one's id), batches of 500 each read from the
// first message again (the build before), batches of 5,000, one UPDATE of them all, one
// UPDATE of a column the counters do not follow (the triggers fire and write nothing),
// and last, with the counters' update trigger dropped, batches of 500 and one UPDATE.
// BENCHMARKS.md ("Bulk state changes") has the command and the figures.
func BenchmarkBulkStateChange(b *testing.B) {
	n := 100_000
	if v, err := strconv.Atoi(os.Getenv("BULK_MESSAGES")); err == nil && v > 0 {
		n = v
	}
	s := dbtest.Open(b, store.DialectMySQL)
	tn := dbtest.NewTenant(b, s, "bulk")
	f := &countFixture{s: s, tn: tn, subs: map[string]*models.Subscriber{"alice": tn.Subscriber(b, "alice")}}
	for done := 0; done < n; done += 5000 {
		var msgs []*models.Message
		for range min(5000, n-done) {
			msgs = append(msgs, f.message("alice", models.ChannelInApp))
		}
		f.write(b, store.ConflictFail, msgs...)
	}
	env, sub := f.tn.Env.ID, f.subs["alice"].ID
	ctx := context.Background()
	read := false
	flip := func(b *testing.B) bool { read = !read; return read }
	exec := func(b *testing.B, sql string, args ...any) int64 {
		res := s.DB().Exec(sql, args...)
		if res.Error != nil {
			b.Fatal(res.Error)
		}
		return res.RowsAffected
	}
	// batches writes size at a time, each batch read after the last one's id, or (fromStart)
	// from the first message again, as the build before did.
	batches := func(size int, fromStart bool) func(b *testing.B) {
		return func(b *testing.B) {
			for range b.N {
				to := flip(b)
				total := int64(0)
				after := ""
				for {
					var ids []string
					if err := s.DB().Raw("SELECT id FROM messages WHERE environment_id = ? AND subscriber_id = ? AND channel = 'in_app' AND `read` <> ? AND id > ? ORDER BY id LIMIT ?",
						env, sub, to, after, size).Scan(&ids).Error; err != nil {
						b.Fatal(err)
					}
					if len(ids) == 0 {
						break
					}
					total += exec(b, "UPDATE messages SET `read` = ? WHERE environment_id = ? AND id IN ?", to, env, ids)
					if !fromStart {
						after = ids[len(ids)-1]
					}
				}
				if total != int64(n) {
					b.Fatalf("changed %d of %d", total, n)
				}
			}
		}
	}
	one := func(b *testing.B) {
		for range b.N {
			if got := exec(b, "UPDATE messages SET `read` = ? WHERE environment_id = ? AND subscriber_id = ?", flip(b), env, sub); got != int64(n) {
				b.Fatalf("changed %d of %d", got, n)
			}
		}
	}
	b.Run("store=500", func(b *testing.B) {
		inApp := models.ChannelInApp
		for range b.N {
			out, err := s.ChangeState(ctx, env, models.StateTarget{SubscriberID: "alice", Channel: &inApp}, models.StateChange{Read: flag(flip(b))})
			if err != nil || out.Changed != n {
				b.Fatalf("changed %d of %d: %v", out.Changed, n, err)
			}
		}
	})
	b.Run("from-start=500", batches(500, true))
	b.Run("batches=5000", batches(5000, false))
	b.Run("one", one)
	b.Run("one-uncounted", func(b *testing.B) {
		for i := range b.N {
			exec(b, "UPDATE messages SET status = ? WHERE environment_id = ? AND subscriber_id = ?", []string{"seen", "sent"}[i%2], env, sub)
		}
	})
	exec(b, "DROP TRIGGER messages_count_update")
	b.Run("untriggered-batches=500", batches(500, false))
	b.Run("untriggered-one", one)
}
