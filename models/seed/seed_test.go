package seed_test

import (
	"bytes"
	"context"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"messages/models"
	"messages/models/dbtest"
	"messages/models/jsonl"
	"messages/models/seed"
	"messages/models/store"
)

const seedEnv = "6774858000000000000000e1"

// smallSeed is a seed run small enough for a unit test.
var smallSeed = seed.Options{Seed: 7, EnvironmentID: seedEnv, Messages: 300, Subscribers: 25, Templates: 6}

func TestSeedIsDeterministic(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		dbtest.Seed(t, s, smallSeed)
		again := dbtest.Open(t, s.Dialect())
		dbtest.Seed(t, again, smallSeed)
		first := dbtest.Export(t, s, seedEnv)
		if diff := cmp.Diff(string(first), string(dbtest.Export(t, again, seedEnv))); diff != "" {
			t.Errorf("the same seed gave different data (-first +second):\n%s", diff)
		}

		other := dbtest.Open(t, s.Dialect())
		o := smallSeed
		o.Seed = 8
		dbtest.Seed(t, other, o)
		if bytes.Equal(first, dbtest.Export(t, other, seedEnv)) {
			t.Error("seeds 7 and 8 gave identical data")
		}
	})
}

func TestSeedDerivesEnvironmentFromSeed(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		o := seed.Options{Seed: 11, Messages: 20, Subscribers: 3, Templates: 2}
		first := dbtest.Seed(t, s, o)
		second := dbtest.Seed(t, dbtest.Open(t, s.Dialect()), o)
		if diff := cmp.Diff(first, second); diff != "" {
			t.Errorf("stats of two runs (-first +second):\n%s", diff)
		}
		if !models.IsID(first.EnvironmentID) || !models.IsID(first.OrganizationID) {
			t.Errorf("derived ids %q, %q are not ids", first.EnvironmentID, first.OrganizationID)
		}
	})
}

func TestSeedGeneratesRealisticMessages(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		var progress []int
		o := smallSeed
		o.Progress = func(done int) { progress = append(progress, done) }
		stats := dbtest.Seed(t, s, o)
		want := seed.Stats{EnvironmentID: seedEnv, OrganizationID: stats.OrganizationID, Messages: 300, Subscribers: 25, Templates: 6}
		if diff := cmp.Diff(want, stats); diff != "" {
			t.Errorf("stats (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(map[string]int64{"environments": 1, "subscribers": 25, "templates": 6, "messages": 300}, dbtest.RowCounts(t, s)); diff != "" {
			t.Errorf("row counts (-want +got):\n%s", diff)
		}
		if len(progress) == 0 || progress[len(progress)-1] != 300 || !slices.IsSorted(progress) {
			t.Errorf("progress calls %v, want increasing counts ending at 300", progress)
		}

		type summary struct {
			Channels                   map[models.ChannelType]bool
			InAppWithoutButtons        int
			TransactionSizes           map[int]bool
			Read, Seen                 bool
			ShortPayloads, OutOfPeriod int
			Missing                    int
		}
		got := summary{Channels: map[models.ChannelType]bool{}, TransactionSizes: map[int]bool{}}
		txns := map[string]int{}
		end := seed.Base.AddDate(1, 0, 1)
		for _, m := range dbtest.ExportedMessages(t, dbtest.Export(t, s, seedEnv)) {
			got.Channels[m.Channel] = true
			txns[m.TransactionID]++
			got.Read, got.Seen = got.Read || m.Read, got.Seen || m.Seen
			if m.Channel == models.ChannelInApp {
				a := m.CTA.Action
				if a == nil || a.Status != models.ActionPending || len(a.Buttons) != 2 ||
					a.Buttons[0].Type != models.ButtonPrimary || a.Buttons[1].Type != models.ButtonSecondary || a.Buttons[0].Content == "" {
					got.InAppWithoutButtons++
				}
			}
			if len(m.Payload) < 200 || !m.Payload.IsObject() {
				got.ShortPayloads++
			}
			if m.CreatedAt.Before(seed.Base) || m.CreatedAt.After(end) {
				got.OutOfPeriod++
			}
			if m.Subscriber == nil || m.Template == nil || len(m.Content) == 0 {
				got.Missing++
			}
		}
		for _, n := range txns {
			got.TransactionSizes[n] = true
		}
		wantSummary := summary{
			Channels:         map[models.ChannelType]bool{"in_app": true, "email": true, "sms": true, "chat": true, "push": true},
			TransactionSizes: map[int]bool{1: true, 2: true, 3: true, 4: true},
			Read:             true, Seen: true,
		}
		if diff := cmp.Diff(wantSummary, got); diff != "" {
			t.Errorf("seeded messages (-want +got):\n%s", diff)
		}
	})
}

func TestSeedAgainAddsMessages(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		o := smallSeed
		o.Messages = 100
		dbtest.Seed(t, s, o)
		dbtest.Seed(t, s, o) // same seed: same subscribers and templates, new messages
		o.Seed = 8
		dbtest.Seed(t, s, o) // another seed: its own subscribers and templates
		if diff := cmp.Diff(map[string]int64{"environments": 1, "subscribers": 50, "templates": 12, "messages": 300}, dbtest.RowCounts(t, s)); diff != "" {
			t.Errorf("row counts (-want +got):\n%s", diff)
		}
	})
}

func TestSeedUsesExistingSubscriberWithSameSubscriberID(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		tn := dbtest.NewTenant(t, s, "seeded")
		existing := tn.Subscriber(t, "user-7-00000") // what seed 7 calls its first subscriber
		o := seed.Options{Seed: 7, EnvironmentID: tn.Env.ID, Messages: 300, Subscribers: 2, Templates: 1}
		dbtest.Seed(t, s, o)
		toExisting := 0
		for _, m := range dbtest.ExportedMessages(t, dbtest.Export(t, s, tn.Env.ID)) {
			if m.Subscriber == nil {
				t.Fatalf("message %s points at a missing subscriber %s", m.ID, m.SubscriberID)
			}
			if m.SubscriberID == existing.ID {
				toExisting++
			}
		}
		if toExisting == 0 {
			t.Error("no message went to the subscriber that already had the subscriberId")
		}
		if diff := cmp.Diff(map[string]int64{"environments": 1, "subscribers": 2, "templates": 1, "messages": 300}, dbtest.RowCounts(t, s)); diff != "" {
			t.Errorf("row counts (-want +got):\n%s", diff)
		}
	})
}

func TestSeedRefusesNegativeCounts(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		_, err := seed.Generate(context.Background(), s, seed.Options{Messages: -1})
		if models.ErrorCode(err) != models.EINVALID {
			t.Errorf("seed -1 messages: %v, want EINVALID", err)
		}
	})
}

// Seeded data (the demo's too) holds only values the platform's SDK accepts: import,
// which refuses anything outside the SDK's sets, takes its export whole.
func TestSeedHoldsOnlySDKValues(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		dbtest.Seed(t, s, smallSeed)
		fresh := dbtest.Open(t, s.Dialect())
		if _, err := jsonl.Import(context.Background(), fresh, bytes.NewReader(dbtest.Export(t, s, seedEnv)), nil); err != nil {
			t.Fatalf("import of the seeded data: %v", err)
		}
	})
}
