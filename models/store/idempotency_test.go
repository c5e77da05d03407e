package store_test

import (
	"context"
	"errors"
	"sort"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"messages/models"
	"messages/models/dbtest"
	"messages/models/store"
)

// idemNow is the fixed "now" of the idempotency tests.
var idemNow = time.Date(2025, 3, 2, 12, 0, 0, 0, time.UTC)

var errRollback = errors.New("roll back")

// claim runs ClaimIdempotencyKey in its own transaction; complete, when set, is the
// response stored before commit.
func claim(t testing.TB, s *store.Store, k models.IdempotencyKey, complete *models.IdempotencyKey) *models.IdempotencyKey {
	t.Helper()
	var existing *models.IdempotencyKey
	err := s.Transaction(context.Background(), func(ctx context.Context) error {
		var err error
		if existing, err = s.ClaimIdempotencyKey(ctx, &k, time.Second); err != nil || existing != nil {
			return err
		}
		if complete != nil {
			complete.EnvironmentID, complete.Key = k.EnvironmentID, k.Key
			return s.CompleteIdempotencyKey(ctx, complete)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("claim %q: %v", k.Key, err)
	}
	return existing
}

// storedKeys lists "environment/key" of every record, sorted.
func storedKeys(t testing.TB, s *store.Store) []string {
	t.Helper()
	var rows []models.IdempotencyKey
	if err := s.DB().Find(&rows).Error; err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, r := range rows {
		out = append(out, r.EnvironmentID+"/"+r.Key)
	}
	sort.Strings(out)
	return out
}

func key(env, k, fingerprint string, created time.Time) models.IdempotencyKey {
	return models.IdempotencyKey{EnvironmentID: env, Key: k, Fingerprint: fingerprint, CreatedAt: created, ExpiresAt: created.Add(24 * time.Hour)}
}

func TestIdempotencyKeyClaim(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		a, b := dbtest.NewTenant(t, s, "a").Env.ID, dbtest.NewTenant(t, s, "b").Env.ID
		fp := "f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0"

		t.Run("claim201ThenLiveRecordReturned", func(t *testing.T) {
			if got := claim(t, s, key(a, "k1", fp, idemNow), &models.IdempotencyKey{Status: 201, ContentType: "application/json", Body: []byte(`{"x":1}` + "\n")}); got != nil {
				t.Fatalf("first claim found %+v", got)
			}
			got := claim(t, s, key(a, "k1", "other", idemNow.Add(time.Hour)), nil)
			want := &models.IdempotencyKey{EnvironmentID: a, Key: "k1", Fingerprint: fp, Status: 201, ContentType: "application/json",
				Body: []byte(`{"x":1}` + "\n"), CreatedAt: idemNow, ExpiresAt: idemNow.Add(24 * time.Hour)}
			if diff := cmp.Diff(want, got, cmp.Comparer(func(x, y time.Time) bool { return x.Equal(y) })); diff != "" {
				t.Errorf("record (-want +got):\n%s", diff)
			}
		})

		t.Run("claimKeysExactAndPerEnvironment", func(t *testing.T) {
			for _, k := range []struct{ env, key string }{{a, "exact"}, {a, "exact "}, {a, "EXACT"}, {a, "exáct"}, {b, "exact"}} {
				if got := claim(t, s, key(k.env, k.key, fp, idemNow), &models.IdempotencyKey{Status: 201}); got != nil {
					t.Errorf("claim %q in %s found %q of %s", k.key, k.env, got.Key, got.EnvironmentID)
				}
			}
		})

		t.Run("claimRolledBackLeavesNothing", func(t *testing.T) {
			err := s.Transaction(context.Background(), func(ctx context.Context) error {
				k := key(a, "rolled-back", fp, idemNow)
				if _, err := s.ClaimIdempotencyKey(ctx, &k, time.Second); err != nil {
					return err
				}
				return errRollback
			})
			if !errors.Is(err, errRollback) {
				t.Fatalf("err = %v, want errRollback", err)
			}
			if got := claim(t, s, key(a, "rolled-back", fp, idemNow), nil); got != nil {
				t.Errorf("rolled-back claim left %+v", got)
			}
		})

		t.Run("claimExpiredReplaced", func(t *testing.T) {
			claim(t, s, key(a, "old", "old-fp", idemNow), &models.IdempotencyKey{Status: 201, Body: []byte("old")})
			later := idemNow.Add(24 * time.Hour) // expires_at itself counts as expired
			if got := claim(t, s, key(a, "old", "new-fp", later), &models.IdempotencyKey{Status: 201, Body: []byte("new")}); got != nil {
				t.Fatalf("expired record returned: %+v", got)
			}
			var row models.IdempotencyKey
			if err := s.DB().Where("environment_id = ? AND idempotency_key = ?", a, "old").Take(&row).Error; err != nil {
				t.Fatal(err)
			}
			if row.Fingerprint != "new-fp" || string(row.Body) != "new" || !row.ExpiresAt.Equal(later.Add(24*time.Hour)) {
				t.Errorf("replaced record = %+v", row)
			}
		})

		t.Run("claimOutsideTransactionRefused", func(t *testing.T) {
			k := key(a, "no-tx", fp, idemNow)
			if _, err := s.ClaimIdempotencyKey(context.Background(), &k, time.Second); err == nil {
				t.Error("claim outside a transaction succeeded")
			}
			if err := s.CompleteIdempotencyKey(context.Background(), &k); err == nil {
				t.Error("complete outside a transaction succeeded")
			}
		})
	})
}

