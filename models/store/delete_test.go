package store_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"messages/models"
	"messages/models/dbtest"
	"messages/models/store"
)

// exists reports whether the message's row is stored.
func exists(t *testing.T, s *store.Store, env, id string) bool {
	t.Helper()
	var n int64
	if err := s.DB().Model(&models.Message{}).Where("environment_id = ? AND id = ?", env, id).Count(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n == 1
}

// tombstones lists the ids message_deletions holds for env, in order.
func tombstones(t *testing.T, s *store.Store, env string) []string {
	t.Helper()
	var ids []string
	if err := s.DB().Model(&store.MessageDeletion{}).Where("environment_id = ?", env).Order("id").Pluck("id", &ids).Error; err != nil {
		t.Fatal(err)
	}
	return ids
}

// Each shape of delete removes what it names and nothing else, leaves a tombstone of
// each message it removed, keeps the counters equal to COUNT(*), and deletes nothing the
// second time.
func TestDeleteShapes(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		subs := []string{"alice", "bob"}
		f := newCountFixture(t, s, "delete", subs...)
		other := newCountFixture(t, s, "delete-other", "alice")
		var msgs []*models.Message
		for i := range 12 {
			msgs = append(msgs, f.message(subs[i%2], *channels()[i%len(channels())]))
		}
		// msgs[8..11] share one transaction: two of alice's and two of bob's.
		for _, m := range msgs[8:] {
			m.TransactionID = "shared-txn"
		}
		f.write(t, store.ConflictFail, msgs...)
		foreign := other.message("alice", models.ChannelInApp)
		foreign.TransactionID = "shared-txn"
		other.write(t, store.ConflictFail, foreign)
		env := f.tn.Env.ID
		del := func(target models.DeleteTarget) *models.Deleted {
			t.Helper()
			out, err := s.DeleteMessages(ctx, env, target)
			if err != nil {
				t.Fatal(err)
			}
			checkStateCounts(t, s, env, subs)
			return out
		}
		alice, bob := "alice", "bob"
		var gone []string

		// One message, by an API key: any subscriber's.
		out := del(models.DeleteTarget{MessageIDs: []string{msgs[1].ID}})
		if out.Deleted != 1 || !slices.Equal(out.IDs, []string{msgs[1].ID}) || exists(t, s, env, msgs[1].ID) {
			t.Fatalf("delete of one message: %+v, still stored %v", out, exists(t, s, env, msgs[1].ID))
		}
		gone = append(gone, msgs[1].ID)
		if out := del(models.DeleteTarget{MessageIDs: []string{msgs[1].ID}}); out.Deleted != 0 || len(out.IDs) != 0 {
			t.Fatalf("deleting it again: %+v, want nothing", out)
		}

		// Several ids, scoped to alice: bob's, another tenant's and a malformed id are left.
		out = del(models.DeleteTarget{SubscriberID: &alice, MessageIDs: []string{msgs[0].ID, msgs[3].ID, foreign.ID, "not-an-id", msgs[2].ID}})
		if out.Deleted != 2 || !sameIDs(out.IDs, msgs[0].ID, msgs[2].ID) {
			t.Fatalf("delete of alice's named messages: %+v, want msgs 0 and 2", out)
		}
		gone = append(gone, msgs[0].ID, msgs[2].ID)
		if !exists(t, s, env, msgs[3].ID) || !exists(t, s, other.tn.Env.ID, foreign.ID) {
			t.Fatal("a delete scoped to alice removed bob's message or another tenant's")
		}

		// A transaction on one channel, then all of it: the other tenant's is kept.
		ch := msgs[8].Channel
		out = del(models.DeleteTarget{TransactionID: ptr("shared-txn"), Channel: &ch})
		if out.Deleted != 1 || exists(t, s, env, msgs[8].ID) {
			t.Fatalf("delete of the transaction's %s messages: %+v", ch, out)
		}
		out = del(models.DeleteTarget{TransactionID: ptr("shared-txn")})
		if out.Deleted != 3 {
			t.Fatalf("delete of the transaction: %+v, want 3", out)
		}
		gone = append(gone, msgs[8].ID, msgs[9].ID, msgs[10].ID, msgs[11].ID)
		if !exists(t, s, other.tn.Env.ID, foreign.ID) {
			t.Fatal("a transaction's delete reached another tenant")
		}
		if out := del(models.DeleteTarget{TransactionID: ptr("shared-txn")}); out.Deleted != 0 {
			t.Fatalf("deleting the transaction again: %+v", out)
		}

		// By filter: bob's read messages, then everything of bob's.
		if _, err := s.ChangeState(ctx, env, models.StateTarget{SubscriberID: bob, MessageIDs: []string{msgs[3].ID}}, models.StateChange{Read: flag(true)}); err != nil {
			t.Fatal(err)
		}
		out = del(models.DeleteTarget{SubscriberID: &bob, Filter: models.StateFilter{Read: flag(true)}})
		if out.Deleted != 1 || exists(t, s, env, msgs[3].ID) {
			t.Fatalf("delete of bob's read messages: %+v", out)
		}
		out = del(models.DeleteTarget{SubscriberID: &bob})
		if out.Deleted != 2 { // msgs 5 and 7
			t.Fatalf("delete of all bob's messages: %+v, want 2", out)
		}
		gone = append(gone, msgs[3].ID, msgs[5].ID, msgs[7].ID)
		for _, m := range []*models.Message{msgs[4], msgs[6]} {
			if !exists(t, s, env, m.ID) {
				t.Fatalf("alice's message %s went with bob's", m.ID)
			}
		}
		slices.Sort(gone)
		if got := tombstones(t, s, env); !slices.Equal(got, gone) {
			t.Fatalf("tombstones %v, want one per deleted message %v", got, gone)
		}
		if got := tombstones(t, s, other.tn.Env.ID); len(got) != 0 {
			t.Fatalf("the other tenant has tombstones %v", got)
		}
	})
}

