package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"messages/models"
	"messages/models/dbtest"
	"messages/models/store"
)

// steppingClock returns a clock that advances one second per call, so records created in
// a row have distinct, ordered timestamps.
func steppingClock() func() time.Time {
	now := dbtest.Base
	return func() time.Time {
		now = now.Add(time.Second)
		return now
	}
}

func createKey(t testing.TB, s *store.Store, environmentID, name string) (string, *models.APIKey) {
	t.Helper()
	key, rec, err := s.CreateAPIKey(context.Background(), environmentID, name)
	if err != nil {
		t.Fatalf("CreateAPIKey(%s, %s): %v", environmentID, name, err)
	}
	return key, rec
}

func TestAPIKeyAuthenticate(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		tn := dbtest.NewTenant(t, s, "a")
		key, rec := createKey(t, s, tn.Env.ID, "ci")
		otherKey, otherRec := createKey(t, s, tn.Env.ID, "other")
		revokedKey, revokedRec := createKey(t, s, tn.Env.ID, "revoked")
		if err := s.RevokeAPIKey(ctx, revokedRec.ID); err != nil {
			t.Fatal(err)
		}
		other := dbtest.NewTenant(t, s, "b")

		tests := []struct {
			name string
			key  string
			want models.Caller
			code string
		}{
			{"auth200NewKey", key, models.Caller{KeyID: rec.ID, EnvironmentID: tn.Env.ID, OrganizationID: tn.Env.OrganizationID}, ""},
			{"auth200SecondKeyOfSameEnvironment", otherKey, models.Caller{KeyID: otherRec.ID, EnvironmentID: tn.Env.ID, OrganizationID: tn.Env.OrganizationID}, ""},
			{"auth200OtherTenantsKey", other.Key, other.Caller, ""},
			{"auth401RevokedKey", revokedKey, models.Caller{}, models.EUNAUTHORIZED},
			{"auth401UnknownKey", strings.Repeat("0", 64), models.Caller{}, models.EUNAUTHORIZED},
			{"auth401EmptyKey", "", models.Caller{}, models.EUNAUTHORIZED},
			{"auth401KeyWithOneCharacterChanged", changeLast(key), models.Caller{}, models.EUNAUTHORIZED},
			{"auth401UppercaseKey", strings.ToUpper(key), models.Caller{}, models.EUNAUTHORIZED},
			{"auth401StoredHashIsNotAKey", store.HashAPIKey(key), models.Caller{}, models.EUNAUTHORIZED},
			{"auth401KeyIdIsNotAKey", rec.ID, models.Caller{}, models.EUNAUTHORIZED},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				got, err := s.Authenticate(ctx, tt.key)
				if tt.code == "" && err != nil {
					t.Fatalf("Authenticate: %v", err)
				}
				if tt.code != "" && models.ErrorCode(err) != tt.code {
					t.Fatalf("Authenticate error = %v (code %q), want code %q", err, models.ErrorCode(err), tt.code)
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("caller (-want +got):\n%s", diff)
				}
			})
		}
	})
}

// changeLast returns key with its last character replaced by another hex digit.
func changeLast(key string) string {
	if strings.HasSuffix(key, "0") {
		return key[:len(key)-1] + "1"
	}
	return key[:len(key)-1] + "0"
}

func TestAPIKeyShape(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		tn := dbtest.NewTenant(t, s, "a")
		key1, rec := createKey(t, s, tn.Env.ID, "one")
		key2, _ := createKey(t, s, tn.Env.ID, "two")
		if key1 == key2 {
			t.Errorf("two keys are equal: %s", key1)
		}
		for _, key := range []string{key1, key2} {
			// At least 128 random bits: 64 hex digits carry 256.
			if len(key) < 32 || strings.Trim(key, "0123456789abcdef") != "" {
				t.Errorf("key %q is not a long hex string", key)
			}
		}
		if !models.IsID(rec.ID) {
			t.Errorf("key id %q is not an id", rec.ID)
		}
		if rec.Hint != key1[len(key1)-4:] {
			t.Errorf("hint = %q, want the key's last four characters %q", rec.Hint, key1[len(key1)-4:])
		}
	})
}

// TestAPIKeyNotStored scans every column of every api_keys row: no key may appear in
// clear, only its hash.
func TestAPIKeyNotStored(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		tn := dbtest.NewTenant(t, s, "a")
		key, rec := createKey(t, s, tn.Env.ID, "ci")
		keys := map[string]string{tn.Key: tn.Caller.KeyID, key: rec.ID}

		var rows []map[string]any
		if err := s.DB().Table("api_keys").Find(&rows).Error; err != nil {
			t.Fatal(err)
		}
		if len(rows) != len(keys) {
			t.Fatalf("api_keys has %d rows, want %d", len(rows), len(keys))
		}
		hashes := map[string]bool{}
		for _, row := range rows {
			for column, value := range row {
				text := columnText(value)
				for key := range keys {
					if strings.Contains(strings.ToLower(text), key) {
						t.Errorf("api_keys.%s holds the key in clear: %q", column, text)
					}
				}
				if column == "hash" {
					hashes[text] = true
				}
			}
		}
		for key := range keys {
			if !hashes[store.HashAPIKey(key)] {
				t.Errorf("no row holds the hash of key %s...", key[:4])
			}
		}
	})
}

