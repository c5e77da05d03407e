package store_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"messages/models"
	"messages/models/dbtest"
	"messages/models/store"
)

func flag(v bool) *bool { return &v }

// stateOf reads one message's inbox columns as stored.
func stateOf(t *testing.T, s *store.Store, env, id string) *models.Message {
	t.Helper()
	var m models.Message
	if err := s.DB().Where("environment_id = ? AND id = ?", env, id).Take(&m).Error; err != nil {
		t.Fatal(err)
	}
	return &m
}

// Each change sets what it says and stamps its time once: read stamps lastReadDate,
// seen lastSeenDate and firstSeenDate, archive archivedAt; repeating a change writes no
// row; unarchive clears archivedAt; snooze and unsnooze set and clear snoozedUntil; a
// change names only the subscriber's own messages.
func TestStateChanges(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		f := newCountFixture(t, s, "inbox", "alice", "bob")
		m1, m2, bobs := f.message("alice", models.ChannelInApp), f.message("alice", models.ChannelInApp), f.message("bob", models.ChannelInApp)
		f.write(t, store.ConflictFail, m1, m2, bobs)
		env := f.tn.Env.ID
		change := func(ids []string, c models.StateChange) *models.StateChanged {
			t.Helper()
			out, err := s.ChangeState(ctx, env, models.StateTarget{SubscriberID: "alice", MessageIDs: ids}, c)
			if err != nil {
				t.Fatal(err)
			}
			return out
		}

		out := change([]string{m1.ID, bobs.ID, "not-an-id"}, models.StateChange{Read: flag(true), Seen: flag(true)})
		if out.Changed != 1 || len(out.Messages) != 1 || out.Messages[0].ID != m1.ID {
			t.Fatalf("read of alice's message and bob's: changed %d, returned %d messages, want 1 and alice's only", out.Changed, len(out.Messages))
		}
		got := out.Messages[0]
		if !got.Read || !got.Seen || got.LastReadDate == nil || got.LastSeenDate == nil || got.FirstSeenDate == nil {
			t.Fatalf("after read: %+v", got)
		}
		if stateOf(t, s, env, bobs.ID).Read {
			t.Fatal("bob's message was changed by a change for alice")
		}
		firstRead := *got.LastReadDate

		if out := change([]string{m1.ID}, models.StateChange{Read: flag(true)}); out.Changed != 0 {
			t.Fatalf("repeating read changed %d messages, want 0", out.Changed)
		}
		if got := stateOf(t, s, env, m1.ID); !got.LastReadDate.Equal(firstRead.Time) {
			t.Fatalf("repeating read moved lastReadDate from %v to %v", firstRead, got.LastReadDate)
		}
		change([]string{m1.ID}, models.StateChange{Read: flag(false)})
		if got := stateOf(t, s, env, m1.ID); got.Read || !got.Seen || got.LastReadDate == nil {
			t.Fatalf("unread should keep seen and lastReadDate: %+v", got)
		}

		change([]string{m2.ID}, models.StateChange{Archived: flag(true)})
		if got := stateOf(t, s, env, m2.ID); !got.Archived || got.ArchivedAt == nil {
			t.Fatalf("after archive: archived %v at %v", got.Archived, got.ArchivedAt)
		}
		change([]string{m2.ID}, models.StateChange{Archived: flag(false)})
		if got := stateOf(t, s, env, m2.ID); got.Archived || got.ArchivedAt != nil {
			t.Fatalf("after unarchive: archived %v at %v", got.Archived, got.ArchivedAt)
		}

		until := models.NewTime(time.Now().Add(time.Hour))
		change([]string{m2.ID}, models.StateChange{SnoozedUntil: &until})
		if got := stateOf(t, s, env, m2.ID); got.SnoozedUntil == nil || !got.SnoozedUntil.Equal(until.Time) {
			t.Fatalf("after snooze: %v, want %v", got.SnoozedUntil, until)
		}
		change([]string{m2.ID}, models.StateChange{Unsnooze: true})
		if got := stateOf(t, s, env, m2.ID); got.SnoozedUntil != nil {
			t.Fatalf("after unsnooze: %v", got.SnoozedUntil)
		}
		// A message seen before firstSeenDate existed keeps it unknown when read.
		if err := s.DB().Exec("UPDATE messages SET seen = TRUE, first_seen_date = NULL WHERE id = ?", bobs.ID).Error; err != nil {
			t.Fatal(err)
		}
		if _, err := s.ChangeState(ctx, env, models.StateTarget{SubscriberID: "bob", MessageIDs: []string{bobs.ID}},
			models.StateChange{Read: flag(true), Seen: flag(true)}); err != nil {
			t.Fatal(err)
		}
		if got := stateOf(t, s, env, bobs.ID); got.FirstSeenDate != nil || !got.Read {
			t.Fatalf("an already seen message got firstSeenDate %v when read", got.FirstSeenDate)
		}
		checkCounts(t, "after the changes", s, nil, env, f.filters())
	})
}