func sameIDs(got []string, want ...string) bool {
	got, want = slices.Clone(got), slices.Clone(want)
	slices.Sort(got)
	slices.Sort(want)
	return slices.Equal(got, want)
}

// A delete by filter removes more than one batch, each its own transaction.
func TestDeleteByFilterInBatches(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		f := newCountFixture(t, s, "many", "ada", "bo")
		var msgs []*models.Message
		for i := range 1234 {
			sub := "ada"
			if i%10 == 0 {
				sub = "bo"
			}
			msgs = append(msgs, f.message(sub, models.ChannelInApp))
		}
		f.write(t, store.ConflictFail, msgs...)
		ada := "ada"
		out, err := s.DeleteMessages(context.Background(), f.tn.Env.ID, models.DeleteTarget{SubscriberID: &ada, Channel: &inApp})
		if err != nil {
			t.Fatal(err)
		}
		if out.Deleted != 1234-124 {
			t.Fatalf("deleted %d, want %d", out.Deleted, 1234-124)
		}
		if n := trueCount(t, s, f.tn.Env.ID, models.ListFilter{}); n != 124 {
			t.Fatalf("%d messages left, want bo's 124", n)
		}
		checkStateCounts(t, s, f.tn.Env.ID, []string{"ada", "bo"})
	})
}

var inApp = models.ChannelInApp

