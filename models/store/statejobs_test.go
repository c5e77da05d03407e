package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"messages/models"
	"messages/models/dbtest"
	"messages/models/store"
)

// jobFixture is alice's and bob's in-app messages, past one batch each, and the jobs of
// bulk changes over them.
type jobFixture struct {
	*countFixture
	env string
}

func newJobFixture(t *testing.T, s *store.Store) *jobFixture {
	t.Helper()
	f := newCountFixture(t, s, "jobs", "alice", "bob")
	var msgs []*models.Message
	for i := range 1300 {
		msgs = append(msgs, f.message([]string{"alice", "bob"}[i%2], models.ChannelInApp))
	}
	f.write(t, store.ConflictFail, msgs...)
	return &jobFixture{f, f.tn.Env.ID}
}

func (f *jobFixture) create(t *testing.T, ctx context.Context, sub string, c models.StateChange, owner string, lease time.Duration) (*store.StateJob, bool) {
	t.Helper()
	job, claimed, err := f.s.CreateStateJob(ctx, f.env, models.StateTarget{SubscriberID: sub}, c, owner, lease)
	if err != nil {
		t.Fatal(err)
	}
	return job, claimed
}

func (f *jobFixture) unread(t *testing.T, sub string) int {
	t.Helper()
	return trueCount(t, f.s, f.env, models.ListFilter{SubscriberID: &sub, StateFilter: models.StateFilter{Read: flag(false)}})
}

func jobIDs(jobs []*store.StateJob) []string {
	ids := []string{}
	for _, j := range jobs {
		ids = append(ids, j.ID)
	}
	return ids
}

// A subscriber's jobs run one at a time in the order they were asked for; another
// subscriber's run beside them; a job created inside a transaction is claimed only once
// it has committed; a job done is gone, with every message changed and the counters
// exact.
func TestStateJobsOrderAndClaims(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		f := newJobFixture(t, s)
		const lease = time.Minute
		readAll, unreadAll := models.StateChange{Read: flag(true)}, models.StateChange{Read: flag(false)}

		first, claimed := f.create(t, ctx, "alice", readAll, "one", lease)
		if !claimed {
			t.Fatal("a subscriber's only job was not claimed by its creator")
		}
		second, claimed := f.create(t, ctx, "alice", unreadAll, "one", lease)
		if claimed {
			t.Fatal("a subscriber's second job was claimed while the first is not done")
		}
		var inTx *store.StateJob
		if err := s.Transaction(ctx, func(ctx context.Context) error {
			var claimed bool
			inTx, claimed = f.create(t, ctx, "bob", readAll, "one", lease)
			if claimed {
				t.Error("a job created inside a transaction was claimed before it committed")
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}

		got, err := s.ClaimStateJobs(ctx, "two", lease, 10)
		if err != nil {
			t.Fatal(err)
		}
		if ids := jobIDs(got); len(ids) != 1 || ids[0] != inTx.ID {
			t.Fatalf("claimed %v while alice's first job runs, want bob's %s only", ids, inTx.ID)
		}
		if err := s.RunStateJob(ctx, got[0], "two", lease, nil); err != nil {
			t.Fatal(err)
		}
		if n := f.unread(t, "bob"); n != 0 {
			t.Errorf("bob has %d unread after his job", n)
		}

		var progress []int64
		if err := s.RunStateJob(ctx, first, "one", lease, func(n int64) { progress = append(progress, n) }); err != nil {
			t.Fatal(err)
		}
		if len(progress) != 2 || progress[1] != 650 {
			t.Errorf("alice's read-all reported progress %v, want two batches ending at 650", progress)
		}
		if n := f.unread(t, "alice"); n != 0 {
			t.Errorf("alice has %d unread after reading all", n)
		}
		got, err = s.ClaimStateJobs(ctx, "two", lease, 10)
		if err != nil {
			t.Fatal(err)
		}
		if ids := jobIDs(got); len(ids) != 1 || ids[0] != second.ID {
			t.Fatalf("claimed %v once alice's first job was done, want her second %s", ids, second.ID)
		}
		if err := s.RunStateJob(ctx, got[0], "two", lease, nil); err != nil {
			t.Fatal(err)
		}
		if n := f.unread(t, "alice"); n != 650 {
			t.Errorf("alice has %d unread after unreading all, want 650", n)
		}
		if jobs, err := s.StateJobs(ctx, f.env); err != nil || len(jobs) != 0 {
			t.Fatalf("jobs left when all are done: %v (%v)", jobIDs(jobs), err)
		}
		checkStateCounts(t, s, f.env, []string{"alice", "bob"})
	})
}

// A job whose owner stopped renewing its lease is claimed by another instance, which
// finishes it from where the committed batches left it; the first owner, coming back,
// finds it taken and changes nothing more.
func TestStateJobTakenOnWhenLeasePasses(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		f := newJobFixture(t, s)
		job, claimed := f.create(t, ctx, "alice", models.StateChange{Read: flag(true), Seen: flag(true)}, "dead", time.Second)
		if !claimed {
			t.Fatal("not claimed by its creator")
		}
		// The owner dies after its first batch: a context that ends there.
		dying, die := context.WithCancel(ctx)
		// Its lease is long enough that the check below runs while it holds however
		// slowly the machine runs (one second passed before it under CI's load, once).
		err := s.RunStateJob(dying, job, "dead", 5*time.Second, func(int64) { die() })
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("the dying run ended with %v", err)
		}
		if n := f.unread(t, "alice"); n != 150 {
			t.Fatalf("alice has %d unread after one batch, want 150", n)
		}
		if got, err := s.ClaimStateJobs(ctx, "alive", time.Minute, 10); err != nil || len(got) != 0 {
			t.Fatalf("claimed %v (%v) while the lease holds", jobIDs(got), err)
		}
		var taken []*store.StateJob
		deadline := time.Now().Add(30 * time.Second)
		for len(taken) == 0 && time.Now().Before(deadline) {
			time.Sleep(200 * time.Millisecond)
			if taken, err = s.ClaimStateJobs(ctx, "alive", time.Minute, 10); err != nil {
				t.Fatal(err)
			}
		}
		if len(taken) != 1 || taken[0].ID != job.ID || taken[0].Changed != 500 || taken[0].Attempts != 2 {
			t.Fatalf("after the lease passed, claimed %+v, want the job with 500 changed, second attempt", taken)
		}
		if err := s.RunStateJob(ctx, job, "dead", time.Second, nil); !errors.Is(err, store.ErrStateJobLost) {
			t.Fatalf("the first owner, back, ran on with %v, want ErrStateJobLost", err)
		}
		if err := s.RunStateJob(ctx, taken[0], "alive", time.Minute, nil); err != nil {
			t.Fatal(err)
		}
		if taken[0].Changed != 650 {
			t.Errorf("the job changed %d in all, want 650", taken[0].Changed)
		}
		if n := f.unread(t, "alice"); n != 0 {
			t.Errorf("alice has %d unread after the job was taken on", n)
		}
		checkStateCounts(t, s, f.env, []string{"alice", "bob"})
	})
}