// A change naming messages with a channel changes only those of that channel, and reads
// back only them: the inbox API's changes, which see in-app messages alone.
func TestStateChangeOfNamedMessagesByChannel(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		f := newCountFixture(t, s, "named", "alice")
		inApp, email := f.message("alice", models.ChannelInApp), f.message("alice", models.ChannelEmail)
		f.write(t, store.ConflictFail, inApp, email)
		env := f.tn.Env.ID
		ch := models.ChannelInApp
		out, err := s.ChangeState(ctx, env, models.StateTarget{SubscriberID: "alice", MessageIDs: []string{inApp.ID, email.ID}, Channel: &ch},
			models.StateChange{Read: flag(true)})
		if err != nil {
			t.Fatal(err)
		}
		if out.Changed != 1 || len(out.Messages) != 1 || out.Messages[0].ID != inApp.ID {
			t.Fatalf("changed %d, read back %d messages, want the in-app one alone", out.Changed, len(out.Messages))
		}
		if !stateOf(t, s, env, inApp.ID).Read || stateOf(t, s, env, email.ID).Read {
			t.Fatal("the channel did not narrow the named messages")
		}
		checkCounts(t, "after the change", s, nil, env, f.filters())
	})
}

// A change of all a subscriber's messages, by channel and filter, reaches every one of
// them past a batch, and no one else's.
func TestStateChangeOfAllMessages(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		f := newCountFixture(t, s, "bulk", "alice", "bob")
		var msgs []*models.Message
		for i := range 1203 {
			ch := models.ChannelInApp
			if i%3 == 0 {
				ch = models.ChannelEmail
			}
			msgs = append(msgs, f.message("alice", ch))
		}
		msgs = append(msgs, f.message("bob", models.ChannelInApp))
		f.write(t, store.ConflictFail, msgs...)
		env := f.tn.Env.ID
		inApp := models.ChannelInApp

		out, err := s.ChangeState(ctx, env, models.StateTarget{SubscriberID: "alice", Channel: &inApp, Filter: models.StateFilter{Read: flag(false)}},
			models.StateChange{Read: flag(true), Seen: flag(true)})
		if err != nil {
			t.Fatal(err)
		}
		if out.Changed != 802 {
			t.Fatalf("read all of alice's in-app messages changed %d, want 802", out.Changed)
		}
		alice := "alice"
		counts, err := s.CountStates(ctx, env, &alice, &inApp)
		if err != nil {
			t.Fatal(err)
		}
		if unread := counts.Count(models.StateFilter{Read: flag(false)}); unread != 0 {
			t.Fatalf("alice has %d unread in-app messages after reading all", unread)
		}
		if unread := trueCount(t, s, env, models.ListFilter{SubscriberID: &alice, StateFilter: models.StateFilter{Read: flag(false)}}); unread != 401 {
			t.Fatalf("alice has %d unread messages in all, want her 401 emails", unread)
		}
		bob := "bob"
		if unread := trueCount(t, s, env, models.ListFilter{SubscriberID: &bob, StateFilter: models.StateFilter{Read: flag(false)}}); unread != 1 {
			t.Fatalf("bob's message was read by alice's change")
		}
		again, err := s.ChangeState(ctx, env, models.StateTarget{SubscriberID: "alice", Channel: &inApp}, models.StateChange{Read: flag(true), Seen: flag(true)})
		if err != nil || again.Changed != 0 {
			t.Fatalf("repeating it changed %d (%v), want 0", again.Changed, err)
		}
		checkCounts(t, "after reading all", s, nil, env, f.filters())
	})
}

// A snooze that ended is woken by the sweep, and counts as not snoozed from then on.
func TestWakeSnoozed(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		f := newCountFixture(t, s, "snooze", "alice")
		ended, later := f.message("alice", models.ChannelInApp), f.message("alice", models.ChannelInApp)
		f.write(t, store.ConflictFail, ended, later)
		env := f.tn.Env.ID
		past, future := models.NewTime(time.Now().Add(-time.Second)), models.NewTime(time.Now().Add(time.Hour))
		for id, until := range map[string]*models.Time{ended.ID: &past, later.ID: &future} {
			if _, err := s.ChangeState(ctx, env, models.StateTarget{SubscriberID: "alice", MessageIDs: []string{id}}, models.StateChange{SnoozedUntil: until}); err != nil {
				t.Fatal(err)
			}
		}
		n, err := s.WakeSnoozed(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// Other tests' snoozes may end too: only these two are checked.
		if n < 1 || stateOf(t, s, env, ended.ID).SnoozedUntil != nil || stateOf(t, s, env, later.ID).SnoozedUntil == nil {
			t.Fatalf("woke %d: the ended snooze should be gone, the later one kept", n)
		}
		checkCounts(t, "after the sweep", s, nil, env, f.filters())
	})
}

