package edge

// These tests sit inside the package to reach the key check, the fingerprint hash and
// the decision to keep a response; /v1's policy comes from rest.

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"messages/models"
	"messages/rest"
)

func TestIdempotencyKeyHeader(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		values []string
		ok     bool
	}{
		{"ok1", []string{"a"}, true},
		{"ok255", []string{strings.Repeat("a", 255)}, true},
		{"ok255Runes", []string{strings.Repeat("€", 255)}, true},
		{"okUUID", []string{"8e03978e-40d5-43e8-bc93-6894a57f9324"}, true},
		{"okSpaceInside", []string{"a b"}, true},
		{"bad256", []string{strings.Repeat("a", 256)}, false},
		{"badEmpty", []string{""}, false},
		{"badTwo", []string{"a", "b"}, false},
		{"badNewline", []string{"a\nb"}, false},
		{"badNUL", []string{"a\x00"}, false},
		{"badInvalidUTF8", []string{"\xc3"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k, err := idempotencyKey(tt.values)
			if (err == nil) != tt.ok {
				t.Fatalf("idempotencyKey(%q) = %q, %v; want ok %v", tt.values, k, err, tt.ok)
			}
			if err != nil && models.ErrorCode(err) != models.EMALFORMED {
				t.Errorf("code = %s, want %s", models.ErrorCode(err), models.EMALFORMED)
			}
		})
	}
}

func TestIdempotencyFingerprint(t *testing.T) {
	t.Parallel()
	post := func(path string) *http.Request { return httptest.NewRequest(http.MethodPost, path, nil) }
	restFingerprint := func(r *http.Request, body []byte) string {
		parts, _ := rest.NewIdempotencyPolicy().Fingerprint(r, body)
		return fingerprint(parts...)
	}
	mark := "/v1/subscribers/a/messages/b/actions/primary"
	same := func(t *testing.T, x, y string) {
		t.Helper()
		if x != y {
			t.Error("fingerprints differ, want equal")
		}
	}
	differ := func(t *testing.T, x, y string) {
		t.Helper()
		if x == y {
			t.Error("fingerprints equal, want different")
		}
	}
	t.Run("restWhitespaceAndKeyOrderIgnored", func(t *testing.T) {
		same(t, restFingerprint(post(mark), []byte(`{"status":"done","payload":{"b":1,"a":[1,{"y":2,"x":"\u0041"}]}}`)),
			restFingerprint(post(mark), []byte(" {\"payload\" : {\"a\":[1,{\"x\":\"A\",\"y\":2}],\"b\":1},\n\"status\":\"done\"}\n")))
	})
	t.Run("restNumbersAsWritten", func(t *testing.T) {
		differ(t, restFingerprint(post(mark), []byte(`{"status":"done","payload":{"n":2.50}}`)),
			restFingerprint(post(mark), []byte(`{"status":"done","payload":{"n":2.5}}`)))
	})
	t.Run("restPathSegmentsKept", func(t *testing.T) {
		differ(t, restFingerprint(post("/v1/subscribers/a%2Fmessages%2Fb/messages/c/actions/primary"), nil),
			restFingerprint(post("/v1/subscribers/a/messages/b%2Fmessages%2Fc/actions/primary"), nil))
		same(t, restFingerprint(post("/v1/subscribers/%61/messages/b/actions/primary"), nil), restFingerprint(post(mark), nil))
	})
	t.Run("restInvalidJSONByBytes", func(t *testing.T) {
		differ(t, restFingerprint(post(mark), []byte(`{"status":`)), restFingerprint(post(mark), []byte(`{"status": `)))
	})
}

// The GraphQL results behind a 200 are graph's to read: see graph's TestIdempotencyRan.
func TestIdempotencyRan(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		status int
		want   bool
	}{
		{"rest201", 201, true},
		{"rest404", 404, true},
		{"rest400", 400, false},
		{"rest401", 401, false},
		{"rest409", 409, false},
		{"rest413", 413, false},
		{"rest415", 415, false},
		{"rest422", 422, false},
		{"rest429", 429, false},
		{"rest500", 500, false},
		{"rest503", 503, false},
		{"graphql422", 422, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ran(tt.status); got != tt.want {
				t.Errorf("ran(%d) = %v, want %v", tt.status, got, tt.want)
			}
		})
	}
}
