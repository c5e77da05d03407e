package edge

// These tests sit inside the package to reach the key check, the fingerprint hash and
// the decision to keep a response; the mounts' policies come from rest and graph.

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"messages/graph"
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
	gql := func(body string) (string, bool) {
		parts, applies := graph.IdempotencyPolicy{}.Fingerprint(post("/graphql"), []byte(body))
		return fingerprint(parts...), !applies
	}
	t.Run("graphqlOperationKinds", func(t *testing.T) {
		for body, wantQuery := range map[string]bool{
			`{"query":"{ messages { totalCount } }"}`:                            true,
			`{"query":"query { messages { totalCount } }"}`:                      true,
			`{"query":"subscription S { x }"}`:                                   true,
			`{"query":"mutation { markMessageAction }"}`:                         false,
			`{"query":"query Q { a } mutation M { b }","operationName":"Q"}`:     true,
			`{"query":"query Q { a } mutation M { b }","operationName":"M"}`:     false,
			`{"query":"query Q { a } mutation M { b }"}`:                         false, // ambiguous: protected
			`{"query":"{ unbalanced"}`:                                           false, // unparsable: protected
			`{"extensions":{"persistedQuery":{"version":1,"sha256Hash":"abc"}}}`: false, // hash only: protected
			`not json`: false,
			`{"query":"query Q { a }","operationName":"Missing"}`: false,
		} {
			if _, got := gql(body); got != wantQuery {
				t.Errorf("%s: query = %v, want %v", body, got, wantQuery)
			}
		}
	})
	t.Run("graphqlVariablesCanonical", func(t *testing.T) {
		x, _ := gql(`{"query":"mutation { a }","variables":{"b":1,"a":"x"}}`)
		y, _ := gql(`{"variables":{ "a":"x", "b":1 },"query":"mutation { a }"}`)
		same(t, x, y)
		z, _ := gql(`{"query":"mutation { a }","variables":{"b":2,"a":"x"}}`)
		differ(t, x, z)
		none, _ := gql(`{"query":"mutation { a }"}`)
		empty, _ := gql(`{"query":"mutation { a }","variables":{}}`)
		null, _ := gql(`{"query":"mutation { a }","variables":null}`)
		same(t, none, empty)
		same(t, none, null)
	})
	t.Run("graphqlPersistedHashMatchesText", func(t *testing.T) {
		full, _ := gql(`{"query":"mutation { a }","extensions":{"persistedQuery":{"version":1,"sha256Hash":"ignored-when-text-given"}}}`)
		// sha256("mutation { a }")
		hashOnly, _ := gql(`{"extensions":{"persistedQuery":{"version":1,"sha256Hash":"` + sha256Hex("mutation { a }") + `"}}}`)
		same(t, full, hashOnly)
	})
	t.Run("graphqlOperationNameCounts", func(t *testing.T) {
		x, _ := gql(`{"query":"mutation A { a } mutation B { a }","operationName":"A"}`)
		y, _ := gql(`{"query":"mutation A { a } mutation B { a }","operationName":"B"}`)
		differ(t, x, y)
	})
}

func TestIdempotencyRan(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		status  int
		body    string
		graphql bool
		want    bool
	}{
		{"rest201", 201, `{}`, false, true},
		{"rest404", 404, `{}`, false, true},
		{"rest400", 400, `{}`, false, false},
		{"rest401", 401, `{}`, false, false},
		{"rest409", 409, `{}`, false, false},
		{"rest413", 413, `{}`, false, false},
		{"rest415", 415, `{}`, false, false},
		{"rest422", 422, `{}`, false, false},
		{"rest429", 429, `{}`, false, false},
		{"rest500", 500, `{}`, false, false},
		{"rest503", 503, `{}`, false, false},
		{"graphqlData", 200, `{"data":{"markMessageAction":{"_id":"x"}}}`, true, true},
		{"graphqlNotFound", 200, `{"errors":[{"message":"message not found","extensions":{"code":"NOT_FOUND"}}],"data":null}`, true, true},
		{"graphqlBadInput", 200, `{"errors":[{"message":"bad","extensions":{"code":"BAD_USER_INPUT"}}],"data":null}`, true, false},
		{"graphqlInternal", 200, `{"errors":[{"message":"internal error","extensions":{"code":"INTERNAL_SERVER_ERROR"}}],"data":null}`, true, false},
		{"graphqlMixedNotFoundAndBad", 200, `{"errors":[{"extensions":{"code":"NOT_FOUND"}},{"extensions":{"code":"BAD_USER_INPUT"}}],"data":null}`, true, false},
		{"graphqlPartialData", 200, `{"errors":[{"extensions":{"code":"BAD_USER_INPUT"}}],"data":{"a":{"_id":"x"},"b":null}}`, true, true},
		{"graphqlNoCode", 200, `{"errors":[{"message":"x"}],"data":null}`, true, false},
		{"graphqlUnreadable", 200, `not json`, true, true},
		{"graphql422", 422, `{"errors":[{"message":"x"}]}`, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var policy IdempotencyPolicy = rest.NewIdempotencyPolicy()
			if tt.graphql {
				policy = graph.IdempotencyPolicy{}
			}
			if got := ran(tt.status, []byte(tt.body), policy); got != tt.want {
				t.Errorf("ran(%d, %s) = %v, want %v", tt.status, tt.body, got, tt.want)
			}
		})
	}
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
