// Package session issues and verifies subscriber session tokens: the short-lived
// credential a browser holds instead of an API key. A token is a JWT (HS256 only, the
// algorithm pinned on verification) naming one subscriber of one environment and the API
// key that issued it, so revoking the key ends its sessions.
package session

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"messages/models"
)

// Token limits: a session lasts DefaultTTL unless its issuer asks for MinTTL to MaxTTL.
const (
	DefaultTTL = time.Hour
	MinTTL     = time.Minute
	MaxTTL     = 24 * time.Hour
)

const (
	issuer   = "messages"
	audience = "inbox"
	// leeway absorbs clock skew between instances.
	leeway = 5 * time.Second
	// MinSecretBytes is the shortest signing secret accepted: HS256 wants 256 bits.
	MinSecretBytes = 32
)

// Claims are what a token says: the standard registered claims (sub is the subscriber's
// external id) and where it belongs.
type Claims struct {
	jwt.RegisteredClaims
	// EnvironmentID is the environment the subscriber belongs to.
	EnvironmentID string `json:"env"`
	// KeyID is the API key that issued the token.
	KeyID string `json:"kid"`
}

// Signer issues and verifies tokens. The first secret signs; every secret verifies, so a
// secret can be rotated without ending the sessions signed with the previous one.
type Signer struct {
	secrets [][]byte
	now     func() time.Time
}

// NewSigner returns a signer with secrets (the current first) on the clock now.
func NewSigner(now func() time.Time, secrets ...[]byte) (*Signer, error) {
	var keep [][]byte
	for i, s := range secrets {
		if len(s) == 0 && i > 0 {
			continue // no previous secret
		}
		if len(s) < MinSecretBytes {
			return nil, fmt.Errorf("a session secret must be at least %d bytes", MinSecretBytes)
		}
		keep = append(keep, s)
	}
	if len(keep) == 0 {
		return nil, errors.New("a session secret is required")
	}
	return &Signer{secrets: keep, now: now}, nil
}

// RandomSecret returns a fresh secret, for a process that was given none: its tokens then
// die with it and work on no other instance.
func RandomSecret() []byte {
	b := make([]byte, MinSecretBytes)
	_, _ = rand.Read(b)
	return b
}

// Issue signs a token for subscriberID of caller's environment, valid for ttl.
func (s *Signer) Issue(caller models.Caller, subscriberID string, ttl time.Duration) (token string, expiresAt time.Time, err error) {
	now := s.now().UTC().Truncate(time.Second)
	expiresAt = now.Add(ttl)
	id := make([]byte, 16)
	_, _ = rand.Read(id)
	claims := Claims{
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer: issuer, Audience: jwt.ClaimStrings{audience}, Subject: subscriberID,
			IssuedAt: jwt.NewNumericDate(now), ExpiresAt: jwt.NewNumericDate(expiresAt),
			ID: base64.RawURLEncoding.EncodeToString(id),
		},
		EnvironmentID: caller.EnvironmentID,
		KeyID:         caller.KeyID,
	}
	token, err = jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(s.secrets[0])
	return token, expiresAt, err
}

// Verify checks a token's signature, algorithm, issuer, audience and lifetime and returns
// its claims; a refusal is an unauthorized error that says which check failed.
func (s *Signer) Verify(token string) (*Claims, error) {
	var lastErr error
	for _, secret := range s.secrets {
		claims := &Claims{}
		_, err := jwt.ParseWithClaims(token, claims, func(*jwt.Token) (any, error) { return secret, nil },
			jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}), jwt.WithIssuer(issuer),
			jwt.WithAudience(audience), jwt.WithExpirationRequired(), jwt.WithIssuedAt(),
			jwt.WithLeeway(leeway), jwt.WithTimeFunc(s.now))
		if err == nil {
			if claims.Subject == "" || claims.EnvironmentID == "" || claims.KeyID == "" {
				return nil, models.Errorf(models.EUNAUTHORIZED, "session token is malformed: it names no subscriber, environment or key")
			}
			return claims, nil
		}
		lastErr = err
		if !errors.Is(err, jwt.ErrTokenSignatureInvalid) {
			break // only another secret could fix a bad signature
		}
	}
	return nil, refusal(lastErr)
}

// refusal says in words which check a token failed.
func refusal(err error) error {
	switch {
	case errors.Is(err, jwt.ErrTokenExpired):
		return models.Errorf(models.EUNAUTHORIZED, "session token has expired: ask your backend for a new one")
	case errors.Is(err, jwt.ErrTokenSignatureInvalid), errors.Is(err, jwt.ErrTokenUnverifiable):
		return models.Errorf(models.EUNAUTHORIZED, "session token is forged or was signed with another secret")
	case errors.Is(err, jwt.ErrTokenNotValidYet), errors.Is(err, jwt.ErrTokenUsedBeforeIssued):
		return models.Errorf(models.EUNAUTHORIZED, "session token is not valid yet")
	case errors.Is(err, jwt.ErrTokenInvalidIssuer), errors.Is(err, jwt.ErrTokenInvalidAudience):
		return models.Errorf(models.EUNAUTHORIZED, "session token was not issued for this API")
	default:
		return models.Errorf(models.EUNAUTHORIZED, "session token is malformed")
	}
}