// TestMarkMessageActionJoinsTransaction proves the change and the record commit or roll
// back together. On SQLite a store call that bypassed the transaction would wait for the
// one connection forever, so the deadline also catches that.
func TestMarkMessageActionJoinsTransaction(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		f := newMarkFixture(t, s)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		a := models.MarkAction{SubscriberID: "sub-alice", MessageID: f.ofAlice.ID, Type: models.ButtonSecondary, Status: models.ActionDone, Payload: models.JSON(`{"n":1}`)}

		err := s.Transaction(ctx, func(ctx context.Context) error {
			k := key(f.a.Env.ID, "mark", "fp", idemNow)
			if _, err := s.ClaimIdempotencyKey(ctx, &k, time.Second); err != nil {
				return err
			}
			m, err := s.MarkMessageAction(ctx, f.a.Env.ID, a)
			if err != nil {
				return err
			}
			if m.Subscriber == nil || m.Template == nil {
				t.Errorf("marked message lacks subscriber or template: %+v", m)
			}
			return errRollback
		})
		if !errors.Is(err, errRollback) {
			t.Fatalf("err = %v, want errRollback", err)
		}
		if diff := cmp.Diff(f.ofAlice.CTA, dbtest.LoadMessage(t, s, f.ofAlice.ID).CTA); diff != "" {
			t.Errorf("rolled-back mark changed cta (-before +after):\n%s", diff)
		}
		if got := storedKeys(t, s); len(got) != 0 {
			t.Errorf("rolled-back claim left %v", got)
		}

		err = s.Transaction(ctx, func(ctx context.Context) error {
			k := key(f.a.Env.ID, "mark", "fp", idemNow)
			if _, err := s.ClaimIdempotencyKey(ctx, &k, time.Second); err != nil {
				return err
			}
			if _, err := s.MarkMessageAction(ctx, f.a.Env.ID, a); err != nil {
				return err
			}
			k.Status = 201
			return s.CompleteIdempotencyKey(ctx, &k)
		})
		if err != nil {
			t.Fatal(err)
		}
		if got := dbtest.LoadMessage(t, s, f.ofAlice.ID).CTA.Action.Status; got != models.ActionDone {
			t.Errorf("committed mark: status = %q, want done", got)
		}
		if diff := cmp.Diff([]string{f.a.Env.ID + "/mark"}, storedKeys(t, s)); diff != "" {
			t.Errorf("records (-want +got):\n%s", diff)
		}
	})
}

