package graph

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"

	"messages/models"
)

// IdempotencyPolicy tells the HTTP edge's idempotency guard which GraphQL requests take
// an Idempotency-Key (every operation that may be a mutation), what identifies one, and
// whether a 200 means it ran.
type IdempotencyPolicy struct{}

// Fingerprint identifies a GraphQL request by its query (as the SHA-256 hash that
// persisted queries use, so the full and hash-only forms match), operation name and
// canonical variables. applies is false when the selected operation is certainly a query
// or subscription, which ignores the key; a request that cannot be understood here is
// treated as a mutation, so no mutation ever runs unprotected.
func (IdempotencyPolicy) Fingerprint(r *http.Request, body []byte) (parts []string, applies bool) {
	var params struct {
		Query         string          `json:"query"`
		OperationName string          `json:"operationName"`
		Variables     json.RawMessage `json:"variables"`
		Extensions    struct {
			PersistedQuery struct {
				Hash string `json:"sha256Hash"`
			} `json:"persistedQuery"`
		} `json:"extensions"`
	}
	if err := json.Unmarshal(body, &params); err != nil {
		return []string{"graphql", r.Method, r.URL.Path, string(body)}, true
	}
	queryID := strings.ToLower(params.Extensions.PersistedQuery.Hash)
	applies = true
	if params.Query != "" {
		sum := sha256.Sum256([]byte(params.Query))
		queryID = hex.EncodeToString(sum[:])
		applies = !isQuery(params.Query, params.OperationName)
	}
	vars := CanonicalJSON(params.Variables)
	if len(bytes.TrimSpace(params.Variables)) == 0 || string(vars) == "null" {
		vars = []byte("{}")
	}
	return []string{"graphql", r.Method, r.URL.Path, queryID, params.OperationName, string(vars)}, applies
}

// isQuery reports whether the operation a request selects is a query or subscription.
func isQuery(text, operationName string) bool {
	doc, err := parser.ParseQueryWithTokenLimit(&ast.Source{Input: text}, DefaultLimits.Tokens)
	if err != nil {
		return false
	}
	var op *ast.OperationDefinition
	switch {
	case operationName != "":
		op = doc.Operations.ForName(operationName)
	case len(doc.Operations) == 1:
		op = doc.Operations[0]
	}
	return op != nil && op.Operation != ast.Mutation
}

// Ran reports whether a 200 means the operation ran, so its response is kept: GraphQL
// answers 200 even for failed fields, so it ran when a field has data, when no field
// failed, or when every error's extensions.code is NOT_FOUND (asking again will say so).
func (IdempotencyPolicy) Ran(body []byte) bool {
	var res struct {
		Data   map[string]json.RawMessage `json:"data"`
		Errors []struct {
			Extensions map[string]any `json:"extensions"`
		} `json:"errors"`
	}
	if err := json.Unmarshal(body, &res); err != nil {
		// Unreadable, so possibly a success: keep it rather than undo what it reports.
		return true
	}
	for _, v := range res.Data {
		if !bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
			return true
		}
	}
	for _, e := range res.Errors {
		if e.Extensions["code"] != codes[models.ENOTFOUND] {
			return false
		}
	}
	return true
}

// CanonicalJSON re-encodes one JSON value with sorted keys, no insignificant whitespace
// and numbers as written, so that retries differing only in those are the same request;
// anything else is returned as it is.
func CanonicalJSON(raw []byte) []byte {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return raw
	}
	if _, err := dec.Token(); err != io.EOF {
		return raw
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return raw
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}
