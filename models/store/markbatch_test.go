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

// openCounted is a migrated MySQL store whose connections pass through a relay that
// counts round trips.
func openCounted(t *testing.T, opts ...store.OpenOption) (*store.Store, *dbtest.RoundTrips) {
	t.Helper()
	relay := dbtest.CountRoundTrips(t, dbtest.URL(t, store.DialectMySQL))
	s, err := store.Open(context.Background(), relay.URL, store.DefaultPool, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if err := s.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s, relay
}

// TestMarkRoundTrips: on MySQL a mark is two round trips (the batch of UPDATE and
// SELECT; then COMMIT) once its subscriber and template are cached, where it was four
// (BEGIN, UPDATE, SELECT, COMMIT), or six when they were not, and a mark of no message
// two (the batch; ROLLBACK). A keyed mark, inside the caller's transaction, takes the
// general path.
func TestMarkRoundTrips(t *testing.T) {
	s, relay := openCounted(t)
	f := newMarkFixture(t, s)
	markAlice := models.MarkAction{SubscriberID: "sub-alice", MessageID: f.ofAlice.ID, Type: models.ButtonPrimary, Status: models.ActionDone}
	// The first mark opens a connection and caches the subscriber and the template, which
	// it reads after COMMIT; a mark that read them inside its transaction could not.
	mark(t, s, f.a.Env.ID, markAlice)
	for _, tt := range []struct {
		name string
		run  func() error
		want int64
	}{
		{"markTwoRoundTrips", func() error {
			_, err := s.MarkMessageAction(context.Background(), f.a.Env.ID, markAlice)
			return err
		}, 2},
		{"mark404TwoRoundTrips", func() error {
			_, err := s.MarkMessageAction(context.Background(), f.a.Env.ID, models.MarkAction{SubscriberID: "sub-alice",
				MessageID: f.ofBob.ID, Type: models.ButtonPrimary, Status: models.ActionDone})
			if models.ErrorCode(err) == models.ENOTFOUND {
				return nil
			}
			return errors.Join(errors.New("want not found"), err)
		}, 2},
		{"markInCallersTransactionFive", func() error {
			return s.Transaction(context.Background(), func(ctx context.Context) error {
				_, err := s.MarkMessageAction(ctx, f.a.Env.ID, markAlice)
				return err
			})
		}, 5}, // BEGIN, SAVEPOINT, UPDATE, SELECT, COMMIT
	} {
		before := relay.Count()
		if err := tt.run(); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if got := relay.Count() - before; got != tt.want {
			t.Errorf("%s: %d round trips, want %d", tt.name, got, tt.want)
		}
	}
}

// TestMarkRollsBackWhenCanceled: a mark whose request ends before COMMIT leaves the
// message as it was, whether it ends while the batch waits for the row's lock or after
// the record was read back.
func TestMarkRollsBackWhenCanceled(t *testing.T) {
	hooks := &dbtest.MarkHooks{}
	s := dbtest.Open(t, store.DialectMySQL, store.WithMarkHook(hooks.Run))
	f := newMarkFixture(t, s)
	sqlDB, err := s.DB().DB()
	if err != nil {
		t.Fatal(err)
	}
	late := models.MarkAction{SubscriberID: "sub-alice", MessageID: f.ofAlice.ID, Type: models.ButtonSecondary,
		Status: models.ActionDone, Payload: models.JSON(`{"late":true}`)}
	unchanged := func(t *testing.T) {
		t.Helper()
		if a := dbtest.LoadMessage(t, s, f.ofAlice.ID).CTA.Action; a == nil || a.Status != models.ActionPending || a.Result != nil {
			t.Errorf("the abandoned mark changed the message: %+v", a)
		}
	}

	t.Run("whileWaitingForTheLock", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		holder, err := sqlDB.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := holder.ExecContext(ctx, "UPDATE messages SET action_status = action_status WHERE id = ?", f.ofAlice.ID); err != nil {
			t.Fatal(err)
		}
		markCtx, markCancel := context.WithTimeout(ctx, 300*time.Millisecond)
		defer markCancel()
		if _, err := s.MarkMessageAction(markCtx, f.a.Env.ID, late); err == nil {
			t.Fatal("the mark succeeded while another transaction held its row")
		}
		// The lock is released: a mark the server had still run would now apply.
		if err := holder.Rollback(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(300 * time.Millisecond)
		unchanged(t)
	})

	t.Run("afterTheReadBeforeCommit", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer hooks.Set(f.ofAlice.ID, func(context.Context) error {
			cancel() // the client goes away once the record was read back
			return nil
		})()
		if _, err := s.MarkMessageAction(ctx, f.a.Env.ID, late); !errors.Is(err, context.Canceled) {
			t.Fatalf("error %v, want the request's cancellation", err)
		}
		unchanged(t)
	})

	// The pool still works after its connections were abandoned.
	hooks.Set(f.ofAlice.ID, func(context.Context) error { return nil })()
	got := mark(t, s, f.a.Env.ID, late)
	if a := got.CTA.Action; a == nil || a.Status != models.ActionDone || a.Result == nil || string(a.Result.Payload) != `{"late":true}` {
		t.Errorf("a mark after the abandoned ones: %+v", a)
	}
}

// TestMarkBatchValuesStayValues: the batch's values are escaped into its text by the
// driver, so quotes, backslashes and semicolons in them are data, never statements.
func TestMarkBatchValuesStayValues(t *testing.T) {
	s := dbtest.Open(t, store.DialectMySQL)
	f := newMarkFixture(t, s)
	_, err := s.MarkMessageAction(context.Background(), f.a.Env.ID, models.MarkAction{
		SubscriberID: `sub-alice' OR '1'='1'; DELETE FROM messages; -- \`, MessageID: f.ofBob.ID,
		Type: models.ButtonPrimary, Status: models.ActionDone})
	if models.ErrorCode(err) != models.ENOTFOUND {
		t.Fatalf("a subscriber id with SQL in it: %v, want not found", err)
	}
	payload := `{"q":"it's \"quoted\"; DELETE FROM messages; \\ -- ","n":1}`
	got := mark(t, s, f.a.Env.ID, models.MarkAction{SubscriberID: "sub-alice", MessageID: f.ofAlice.ID,
		Type: models.ButtonPrimary, Status: models.ActionDone, Payload: models.JSON(payload)})
	for _, m := range []*models.Message{got, dbtest.LoadMessage(t, s, f.ofAlice.ID)} {
		if a := m.CTA.Action; a == nil || a.Result == nil || string(a.Result.Payload) != payload {
			t.Errorf("payload %+v, want %s", a, payload)
		}
	}
	var n int64
	if err := s.DB().Table("messages").Count(&n).Error; err != nil || n != 3 {
		t.Errorf("%d messages (%v), want the fixture's 3", n, err)
	}
}
