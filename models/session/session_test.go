package session_test

import (
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"messages/models"
	"messages/models/session"
)

var (
	current  = []byte("current-secret-0123456789abcdef-0123")
	previous = []byte("previous-secret-0123456789abcdef-012")
	issuedAt = time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC)
	caller   = models.Caller{EnvironmentID: "650000000000000000000001", KeyID: "650000000000000000000009"}
)

func signer(t *testing.T, now time.Time, secrets ...[]byte) *session.Signer {
	t.Helper()
	s, err := session.NewSigner(func() time.Time { return now }, secrets...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// forge signs claims with method and key, as an attacker holding neither secret might.
func forge(t *testing.T, method jwt.SigningMethod, key any, claims jwt.Claims) string {
	t.Helper()
	tok, err := jwt.NewWithClaims(method, claims).SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func TestVerify(t *testing.T) {
	valid, _, err := signer(t, issuedAt, current).Issue(caller, "alice", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	oldSecret, _, _ := signer(t, issuedAt, previous).Issue(caller, "alice", time.Hour)
	claims := session.Claims{RegisteredClaims: jwt.RegisteredClaims{Issuer: "messages", Audience: jwt.ClaimStrings{"inbox"},
		Subject: "alice", IssuedAt: jwt.NewNumericDate(issuedAt), ExpiresAt: jwt.NewNumericDate(issuedAt.Add(time.Hour))},
		EnvironmentID: caller.EnvironmentID, KeyID: caller.KeyID}
	noSubject := claims
	noSubject.Subject = ""
	otherAudience := claims
	otherAudience.Audience = jwt.ClaimStrings{"admin"}
	noExpiry := claims
	noExpiry.ExpiresAt = nil
	verifier := signer(t, issuedAt.Add(time.Minute), current, previous)
	for _, tt := range []struct {
		name, token, refusal string
	}{
		{"verify200Current", valid, ""},
		{"verify200PreviousSecret", oldSecret, ""},
		{"verify401Expired", valid, "expired"},
		{"verify401AlgNone", forge(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, claims), "forged"},
		{"verify401OtherHMAC", forge(t, jwt.SigningMethodHS512, current, claims), "forged"},
		{"verify401UnknownSecret", forge(t, jwt.SigningMethodHS256, []byte("someone-else-0123456789abcdef-01234"), claims), "forged"},
		{"verify401NoSubject", forge(t, jwt.SigningMethodHS256, current, noSubject), "malformed"},
		{"verify401OtherAudience", forge(t, jwt.SigningMethodHS256, current, otherAudience), "not issued for this API"},
		{"verify401NoExpiry", forge(t, jwt.SigningMethodHS256, current, noExpiry), "malformed"},
		{"verify401Garbage", "a.b.c", "malformed"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v := verifier
			if tt.name == "verify401Expired" {
				v = signer(t, issuedAt.Add(2*time.Hour), current, previous)
			}
			got, err := v.Verify(tt.token)
			if tt.refusal == "" {
				if err != nil || got.Subject != "alice" || got.EnvironmentID != caller.EnvironmentID || got.KeyID != caller.KeyID {
					t.Fatalf("Verify = %+v, %v; want alice's claims", got, err)
				}
				return
			}
			if models.ErrorCode(err) != models.EUNAUTHORIZED || !strings.Contains(err.Error(), tt.refusal) {
				t.Errorf("Verify error = %v, want unauthorized saying %q", err, tt.refusal)
			}
		})
	}
}

func TestNewSignerRefusesShortSecrets(t *testing.T) {
	for _, secrets := range [][][]byte{{}, {[]byte("")}, {[]byte("short")}, {current, []byte("short")}} {
		if _, err := session.NewSigner(time.Now, secrets...); err == nil {
			t.Errorf("NewSigner(%q) accepted a missing or short secret", secrets)
		}
	}
	if _, err := session.NewSigner(time.Now, current, nil); err != nil {
		t.Errorf("no previous secret: %v", err)
	}
}