func TestPurgeIdempotencyKeys(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		env := dbtest.NewTenant(t, s, "a").Env.ID
		for _, r := range []struct {
			key     string
			expires time.Time
		}{
			{"expired-long-ago", idemNow.Add(-48 * time.Hour)},
			{"expired-just-now", idemNow},
			{"live-1ms", idemNow.Add(time.Millisecond)},
			{"live-day", idemNow.Add(24 * time.Hour)},
		} {
			row := models.IdempotencyKey{EnvironmentID: env, Key: r.key, Fingerprint: "fp", Status: 201, CreatedAt: r.expires.Add(-24 * time.Hour), ExpiresAt: r.expires}
			if err := s.DB().Create(&row).Error; err != nil {
				t.Fatal(err)
			}
		}
		n, err := s.PurgeIdempotencyKeys(context.Background(), idemNow)
		if err != nil {
			t.Fatal(err)
		}
		if n != 2 {
			t.Errorf("purged %d, want 2", n)
		}
		if diff := cmp.Diff([]string{env + "/live-1ms", env + "/live-day"}, storedKeys(t, s)); diff != "" {
			t.Errorf("left (-want +got):\n%s", diff)
		}
		if n, err := s.PurgeIdempotencyKeys(context.Background(), idemNow); err != nil || n != 0 {
			t.Errorf("second purge = %d, %v; want 0, nil", n, err)
		}
	})
}

// TestIdempotencyKeyClaimAcrossInstances is two service instances claiming one key: the
// second's insert waits for the first's transaction, then sees its record, or gives up
// after the lock wait with a conflict. Only MySQL runs two transactions at once.
func TestIdempotencyKeyClaimAcrossInstances(t *testing.T) {
	t.Parallel()
	s := dbtest.Open(t, store.DialectMySQL)
	env := dbtest.NewTenant(t, s, "a").Env.ID
	ctx := context.Background()

	// hold claims k in a transaction and keeps it open until release is closed.
	hold := func(k string, claimed, release chan struct{}) chan error {
		done := make(chan error, 1)
		go func() {
			done <- s.Transaction(ctx, func(ctx context.Context) error {
				rec := key(env, k, "first", idemNow)
				if _, err := s.ClaimIdempotencyKey(ctx, &rec, time.Second); err != nil {
					return err
				}
				close(claimed)
				<-release
				rec.Status, rec.Body = 201, []byte("first")
				return s.CompleteIdempotencyKey(ctx, &rec)
			})
		}()
		return done
	}

	t.Run("claimWaitsThenReplays", func(t *testing.T) {
		claimed, release := make(chan struct{}), make(chan struct{})
		done := hold("wait", claimed, release)
		<-claimed
		// The first commits only after released is set, so a claim that returns with
		// released unset did not wait for it.
		var released atomic.Bool
		time.AfterFunc(300*time.Millisecond, func() { released.Store(true); close(release) })
		got := claim(t, s, key(env, "wait", "second", idemNow), nil)
		returnedAfterRelease := released.Load()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if got == nil || got.Fingerprint != "first" || string(got.Body) != "first" {
			t.Fatalf("second claim = %+v, want the first's record", got)
		}
		if !returnedAfterRelease {
			t.Errorf("second claim returned before the first committed")
		}
	})

	t.Run("claim409AfterLockWait", func(t *testing.T) {
		claimed, release := make(chan struct{}), make(chan struct{})
		done := hold("busy", claimed, release)
		<-claimed
		defer func() {
			close(release)
			if err := <-done; err != nil {
				t.Error(err)
			}
		}()
		var lockWait int
		err := s.DB().WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			if err := tx.Raw("SELECT @@SESSION.innodb_lock_wait_timeout").Scan(&lockWait).Error; err != nil {
				return err
			}
			rec := key(env, "busy", "second", idemNow)
			_, err := s.ClaimIdempotencyKey(store.WithTx(ctx, tx), &rec, time.Second)
			if models.ErrorCode(err) != models.ECONFLICT {
				t.Errorf("claim of a held key: err = %v, want a conflict", err)
			}
			var after int
			if err := tx.Raw("SELECT @@SESSION.innodb_lock_wait_timeout").Scan(&after).Error; err != nil {
				return err
			}
			if after != lockWait {
				t.Errorf("lock wait after the claim = %d, want the connection's %d restored", after, lockWait)
			}
			return errRollback
		})
		if !errors.Is(err, errRollback) {
			t.Fatal(err)
		}
	})
}
