package store_test

import (
	"context"
	"errors"
	"testing"

	mysqldriver "github.com/go-sql-driver/mysql"

	"messages/models"
	"messages/models/cluster"
	"messages/models/dbtest"
	"messages/models/store"
)

// deadlockError is the error MySQL answers a deadlock, and Galera a failed certification.
var deadlockError = &mysqldriver.MySQLError{Number: 1213, SQLState: [5]byte{'4', '0', '0', '0', '1'},
	Message: "Deadlock found when trying to get lock; try restarting transaction"}

func TestIsConflict(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		err  error
		want bool
	}{
		{"conflictDeadlock", deadlockError, true},
		{"conflictLockWaitTimeout", &mysqldriver.MySQLError{Number: 1205}, true},
		{"conflictWrapped", errors.Join(errors.New("mark"), deadlockError), true},
		{"conflictTriggerParseAborted", &mysqldriver.MySQLError{Number: 1064,
			Message: "Trigger 'messages_count_delete' has an error in its body: 'Query was empty'"}, true},
		{"noConflictSyntaxError", &mysqldriver.MySQLError{Number: 1064,
			Message: "You have an error in your SQL syntax; check the manual"}, false},
		{"noConflictDuplicate", &mysqldriver.MySQLError{Number: 1062}, false},
		{"noConflictNil", nil, false},
		{"noConflictBadConn", mysqldriver.ErrInvalidConn, false},
	} {
		if got := models.IsConflict(tt.err); got != tt.want {
			t.Errorf("%s: IsConflict(%v) = %v, want %v", tt.name, tt.err, got, tt.want)
		}
	}
}

// TestMarkRunsAgainAfterDeadlock makes a mark's first attempt lose a real deadlock against
// another transaction: the mark is run again, succeeds once the other transaction has
// committed, and its values are the ones that stay.
func TestMarkRunsAgainAfterDeadlock(t *testing.T) {
	hooks := &dbtest.MarkHooks{}
	s := dbtest.Open(t, store.DialectMySQL, store.WithMarkHook(hooks.Run))
	f := newMarkFixture(t, s)
	heavy := make([]string, 10)
	for i := range heavy {
		heavy[i] = f.a.Message(t, f.bob, f.tpl, nil).ID
	}
	sqlDB, err := s.DB().DB()
	if err != nil {
		t.Fatal(err)
	}
	retries := s.Retries().Retries.Load()
	var attempts []int
	var lost error
	defer hooks.Set(f.ofAlice.ID, func(ctx context.Context) error {
		attempts = append(attempts, cluster.Attempt(ctx))
		if cluster.Attempt(ctx) > 1 {
			return nil
		}
		lost = dbtest.Deadlock(t, sqlDB, f.ofAlice.ID, heavy, func() error {
			// Inside the mark's transaction: a mark of one of the other's rows.
			_, err := s.MarkMessageAction(ctx, f.a.Env.ID, models.MarkAction{SubscriberID: "sub-bob", MessageID: heavy[0],
				Type: models.ButtonPrimary, Status: models.ActionDone})
			return err
		})
		return lost
	})()

	got := mark(t, s, f.a.Env.ID, models.MarkAction{SubscriberID: "sub-alice", MessageID: f.ofAlice.ID,
		Type: models.ButtonSecondary, Status: models.ActionDone, Payload: models.JSON(`{"retried":true}`)})
	// Inside the mark's transaction the conflict is answered as unavailable, not logged:
	// the transaction records it and runs again.
	if models.ErrorCode(lost) != models.EUNAVAILABLE {
		t.Fatalf("the first attempt's conflicting lock: %v, want it answered unavailable", lost)
	}
	if len(attempts) != 2 || attempts[0] != 1 || attempts[1] != 2 {
		t.Errorf("the mark ran attempts %v, want [1 2]", attempts)
	}
	if n := s.Retries().Retries.Load() - retries; n < 1 {
		t.Errorf("retries counted %d, want at least 1", n)
	}
	want := &models.CTAResult{Type: models.ButtonSecondary, Payload: models.JSON(`{"retried":true}`)}
	for _, m := range []*models.Message{got, dbtest.LoadMessage(t, s, f.ofAlice.ID)} {
		if a := m.CTA.Action; a == nil || a.Status != models.ActionDone || a.Result == nil ||
			a.Result.Type != want.Type || string(a.Result.Payload) != string(want.Payload) {
			t.Errorf("action %+v, want done with %+v", a, want)
		}
	}
}

