package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"messages/models/keyseal"
	"messages/models/store"
)

// apiKeySecretFile keeps the development server's API key secret beside its embedded
// database, so that keys sealed by one run open in the next.
const apiKeySecretFile = "api-key-secret"

// forgetUnopenableHint is the way out of a lost secret, which every refusal names.
const forgetUnopenableHint = `if that secret is lost, "server apikey reseal --forget-unopenable" keeps those keys as hashes only ` +
	`(they still authenticate; subscriber hashes keyed with them are refused)`

// keySecrets are the configured API key secrets as a Sealer, and what to say of them.
type keySecrets struct {
	sealer *keyseal.Sealer
	// name names the secrets in messages: the variables, or the development file.
	name string
	// fresh is a development secret made because ./data held none that could be used:
	// it is written only once the database is known to hold no key sealed under
	// another secret (keep), so a secret keys are sealed under is never replaced.
	fresh *freshSecret
}

// freshSecret is a new development secret not written yet, and what was wrong with the
// file it is for.
type freshSecret struct {
	path, problem string
	secret        []byte
}

// keySealer returns the sealer of c's API key secrets. Without API_KEY_SECRET, the
// development server on its embedded database uses the secret kept in ./data (a new one
// when there is none, kept once it is safe to: keySecrets.keep); anything else seals
// nothing, and new keys are stored as hashes only (or refused when only
// API_KEY_SECRET_PREVIOUS is set).
func keySealer(c config) (keySecrets, error) {
	for _, s := range []struct {
		name   string
		secret []byte
	}{{"API_KEY_SECRET", c.apiKeySecret}, {"API_KEY_SECRET_PREVIOUS", c.apiKeySecretPrevious}} {
		if len(s.secret) > 0 && len(s.secret) < keyseal.MinSecret {
			return keySecrets{}, usageError{fmt.Errorf("%s is %d bytes, want at least %d", s.name, len(s.secret), keyseal.MinSecret)}
		}
	}
	k := keySecrets{name: "API_KEY_SECRET"}
	current := c.apiKeySecret
	if len(current) == 0 && c.defaultDB && c.development() {
		path := filepath.Join(filepath.Dir(strings.TrimPrefix(c.databaseURL, "sqlite:")), apiKeySecretFile)
		var err error
		if current, k.fresh, err = developmentSecret(path); err != nil {
			return keySecrets{}, err
		}
		k.name = "the development secret in " + path
	} else if len(current) == 0 && len(c.apiKeySecretPrevious) > 0 {
		k.name = "API_KEY_SECRET_PREVIOUS"
	}
	var previous [][]byte
	if len(c.apiKeySecretPrevious) > 0 {
		previous = append(previous, c.apiKeySecretPrevious)
		if len(current) > 0 {
			k.name += " and API_KEY_SECRET_PREVIOUS"
		}
	}
	var err error
	if k.sealer, err = keyseal.New(current, previous...); err != nil {
		return keySecrets{}, usageError{err}
	}
	return k, nil
}

// developmentSecret reads the secret kept at path or, when there is none that could be
// used (missing, or shorter than keyseal.MinSecret), makes a new one, returned as fresh
// for keep to write. An unreadable file is an error: it may hold the secret keys are
// sealed under.
func developmentSecret(path string) ([]byte, *freshSecret, error) {
	b, err := os.ReadFile(path)
	problem := "is missing"
	switch {
	case err == nil:
		secret := strings.TrimSpace(string(b))
		if len(secret) >= keyseal.MinSecret {
			return []byte(secret), nil, nil
		}
		problem = fmt.Sprintf("holds %d bytes, want at least %d", len(secret), keyseal.MinSecret)
	case !errors.Is(err, os.ErrNotExist):
		return nil, nil, fmt.Errorf("read the development API key secret: %w (it is never replaced while API keys are sealed under it: make it readable)", err)
	}
	var raw [32]byte
	_, _ = rand.Read(raw[:]) // never fails (crypto/rand panics instead)
	secret := []byte(hex.EncodeToString(raw[:]))
	return secret, &freshSecret{path: path, problem: problem, secret: secret}, nil
}

