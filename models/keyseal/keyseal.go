// Package keyseal keeps API keys readable by the server and by no one else who reads the
// database: each key is stored as a SHA-256 hash, for authentication, and sealed with
// AES-256-GCM under a server secret, for the one use that needs the key itself:
// verifying a subscriberHash (HMAC-SHA256 of a subscriber id keyed with the API key),
// which the platform's inbox clients send to open a session without a key.
//
// A Sealer holds a current secret and the secrets before it: it seals under the current
// one and opens with whichever sealed the value (a sealed value names its secret by a
// fingerprint), so a secret is rotated by making the new one current with the old one
// previous, resealing (`apikey reseal`), then dropping the old one. A previous secret
// never seals: a Sealer without a current one opens what they sealed and seals nothing.
package keyseal

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
)

// MinSecret is the shortest secret accepted, in bytes.
const MinSecret = 32

// fingerprintSize is how many bytes of SHA-256(secret) name the secret a value was
// sealed under.
const fingerprintSize = 4

// version is the first byte of a sealed value.
const version = 1

// Sealer seals and opens API keys. The zero value seals and opens nothing.
type Sealer struct {
	// keys open sealed values; the first seals when sealing is set.
	keys    []sealKey
	sealing bool
}

type sealKey struct {
	fingerprint [fingerprintSize]byte
	aead        cipher.AEAD
}

// New returns a Sealer that seals under current and opens what current or any of
// previous sealed; each secret must be at least MinSecret bytes. An empty current gives
// a Sealer that seals nothing (Enabled is false) and opens what previous sealed.
func New(current []byte, previous ...[]byte) (*Sealer, error) {
	s := &Sealer{sealing: len(current) > 0}
	secrets := previous
	if s.sealing {
		secrets = append([][]byte{current}, previous...)
	}
	for i, secret := range secrets {
		if len(secret) < MinSecret {
			which := "previous key sealing secret"
			if s.sealing && i == 0 {
				which = "key sealing secret"
			}
			return nil, fmt.Errorf("%s is %d bytes, want at least %d", which, len(secret), MinSecret)
		}
		// The secret is hashed into the AES key, so any length of at least 32 bytes of
		// entropy gives a 256-bit key; the fingerprint hashes it with a label apart.
		key := sha256.Sum256(append([]byte("messages keyseal aes-256-gcm\x00"), secret...))
		block, err := aes.NewCipher(key[:])
		if err != nil {
			return nil, err
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, err
		}
		fp := sha256.Sum256(append([]byte("messages keyseal fingerprint\x00"), secret...))
		s.keys = append(s.keys, sealKey{fingerprint: [fingerprintSize]byte(fp[:fingerprintSize]), aead: aead})
	}
	return s, nil
}

// Enabled reports whether s has a secret to seal with.
func (s *Sealer) Enabled() bool { return s != nil && s.sealing }

// Opens reports whether s has any secret to open with: a current or a previous one.
func (s *Sealer) Opens() bool { return s != nil && len(s.keys) > 0 }

// ErrNoCurrentSecret is the answer for a new key when the Sealer has previous secrets
// only: sealing it under one of them would tie it to a secret being retired, and storing
// it unsealed would quietly make a key that cannot open inbox sessions.
var ErrNoCurrentSecret = errors.New("no current key sealing secret, only a previous one: a new API key is sealed under the current secret only")

// Seal returns apiKey sealed under the first secret, bound to keyID (a value sealed for
// one key row does not open as another's); nil when s has no secret.
func (s *Sealer) Seal(keyID, apiKey string) []byte {
	if !s.Enabled() {
		return nil
	}
	k := s.keys[0]
	out := make([]byte, 0, 1+fingerprintSize+k.aead.NonceSize()+len(apiKey)+k.aead.Overhead())
	out = append(out, version)
	out = append(out, k.fingerprint[:]...)
	nonce := make([]byte, k.aead.NonceSize())
	_, _ = rand.Read(nonce) // never fails (crypto/rand panics instead)
	out = append(out, nonce...)
	return k.aead.Seal(out, nonce, []byte(apiKey), []byte(keyID))
}

// ErrCannotOpen is Open's answer for a value no secret of the Sealer opens: sealed
// under a secret since removed, damaged, or sealed for another key row.
var ErrCannotOpen = errors.New("the sealed API key cannot be opened with the configured secrets")

// Open returns the API key sealed in v for keyID.
func (s *Sealer) Open(keyID string, v []byte) (string, error) {
	if s == nil || len(v) < 1+fingerprintSize || v[0] != version {
		return "", ErrCannotOpen
	}
	fp, rest := v[1:1+fingerprintSize], v[1+fingerprintSize:]
	for _, k := range s.keys {
		if string(k.fingerprint[:]) != string(fp) || len(rest) < k.aead.NonceSize() {
			continue
		}
		plain, err := k.aead.Open(nil, rest[:k.aead.NonceSize()], rest[k.aead.NonceSize():], []byte(keyID))
		if err != nil {
			return "", ErrCannotOpen
		}
		return string(plain), nil
	}
	return "", ErrCannotOpen
}

// Current reports whether v is sealed under the first secret, so that resealing can skip it.
func (s *Sealer) Current(v []byte) bool {
	return s.Enabled() && len(v) >= 1+fingerprintSize && v[0] == version &&
		string(v[1:1+fingerprintSize]) == string(s.keys[0].fingerprint[:])
}
