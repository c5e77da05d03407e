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

// tombstoneTrigger is migration 13's trigger, put back after the run that drops it.
const tombstoneTrigger = `CREATE TRIGGER messages_tombstone AFTER DELETE ON messages FOR EACH ROW
INSERT INTO message_deletions (id, environment_id, subscriber_id, channel, created_at, deleted_at)
    VALUES (OLD.id, OLD.environment_id, OLD.subscriber_id, OLD.channel, OLD.created_at, CURRENT_TIMESTAMP(6))
ON DUPLICATE KEY UPDATE environment_id = VALUES(environment_id), subscriber_id = VALUES(subscriber_id),
    channel = VALUES(channel), created_at = VALUES(created_at), deleted_at = VALUES(deleted_at)`

// BenchmarkDeleteAll deletes all of one subscriber's in-app messages (BULK_MESSAGES,
// default 100,000) on MariaDB, as a delete by filter does (the store's batches of 500,
// each a transaction, the counters and a tombstone per row by the triggers), beside the
// same delete with the tombstone trigger dropped (what the tombstones cost) and a read of
// them all (the bulk change of the same size). Each pass starts from a freshly written
// inbox, not timed. BENCHMARKS.md ("Deleting messages") has the command and the figures.
func BenchmarkDeleteAll(b *testing.B) {
	n := 100_000
	if v, err := strconv.Atoi(os.Getenv("BULK_MESSAGES")); err == nil && v > 0 {
		n = v
	}
	s := dbtest.Open(b, store.DialectMySQL)
	tn := dbtest.NewTenant(b, s, "delete")
	f := &countFixture{s: s, tn: tn, subs: map[string]*models.Subscriber{"alice": tn.Subscriber(b, "alice")}}
	ctx, alice, inApp := context.Background(), "alice", models.ChannelInApp
	fill := func(b *testing.B) {
		b.StopTimer()
		defer b.StartTimer()
		if err := s.DB().Exec("DELETE FROM messages WHERE environment_id = ?", tn.Env.ID).Error; err != nil {
			b.Fatal(err)
		}
		for done := 0; done < n; done += 5000 {
			var msgs []*models.Message
			for range min(5000, n-done) {
				msgs = append(msgs, f.message("alice", models.ChannelInApp))
			}
			f.write(b, store.ConflictFail, msgs...)
		}
	}
	deleteAll := func(b *testing.B) {
		for range b.N {
			fill(b)
			out, err := s.DeleteMessages(ctx, tn.Env.ID, models.DeleteTarget{SubscriberID: &alice, Channel: &inApp})
			if err != nil || out.Deleted != n {
				b.Fatalf("deleted %+v of %d: %v", out, n, err)
			}
		}
	}
	b.Run("delete/batches500", deleteAll)
	b.Run("delete/batches500WithoutTombstones", func(b *testing.B) {
		if err := s.DB().Exec("DROP TRIGGER messages_tombstone").Error; err != nil {
			b.Fatal(err)
		}
		defer func() {
			if err := s.DB().Exec(tombstoneTrigger).Error; err != nil {
				b.Fatal(err)
			}
		}()
		deleteAll(b)
	})
	b.Run("readAll/batches500", func(b *testing.B) {
		for range b.N {
			fill(b)
			out, err := s.ChangeState(ctx, tn.Env.ID, models.StateTarget{SubscriberID: alice, Channel: &inApp}, models.StateChange{Read: models.Bool(true)})
			if err != nil || out.Changed != n {
				b.Fatalf("read %+v of %d: %v", out, n, err)
			}
		}
	})
}