// TestRetryTransactionGivesUp: a transaction that loses every attempt is rolled back each
// time and returns the conflict, which clients get as a 503, and is counted.
func TestRetryTransactionGivesUp(t *testing.T) {
	hooks := &dbtest.MarkHooks{}
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		f := newMarkFixture(t, s)
		exhausted := s.Retries().Exhausted.Load()
		var attempts int
		defer hooks.Set(f.ofAlice.ID, func(ctx context.Context) error {
			attempts++
			return deadlockError
		})()
		_, err := s.MarkMessageAction(context.Background(), f.a.Env.ID, models.MarkAction{SubscriberID: "sub-alice",
			MessageID: f.ofAlice.ID, Type: models.ButtonPrimary, Status: models.ActionDone})
		if !errors.Is(err, deadlockError) || !models.IsUnavailable(err) {
			t.Fatalf("error %v, want the deadlock, reported as unavailable", err)
		}
		if attempts != cluster.DefaultRetryPolicy.Attempts {
			t.Errorf("%d attempts, want %d", attempts, cluster.DefaultRetryPolicy.Attempts)
		}
		if n := s.Retries().Exhausted.Load() - exhausted; n < 1 {
			t.Errorf("exhausted retries counted %d, want at least 1", n)
		}
		if a := dbtest.LoadMessage(t, s, f.ofAlice.ID).CTA.Action; a != nil && a.Status == models.ActionDone {
			t.Errorf("a failed attempt's change stayed: %+v", a)
		}
	}, store.WithMarkHook(hooks.Run))
}

// TestTransactionRollsBackAConflictFnSwallowed: a store call inside a transaction that
// loses a conflict fails the transaction even when fn answers without its error, since
// the server has already rolled back what came before; RetryTransaction runs it again.
func TestTransactionRollsBackAConflictFnSwallowed(t *testing.T) {
	hooks := &dbtest.MarkHooks{}
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		f := newMarkFixture(t, s)
		defer hooks.Set(f.ofAlice.ID, func(ctx context.Context) error {
			if cluster.Attempt(ctx) == 1 {
				return deadlockError
			}
			return nil
		})()
		var runs, marked int
		markSwallowing := func(ctx context.Context) error {
			runs++
			if _, err := s.MarkMessageAction(ctx, f.a.Env.ID, models.MarkAction{SubscriberID: "sub-alice",
				MessageID: f.ofAlice.ID, Type: models.ButtonPrimary, Status: models.ActionDone}); err == nil {
				marked++
			}
			return nil // as a handler that wrote the error into its response
		}
		if err := s.Transaction(context.Background(), markSwallowing); !errors.Is(err, deadlockError) {
			t.Errorf("Transaction: %v, want the conflict fn swallowed", err)
		}
		if a := dbtest.LoadMessage(t, s, f.ofAlice.ID).CTA.Action; a != nil && a.Status == models.ActionDone {
			t.Errorf("the conflicted transaction committed: %+v", a)
		}
		runs, marked = 0, 0
		if err := s.RetryTransaction(context.Background(), markSwallowing); err != nil {
			t.Fatalf("RetryTransaction: %v", err)
		}
		if runs != 2 || marked != 1 {
			t.Errorf("fn ran %d times and marked %d, want 2 and 1", runs, marked)
		}
		if a := dbtest.LoadMessage(t, s, f.ofAlice.ID).CTA.Action; a == nil || a.Status != models.ActionDone {
			t.Errorf("the retried transaction did not commit: %+v", a)
		}
	}, store.WithMarkHook(hooks.Run))
}