func columnText(v any) string {
	switch v := v.(type) {
	case []byte:
		return string(v)
	case nil:
		return ""
	default:
		return fmt.Sprint(v)
	}
}

func TestAPIKeyList(t *testing.T) {
	type listed struct {
		ID, EnvironmentID, Name, Hint string
		Revoked                       bool
	}
	summary := func(keys []models.APIKey) []listed {
		out := []listed{}
		for _, k := range keys {
			out = append(out, listed{ID: k.ID, EnvironmentID: k.EnvironmentID, Name: k.Name, Hint: k.Hint, Revoked: k.RevokedAt != nil})
		}
		return out
	}
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		a := dbtest.NewTenant(t, s, "a")
		b := dbtest.NewTenant(t, s, "b")
		key2, second := createKey(t, s, a.Env.ID, "second")
		if err := s.RevokeAPIKey(ctx, second.ID); err != nil {
			t.Fatal(err)
		}
		keyA, keyB := a.Key, b.Key
		aFirst := listed{ID: a.Caller.KeyID, EnvironmentID: a.Env.ID, Name: "a", Hint: keyA[len(keyA)-4:]}
		bFirst := listed{ID: b.Caller.KeyID, EnvironmentID: b.Env.ID, Name: "b", Hint: keyB[len(keyB)-4:]}
		aSecond := listed{ID: second.ID, EnvironmentID: a.Env.ID, Name: "second", Hint: key2[len(key2)-4:], Revoked: true}

		tests := []struct {
			name string
			env  string
			want []listed
		}{
			{"keys200OneEnvironmentOldestFirst", a.Env.ID, []listed{aFirst, aSecond}},
			{"keys200OtherEnvironment", b.Env.ID, []listed{bFirst}},
			{"keys200AllEnvironments", "", []listed{aFirst, bFirst, aSecond}},
			{"keys200UnknownEnvironmentIsEmpty", models.NewID(time.Now()), []listed{}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				keys, err := s.ListAPIKeys(ctx, tt.env)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tt.want, summary(keys)); diff != "" {
					t.Errorf("keys (-want +got):\n%s", diff)
				}
			})
		}
	}, store.WithClock(steppingClock()))
}

func TestAPIKeyRevoke(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		tn := dbtest.NewTenant(t, s, "a")
		key, rec := createKey(t, s, tn.Env.ID, "ci")

		if err := s.RevokeAPIKey(ctx, rec.ID); err != nil {
			t.Fatalf("revoke: %v", err)
		}
		if _, err := s.Authenticate(ctx, key); models.ErrorCode(err) != models.EUNAUTHORIZED {
			t.Errorf("revoked key authenticates: error %v, want code %q", err, models.EUNAUTHORIZED)
		}
		// Revoking again is a no-op, and other keys of the environment keep working.
		if err := s.RevokeAPIKey(ctx, rec.ID); err != nil {
			t.Errorf("revoke again: %v, want no error", err)
		}
		if _, err := s.Authenticate(ctx, tn.Key); err != nil {
			t.Errorf("the environment's other key: %v", err)
		}

		for _, tt := range []struct{ name, id string }{
			{"revoke404UnknownId", models.NewID(time.Now())},
			{"revoke404EmptyId", ""},
		} {
			t.Run(tt.name, func(t *testing.T) {
				if err := s.RevokeAPIKey(ctx, tt.id); models.ErrorCode(err) != models.ENOTFOUND {
					t.Errorf("RevokeAPIKey(%q) = %v, want code %q", tt.id, err, models.ENOTFOUND)
				}
			})
		}
	})
}

func TestAPIKeyCreateUnknownEnvironment(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		for _, tt := range []struct{ name, env string }{
			{"create404UnknownEnvironment", models.NewID(time.Now())},
			{"create404EmptyEnvironment", ""},
		} {
			t.Run(tt.name, func(t *testing.T) {
				key, rec, err := s.CreateAPIKey(ctx, tt.env, "x")
				if models.ErrorCode(err) != models.ENOTFOUND {
					t.Errorf("CreateAPIKey(%q) error = %v, want code %q", tt.env, err, models.ENOTFOUND)
				}
				if key != "" || rec != nil {
					t.Errorf("CreateAPIKey(%q) returned key %q, record %+v; want none", tt.env, key, rec)
				}
			})
		}
		var n int64
		if err := s.DB().Table("api_keys").Count(&n).Error; err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("api_keys has %d rows after refused creations, want 0", n)
		}
	})
}
