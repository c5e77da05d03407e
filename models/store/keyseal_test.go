package store_test

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"messages/models/dbtest"
	"messages/models/keyseal"
	"messages/models/store"
)

// Sealed keys against the store's secrets: a key made without a secret is stored
// unsealed (NULL on both dialects); CheckSealedKeys and SubscriberHashKeys name the keys
// no secret opens; a previous secret alone opens but neither seals a new key nor
// reseals; forgetting the seals no secret opens leaves keys that still authenticate.
func TestSealedKeysAgainstSecrets(t *testing.T) {
	secretA, secretB := bytes.Repeat([]byte("a"), 32), bytes.Repeat([]byte("b"), 32)
	underA, _ := keyseal.New(secretA)
	underB, _ := keyseal.New(secretB)
	previousA, _ := keyseal.New(nil, secretA)
	for _, d := range dbtest.Dialects {
		t.Run(d, func(t *testing.T) {
			ctx := context.Background()
			url := dbtest.URL(t, d)
			open := func(sealer *keyseal.Sealer) *store.Store {
				s, err := store.Open(ctx, url, store.DefaultPool, store.WithKeySealer(sealer))
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = s.Close() })
				if err := s.Migrate(ctx); err != nil {
					t.Fatal(err)
				}
				return s
			}
			plain, a, b, previous := open(nil), open(underA), open(underB), open(previousA)

			tn := dbtest.NewTenant(t, plain, "sealing")
			var unsealed int64
			if err := plain.DB().Raw("SELECT COUNT(*) FROM api_keys WHERE sealed IS NULL").Scan(&unsealed).Error; err != nil || unsealed != 1 {
				t.Fatalf("keys made without a secret stored as NULL: %d, %v; want 1", unsealed, err)
			}
			keyA, recA := createKey(t, a, tn.Env.ID, "under a")
			keyB, recB := createKey(t, b, tn.Env.ID, "under b")

			check, err := a.CheckSealedKeys(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(store.SealedKeys{Sealed: 2, Unopenable: []string{recB.ID}}, check); diff != "" {
				t.Errorf("CheckSealedKeys under a (-want +got):\n%s", diff)
			}
			keys, unopenable, err := a.SubscriberHashKeys(ctx, tn.Env.ID)
			if err != nil || len(keys) != 1 || keys[0].Key != keyA || !cmp.Equal(unopenable, []string{recB.ID}) {
				t.Errorf("SubscriberHashKeys under a: %v, unopenable %v, %v", keys, unopenable, err)
			}

			if _, _, err := previous.CreateAPIKey(ctx, tn.Env.ID, "after"); !errors.Is(err, keyseal.ErrNoCurrentSecret) {
				t.Errorf("CreateAPIKey with a previous secret only: %v, want ErrNoCurrentSecret", err)
			}
			if _, _, err := previous.ResealAPIKeys(ctx); !errors.Is(err, keyseal.ErrNoCurrentSecret) {
				t.Errorf("ResealAPIKeys with a previous secret only: %v, want ErrNoCurrentSecret", err)
			}
			if keys, _, err := previous.SubscriberHashKeys(ctx, tn.Env.ID); err != nil || len(keys) != 1 || keys[0].ID != recA.ID {
				t.Errorf("the previous secret alone no longer opens its key: %v, %v", keys, err)
			}

			if n, err := a.ForgetUnopenableSeals(ctx); err != nil || n != 1 {
				t.Fatalf("ForgetUnopenableSeals: %d, %v; want 1", n, err)
			}
			if check, err := a.CheckSealedKeys(ctx); err != nil || check.Sealed != 1 || len(check.Unopenable) != 0 {
				t.Errorf("after forgetting: %+v, %v; want the one key a opens", check, err)
			}
			if c, err := a.Authenticate(ctx, keyB); err != nil || c.KeyID != recB.ID {
				t.Errorf("a key whose seal was forgotten no longer authenticates: %+v, %v", c, err)
			}
		})
	}
}
