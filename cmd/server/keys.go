package main

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"messages/models/keyseal"
)

// apiKeySecretFile keeps the development server's API key secret beside its embedded
// database, so that keys sealed by one run open in the next.
const apiKeySecretFile = "api-key-secret"

// keySealer returns the sealer of c's API key secrets. Without one, the development
// server on its embedded database uses (and the first time writes) a secret kept in
// ./data; anything else seals nothing, and keys are stored as hashes only.
func keySealer(c config) (*keyseal.Sealer, error) {
	secrets := c.apiKeySecrets
	if len(secrets) == 0 && c.defaultDB && c.development() {
		secret, err := developmentSecret(filepath.Join(filepath.Dir(strings.TrimPrefix(c.databaseURL, "sqlite:")), apiKeySecretFile))
		if err != nil {
			return nil, err
		}
		secrets = [][]byte{secret}
	}
	s, err := keyseal.New(secrets...)
	if err != nil {
		return nil, usageError{fmt.Errorf("API_KEY_SECRET: %w", err)}
	}
	return s, nil
}

// developmentSecret reads the secret kept at path, writing a new random one first if
// there is none.
func developmentSecret(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err == nil && len(strings.TrimSpace(string(b))) >= keyseal.MinSecret {
		return []byte(strings.TrimSpace(string(b))), nil
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	var raw [32]byte
	_, _ = rand.Read(raw[:]) // never fails (crypto/rand panics instead)
	secret := hex.EncodeToString(raw[:])
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	if err := os.WriteFile(path, []byte(secret+"\n"), 0o600); err != nil {
		return nil, fmt.Errorf("keep the development API key secret: %w", err)
	}
	return []byte(secret), nil
}
