package extension

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/testserver"
	"github.com/99designs/gqlgen/graphql/handler/transport"
)

// fakeClaim records the claims a handler makes and refuses them, so nothing runs.
type fakeClaim struct{ claims [][]string }

func (c *fakeClaim) Claim(_ context.Context, parts []string) bool {
	c.claims = append(c.claims, parts)
	return false
}

func (c *fakeClaim) Ran(bool) {}

func TestIdempotencyFingerprint(t *testing.T) {
	t.Parallel()
	fp := func(query, operationName string, variables map[string]any) string {
		parts := operationFingerprint(&graphql.OperationContext{RawQuery: query, OperationName: operationName, Variables: variables})
		b, _ := json.Marshal(parts)
		return string(b)
	}
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
	t.Run("graphqlOperationKinds", func(t *testing.T) {
		h := testserver.New()
		h.AddTransport(transport.POST{})
		h.Use(Idempotency{})
		for body, wantQuery := range map[string]bool{
			`{"query":"{ name }"}`:          true,
			`{"query":"query { name }"}`:    true,
			`{"query":"mutation { name }"}`: false,
			`{"query":"query Q { name } mutation M { name }","operationName":"Q"}`: true,
			`{"query":"query Q { name } mutation M { name }","operationName":"M"}`: false,
		} {
			c := &fakeClaim{}
			req := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewBufferString(body))
			req.Header.Set("Content-Type", "application/json")
			h.ServeHTTP(httptest.NewRecorder(), req.WithContext(WithClaim(req.Context(), c)))
			if got := len(c.claims) == 0; got != wantQuery {
				t.Errorf("%s: query = %v, want %v", body, got, wantQuery)
			}
		}
	})
	t.Run("graphqlVariablesCanonical", func(t *testing.T) {
		x := fp("mutation { a }", "", map[string]any{"b": json.Number("1"), "a": "x"})
		y := fp("mutation { a }", "", map[string]any{"a": "x", "b": json.Number("1")})
		same(t, x, y)
		z := fp("mutation { a }", "", map[string]any{"b": json.Number("2"), "a": "x"})
		differ(t, x, z)
		none := fp("mutation { a }", "", nil)
		empty := fp("mutation { a }", "", map[string]any{})
		same(t, none, empty)
	})
	t.Run("graphqlPersistedHashMatchesText", func(t *testing.T) {
		parts := operationFingerprint(&graphql.OperationContext{RawQuery: "mutation { a }"})
		if parts[1] != sha256Hex("mutation { a }") {
			t.Errorf("query id %s, want the persisted-query hash of the text", parts[1])
		}
	})
	t.Run("graphqlOperationNameCounts", func(t *testing.T) {
		x := fp("mutation A { a } mutation B { a }", "A", nil)
		y := fp("mutation A { a } mutation B { a }", "B", nil)
		differ(t, x, y)
	})
}

func TestIdempotencyRan(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		body string
		want bool
	}{
		{"graphqlData", `{"data":{"markMessageAction":{"_id":"x"}}}`, true},
		{"graphqlNotFound", `{"errors":[{"message":"message not found","extensions":{"code":"NOT_FOUND"}}],"data":null}`, true},
		{"graphqlBadInput", `{"errors":[{"message":"bad","extensions":{"code":"BAD_USER_INPUT"}}],"data":null}`, false},
		{"graphqlInternal", `{"errors":[{"message":"internal error","extensions":{"code":"INTERNAL_SERVER_ERROR"}}],"data":null}`, false},
		{"graphqlMixedNotFoundAndBad", `{"errors":[{"extensions":{"code":"NOT_FOUND"}},{"extensions":{"code":"BAD_USER_INPUT"}}],"data":null}`, false},
		{"graphqlPartialData", `{"errors":[{"extensions":{"code":"BAD_USER_INPUT"}}],"data":{"a":{"_id":"x"},"b":null}}`, true},
		{"graphqlNoCode", `{"errors":[{"message":"x"}],"data":null}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var res graphql.Response
			if err := json.Unmarshal([]byte(tt.body), &res); err != nil {
				t.Fatal(err)
			}
			if got := ran(&res); got != tt.want {
				t.Errorf("ran(%s) = %v, want %v", tt.body, got, tt.want)
			}
		})
	}
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