// Changes of the inbox state from several writers at once (the store's named and bulk
// changes, plain SQL setting the flags, inserts and deletes) leave every counter of every
// subscriber, channel and state equal to COUNT over the messages.
func TestStateCountsExactUnderConcurrentChanges(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		subs := []string{"s0", "s1", "s2", "s3", "s4", "s5"}
		f := newCountFixture(t, s, "busy", subs...)
		chans := channels()
		var msgs []*models.Message
		for i := range 600 {
			m := f.message(subs[i%len(subs)], *chans[i%len(chans)])
			// Every severity, and none stored both ways: empty and "none".
			m.Severity = []models.Severity{"", models.SeverityHigh, models.SeverityMedium, models.SeverityLow, models.SeverityNone}[i%5]
			msgs = append(msgs, m)
		}
		f.write(t, store.ConflictFail, msgs...)
		env := f.tn.Env.ID
		changes := []models.StateChange{
			{Read: flag(true), Seen: flag(true)}, {Read: flag(false)}, {Seen: flag(true)},
			{Archived: flag(true)}, {Archived: flag(false)}, {Unsnooze: true},
			{Read: flag(true), Archived: flag(true)},
		}
		var wg sync.WaitGroup
		errs := make(chan error, 16)
		for w := range 4 {
			wg.Go(func() {
				rng := rand.New(rand.NewPCG(uint64(w), 7))
				for range 40 {
					c := changes[rng.IntN(len(changes))]
					if rng.IntN(4) == 0 {
						until := models.NewTime(time.Now().Add(time.Hour))
						c = models.StateChange{SnoozedUntil: &until}
					}
					m := msgs[rng.IntN(len(msgs))]
					sub := subs[slicesIndex(msgs, m)%len(subs)]
					target := models.StateTarget{SubscriberID: sub, MessageIDs: []string{m.ID, msgs[rng.IntN(len(msgs))].ID}}
					if rng.IntN(5) == 0 && c.SnoozedUntil == nil {
						target = models.StateTarget{SubscriberID: sub, Channel: chans[rng.IntN(len(chans))]}
					}
					if err := retryDeadlock(func() error { _, err := s.ChangeState(ctx, env, target, c); return err }); err != nil {
						errs <- fmt.Errorf("writer %d: %w", w, err)
						return
					}
				}
			})
		}
		wg.Go(func() { // another writer's plain SQL: flags, severities, inserts, deletes
			rng := rand.New(rand.NewPCG(9, 9))
			for i := range 75 {
				m := msgs[rng.IntN(len(msgs))]
				var err error
				switch i % 5 {
				case 4:
					// Any text, as another program may write it: not one of the three is none.
					err = s.DB().Exec("UPDATE messages SET severity = ? WHERE id = ?", []string{"high", "low", "", "urgent"}[rng.IntN(4)], m.ID).Error
				case 0:
					err = s.DB().Exec("UPDATE messages SET `read` = NOT `read`, seen = TRUE WHERE id = ?", m.ID).Error
				case 1:
					err = s.DB().Exec("UPDATE messages SET archived = TRUE, snoozed_until = NULL WHERE id = ?", m.ID).Error
				case 2:
					dbtest.RawMessage(t, s.DB(), f.tn.Env, f.subs[subs[i%len(subs)]].ID, nil)
				case 3:
					err = s.DB().Exec("DELETE FROM messages WHERE id = ?", msgs[len(msgs)-1-i].ID).Error
				}
				if err != nil {
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
	})
}

func slicesIndex(msgs []*models.Message, m *models.Message) int {
	for i, x := range msgs {
		if x == m {
			return i
		}
	}
	return -1
}

// checkStateCounts compares every counter (each subscriber and none, each channel and
// none, all 16 states) with GROUP BY over the messages, and so the counters by workflow
// and month (checkWorkflowCounters).
func checkStateCounts(t *testing.T, s *store.Store, env string, subs []string) {
	t.Helper()
	checkWorkflowCounters(t, s, env)
	subjects := []*string{nil}
	for _, sub := range append(subs, "nobody") {
		subjects = append(subjects, &sub)
	}
	for _, sub := range subjects {
		for _, ch := range append([]*models.ChannelType{nil}, channels()...) {
			got, err := s.CountStates(context.Background(), env, sub, ch)
			if err != nil {
				t.Fatal(err)
			}
			var want models.StateCounts
			for st := range models.State(models.States) {
				f := models.ListFilter{SubscriberID: sub, Channel: ch, StateFilter: models.StateFilter{
					Read: flag(st&models.StateRead != 0), Seen: flag(st&models.StateSeen != 0),
					Archived: flag(st&models.StateArchived != 0), Snoozed: flag(st&models.StateSnoozed != 0),
					Severities: 1 << (st >> models.StateSeverityShift)}}
				want[st] = trueCount(t, s, env, f)
			}
			if got != want {
				t.Errorf("counts of %s by state = %v, want %v", describe(models.ListFilter{SubscriberID: sub, Channel: ch}), got, want)
			}
		}
	}
}
