package keyseal_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"messages/models/keyseal"
)

var (
	oldSecret = bytes.Repeat([]byte("o"), 32)
	newSecret = bytes.Repeat([]byte("n"), 40)
)

func TestSealOpenRotate(t *testing.T) {
	old, err := keyseal.New(oldSecret)
	if err != nil {
		t.Fatal(err)
	}
	sealed := old.Seal("key1", "the-api-key")
	if bytes.Contains(sealed, []byte("the-api-key")) {
		t.Fatal("the sealed value holds the key in clear")
	}
	if got, err := old.Open("key1", sealed); err != nil || got != "the-api-key" {
		t.Fatalf("open: %q, %v", got, err)
	}
	if _, err := old.Open("key2", sealed); !errors.Is(err, keyseal.ErrCannotOpen) {
		t.Fatalf("a value sealed for key1 opened as key2's: %v", err)
	}
	damaged := bytes.Clone(sealed)
	damaged[len(damaged)-1] ^= 1
	if _, err := old.Open("key1", damaged); !errors.Is(err, keyseal.ErrCannotOpen) {
		t.Fatalf("a damaged value opened: %v", err)
	}

	rotating, err := keyseal.New(newSecret, oldSecret)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := rotating.Open("key1", sealed); err != nil || got != "the-api-key" {
		t.Fatalf("the old secret, second, no longer opens: %q, %v", got, err)
	}
	if rotating.Current(sealed) {
		t.Fatal("a value sealed under the old secret is reported current")
	}
	resealed := rotating.Seal("key1", "the-api-key")
	if !rotating.Current(resealed) {
		t.Fatal("a value sealed under the first secret is not current")
	}
	onlyNew, _ := keyseal.New(newSecret)
	if _, err := onlyNew.Open("key1", sealed); !errors.Is(err, keyseal.ErrCannotOpen) {
		t.Fatalf("the removed secret's value opened: %v", err)
	}
	if got, err := onlyNew.Open("key1", resealed); err != nil || got != "the-api-key" {
		t.Fatalf("resealed value: %q, %v", got, err)
	}
}

func TestSecretTooShort(t *testing.T) {
	if _, err := keyseal.New([]byte("short")); err == nil || !strings.Contains(err.Error(), "at least 32") {
		t.Fatalf("a 5-byte secret: %v", err)
	}
	var none *keyseal.Sealer
	if none.Enabled() || none.Seal("k", "v") != nil {
		t.Fatal("a nil Sealer seals")
	}
}

// A previous secret alone opens what it sealed and seals nothing: new keys are never
// sealed under a secret being retired.
func TestPreviousSecretOnlyOpens(t *testing.T) {
	old, _ := keyseal.New(oldSecret)
	sealed := old.Seal("key1", "the-api-key")
	previousOnly, err := keyseal.New(nil, oldSecret)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := previousOnly.Open("key1", sealed); err != nil || got != "the-api-key" {
		t.Fatalf("the previous secret alone does not open: %q, %v", got, err)
	}
	if previousOnly.Enabled() || !previousOnly.Opens() || previousOnly.Seal("key2", "another") != nil || previousOnly.Current(sealed) {
		t.Fatal("a Sealer with only a previous secret seals, or calls its values current")
	}
	if _, err := keyseal.New(nil, []byte("short")); err == nil || !strings.Contains(err.Error(), "previous") {
		t.Fatalf("a short previous secret: %v", err)
	}
}