// keep writes a fresh development secret, unless st holds active API keys sealed under
// another secret (the one the file held): replacing it would orphan them, so that is a
// configuration error telling what to do.
func (k keySecrets) keep(ctx context.Context, st *store.Store) error {
	if k.fresh == nil {
		return nil
	}
	check, err := st.CheckSealedKeys(ctx)
	if err != nil {
		return err
	}
	if check.Sealed > 0 {
		return usageError{fmt.Errorf("%s %s, and %s under the secret it held: restore the file (it is not replaced while keys are sealed under it), "+
			"or set API_KEY_SECRET to that secret; %s; or remove %s to start over with a new demo",
			k.fresh.path, k.fresh.problem, isSealed(check.Sealed), forgetUnopenableHint, filepath.Dir(k.fresh.path))}
	}
	return writeDevelopmentSecret(k.fresh)
}

// writeDevelopmentSecret writes f's secret to its file, readable by its owner only.
func writeDevelopmentSecret(f *freshSecret) error {
	if err := os.MkdirAll(filepath.Dir(f.path), 0o700); err != nil {
		return err
	}
	if err := os.WriteFile(f.path, append(f.secret, '\n'), 0o600); err != nil {
		return fmt.Errorf("keep the development API key secret: %w", err)
	}
	return nil
}

// check keeps a fresh development secret (or refuses to replace one) and opens every
// active sealed key with k's secrets: secrets that open none of them are a configuration
// error naming how many and what to set, since every inbox session keyed with them would
// be refused and every key created with them would be sealed under a secret the servers
// may not have. When some open, the others are the caller's to report (partly).
func (k keySecrets) check(ctx context.Context, st *store.Store) (store.SealedKeys, error) {
	if err := k.keep(ctx, st); err != nil {
		return store.SealedKeys{}, err
	}
	check, err := st.CheckSealedKeys(ctx)
	if err != nil {
		return check, err
	}
	n := len(check.Unopenable)
	switch {
	case n == 0:
		return check, nil
	case !k.sealer.Opens():
		return check, usageError{fmt.Errorf("API_KEY_SECRET is not set, and %s under a secret: set API_KEY_SECRET to that secret "+
			"(during a rotation, the new one, and the old one in API_KEY_SECRET_PREVIOUS); %s", isSealed(n), forgetUnopenableHint)}
	case n == check.Sealed:
		return check, usageError{fmt.Errorf("%s opens none of the %s: set API_KEY_SECRET to the secret they were sealed under "+
			"(during a rotation, the new one, and the old one in API_KEY_SECRET_PREVIOUS); %s", k.name, plural(n, "sealed API key"), forgetUnopenableHint)}
	}
	return check, nil
}

// partly says how many of the sealed keys of check k's secrets open, and what to do
// about the others.
func (k keySecrets) partly(check store.SealedKeys) string {
	return fmt.Sprintf("%s opens %d of the %s: subscriber hashes keyed with the others are answered 503 until the secret they were sealed under "+
		"is set (API_KEY_SECRET, or API_KEY_SECRET_PREVIOUS during a rotation); %s",
		k.name, check.Sealed-len(check.Unopenable), plural(check.Sealed, "sealed API key"), forgetUnopenableHint)
}

// checkKeySecrets is serve's check of the API key secrets against the database, before
// it serves: secrets that open none of the sealed keys stop it (check); secrets that
// open some are an error record naming the others, whose sessions are answered 503.
func checkKeySecrets(ctx context.Context, st *store.Store, k keySecrets, logger *slog.Logger) error {
	check, err := k.check(ctx, st)
	if n := len(check.Unopenable); err == nil && n > 0 {
		logger.Error(k.partly(check), "unopenable", n, "keyIds", strings.Join(check.Unopenable[:min(n, 10)], ","))
	}
	return err
}

// isSealed says n keys are sealed: "1 API key is sealed", "2 API keys are sealed".
func isSealed(n int) string {
	if n == 1 {
		return "1 API key is sealed"
	}
	return fmt.Sprintf("%d API keys are sealed", n)
}
