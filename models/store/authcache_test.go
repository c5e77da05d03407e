package store_test

import (
	"context"
	"testing"
	"time"

	"messages/models"
	"messages/models/dbtest"
	"messages/models/store"
)

// A checked API key or session costs no statement again until AuthTTL has passed; a
// key revoked through another instance stops working there once its entry is older than
// AuthTTL, and at once through the instance that revoked it.
func TestAuthCache(t *testing.T) {
	for _, dialect := range dbtest.Dialects {
		t.Run(dialect, func(t *testing.T) {
			clock := dbtest.NewClock(time.Now())
			stores := instances(t, dialect, 2, store.WithClock(clock.Now), store.WithAuthTTL(2*time.Second))
			a, b := stores[0], stores[1]
			ctx := context.Background()
			tn := dbtest.NewTenant(t, a, "auth")
			log := dbtest.RecordStatements(t, b)
			authenticates := func(s *store.Store) bool {
				t.Helper()
				c, err := s.Authenticate(ctx, tn.Key)
				if err != nil {
					if models.ErrorCode(err) != models.EUNAUTHORIZED {
						t.Fatal(err)
					}
					return false
				}
				if c.EnvironmentID != tn.Env.ID || c.KeyID != tn.Caller.KeyID {
					t.Fatalf("caller %+v, want the key's environment", c)
				}
				return true
			}
			session := func(s *store.Store) bool {
				t.Helper()
				c, err := s.SessionCaller(ctx, tn.Env.ID, tn.Caller.KeyID, "sub-1")
				if err != nil {
					if models.ErrorCode(err) != models.EUNAUTHORIZED {
						t.Fatal(err)
					}
					return false
				}
				if c.SubscriberID != "sub-1" || c.EnvironmentID != tn.Env.ID {
					t.Fatalf("session caller %+v", c)
				}
				return true
			}

			if !authenticates(b) || !session(b) {
				t.Fatal("a valid key does not authenticate")
			}
			if n := len(log.Take()); n != 2 {
				t.Errorf("first checks ran %d statements, want 2", n)
			}
			clock.Advance(time.Second)
			if !authenticates(b) || !session(b) {
				t.Fatal("a valid key does not authenticate")
			}
			if n := len(log.Take()); n != 0 {
				t.Errorf("checks within AuthTTL ran %d statements, want 0", n)
			}

			if err := a.RevokeAPIKey(ctx, tn.Caller.KeyID); err != nil {
				t.Fatal(err)
			}
			if authenticates(a) || session(a) {
				t.Error("the revoking instance still accepts the key")
			}
			if !authenticates(b) {
				t.Error("another instance refused the key before its check was AuthTTL old; the test no longer shows the bound")
			}
			clock.Advance(time.Second)
			if authenticates(b) || session(b) {
				t.Error("another instance accepts a revoked key AuthTTL after it checked it")
			}
		})
	}
}