// Deletes of every shape from several writers at once, beside state changes, inserts
// and another program's plain SQL DELETE, leave every counter equal to COUNT(*), and
// every deleted message with its tombstone.
func TestDeleteCountsExactUnderConcurrentWriters(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		subs := []string{"s0", "s1", "s2", "s3"}
		f := newCountFixture(t, s, "deletes", subs...)
		chans := channels()
		var msgs []*models.Message
		for i := range 800 {
			m := f.message(subs[i%len(subs)], *chans[i%len(chans)])
			m.TransactionID = fmt.Sprintf("txn-%d", i%40)
			msgs = append(msgs, m)
		}
		f.write(t, store.ConflictFail, msgs...)
		env := f.tn.Env.ID
		var wg sync.WaitGroup
		errs := make(chan error, 16)
		for w := range 4 {
			wg.Go(func() {
				rng := rand.New(rand.NewPCG(uint64(w), 11))
				for range 30 {
					sub := subs[rng.IntN(len(subs))]
					var err error
					switch rng.IntN(5) {
					case 0:
						target := models.DeleteTarget{MessageIDs: []string{msgs[rng.IntN(len(msgs))].ID, msgs[rng.IntN(len(msgs))].ID}}
						err = retryDeadlock(func() error { _, err := s.DeleteMessages(ctx, env, target); return err })
					case 1:
						target := models.DeleteTarget{TransactionID: ptr(fmt.Sprintf("txn-%d", rng.IntN(40)))}
						err = retryDeadlock(func() error { _, err := s.DeleteMessages(ctx, env, target); return err })
					case 2:
						target := models.DeleteTarget{SubscriberID: &sub, Channel: chans[rng.IntN(len(chans))], Filter: models.StateFilter{Read: flag(rng.IntN(2) == 0)}}
						err = retryDeadlock(func() error { _, err := s.DeleteMessages(ctx, env, target); return err })
					case 3:
						target := models.StateTarget{SubscriberID: sub, Channel: chans[rng.IntN(len(chans))]}
						err = retryDeadlock(func() error {
							_, err := s.ChangeState(ctx, env, target, models.StateChange{Read: flag(rng.IntN(2) == 0), Seen: flag(true)})
							return err
						})
					case 4:
						more := []*models.Message{f.message(sub, *chans[rng.IntN(len(chans))])}
						err = retryDeadlock(func() error {
							return s.Transaction(ctx, func(ctx context.Context) error {
								return s.WriteBatch(ctx, store.Batch{Messages: more}, store.ConflictFail)
							})
						})
					}
					if err != nil {
						errs <- fmt.Errorf("writer %d: %w", w, err)
						return
					}
				}
			})
		}
		wg.Go(func() { // another program's plain SQL
			for i := range 40 {
				if err := retryDeadlock(func() error {
					return s.DB().Exec("DELETE FROM messages WHERE environment_id = ? AND id = ?", env, msgs[i*7].ID).Error
				}); err != nil {
					errs <- err
					return
				}
			}
		})
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		checkStateCounts(t, s, env, subs)
		var missing int64
		if err := s.DB().Raw(`SELECT COUNT(*) FROM message_deletions d WHERE d.environment_id = ?
AND EXISTS (SELECT 1 FROM messages m WHERE m.id = d.id)`, env).Scan(&missing).Error; err != nil {
			t.Fatal(err)
		}
		if missing != 0 {
			t.Fatalf("%d tombstones of messages still stored", missing)
		}
		var gone int64
		if err := s.DB().Model(&store.MessageDeletion{}).Where("environment_id = ?", env).Count(&gone).Error; err != nil {
			t.Fatal(err)
		}
		stored := trueCount(t, s, env, models.ListFilter{})
		if int(gone) < 40 || int(gone)+stored < len(msgs) {
			t.Fatalf("%d tombstones and %d messages stored of %d written (and more inserted)", gone, stored, len(msgs))
		}
	})
}

// A plain SQL DELETE by another program leaves a tombstone the feed's poll reads as a
// deletion, in changed_at order with the other changes; tombstones past the retention
// are purged.
func TestDeletionPositions(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		f := newCountFixture(t, s, "tomb", "ada")
		a, b := f.message("ada", models.ChannelInApp), f.message("ada", models.ChannelInApp)
		f.write(t, store.ConflictFail, a, b)
		start, err := s.LatestChange(ctx)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond) // past the stamps' precision (SQLite's: 1 ms)
		f.exec(t, "DELETE FROM messages WHERE id = ?", a.ID)
		ps, err := s.ChangedSince(ctx, start.At, nil, 100)
		if err != nil {
			t.Fatal(err)
		}
		var deleted []string
		for _, p := range ps {
			if p.Deleted {
				deleted = append(deleted, p.ID)
			}
		}
		if !slices.Equal(deleted, []string{a.ID}) {
			t.Fatalf("positions %+v: want the deletion of %s", ps, a.ID)
		}
		latest, err := s.LatestChange(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if latest.ID != a.ID || !latest.After(start) {
			t.Fatalf("latest change %+v, want the deletion of %s after %+v", latest, a.ID, start)
		}
		changes, err := s.DeletedMessages(ctx, []string{a.ID})
		if err != nil {
			t.Fatal(err)
		}
		if len(changes) != 1 || !changes[0].Deleted || changes[0].Message.Subscriber == nil ||
			changes[0].Message.Subscriber.SubscriberID != "ada" || changes[0].Message.Channel != models.ChannelInApp ||
			!changes[0].Message.CreatedAt.Equal(a.CreatedAt.Time) {
			t.Fatalf("the deletion as the feed loads it: %+v", changes)
		}
		ada := "ada"
		resumed, err := s.MessageChanges(ctx, models.ChangeFilter{EnvironmentID: f.tn.Env.ID, SubscriberID: &ada}, start.At.Add(-time.Second), models.Position{}, 10)
		if err != nil {
			t.Fatal(err)
		}
		if last := resumed[len(resumed)-1]; !last.Deleted || last.Message.ID != a.ID {
			t.Fatalf("a resumed subscription's changes end with %+v, want the deletion of %s", last, a.ID)
		}
		if n, err := s.PurgeDeletions(ctx, time.Hour); err != nil || n != 0 {
			t.Fatalf("purge of tombstones older than an hour: %d, %v; want none", n, err)
		}
		if n, err := s.PurgeDeletions(ctx, -time.Second); err != nil || n != 1 {
			t.Fatalf("purge of every tombstone: %d, %v; want 1", n, err)
		}
	})
}

// A page after a message deleted since it was read pages on from where the message was,
// through its tombstone; a message that never was is not found.
func TestPageAfterDeletedMessage(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		f := newCountFixture(t, s, "cursor", "ada")
		var msgs []*models.Message
		for range 5 {
			msgs = append(msgs, f.message("ada", models.ChannelInApp))
		}
		f.write(t, store.ConflictFail, msgs...)
		env, ada := f.tn.Env.ID, "ada"
		filter := models.ListFilter{SubscriberID: &ada, Channel: &inApp}
		// Newest first: msgs[4], msgs[3] on the first page; the client's after is msgs[3].
		if _, err := s.DeleteMessages(ctx, env, models.DeleteTarget{MessageIDs: []string{msgs[3].ID}}); err != nil {
			t.Fatal(err)
		}
		after, err := s.KeysetOfMessage(ctx, env, filter, msgs[3].ID)
		if err != nil {
			t.Fatal(err)
		}
		page, err := s.MessagesAfter(ctx, env, filter, after, 10, models.Everything)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, m := range page.Messages {
			got = append(got, m.ID)
		}
		if want := []string{msgs[2].ID, msgs[1].ID, msgs[0].ID}; !slices.Equal(got, want) {
			t.Fatalf("page after the deleted message: %v, want %v", got, want)
		}
		bo := "bo"
		if _, err := s.KeysetOfMessage(ctx, env, models.ListFilter{SubscriberID: &bo}, msgs[3].ID); err == nil {
			t.Fatal("another subscriber's deleted message gave a position")
		}
		if _, err := s.KeysetOfMessage(ctx, env, filter, models.NewID(time.Now())); err == nil {
			t.Fatal("a message that never was gave a position")
		}
	})
}
