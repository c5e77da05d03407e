package graph

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"messages/graph/errcode"
	"messages/models"
)

// IdempotencyClaim is how the HTTP edge lets a mutation use the request's
// Idempotency-Key (the edge's Claim): Claim takes the key for the operation identified by
// parts and reports whether it may run; Ran reports whether it ran. The same unnamed
// interface type as the edge's, so neither package imports the other.
type IdempotencyClaim = interface {
	Claim(ctx context.Context, parts []string) (run bool)
	Ran(ran bool)
}

// IdempotencyPolicy is the /graphql mount's idempotency policy for the HTTP edge: which
// requests take a key is known only once gqlgen has parsed the document, so the edge
// hands each keyed request's claim to the handler, where the idempotency extension uses
// it for mutations.
type IdempotencyPolicy struct{}

type claimKey struct{}

// Defer returns r carrying c for the idempotency extension.
func (IdempotencyPolicy) Defer(r *http.Request, c IdempotencyClaim) *http.Request {
	return r.WithContext(withClaim(r.Context(), c))
}

// idempotency is the gqlgen extension that applies a request's idempotency key to a
// mutation, where gqlgen has parsed the document: it claims the key before the mutation
// runs, with the operation as gqlgen read it for fingerprint, and tells the edge from the
// result whether the mutation ran. Queries, and requests without a claim, pass untouched.
type idempotency struct{}

var (
	_ graphql.HandlerExtension    = idempotency{}
	_ graphql.ResponseInterceptor = idempotency{}
)

func (idempotency) ExtensionName() string { return "Idempotency" }

func (idempotency) Validate(graphql.ExecutableSchema) error { return nil }

// InterceptResponse runs around the execution of an operation (and around gqlgen's
// error responses, which have no operation).
func (idempotency) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	c, _ := ctx.Value(claimKey{}).(IdempotencyClaim)
	if c == nil || !graphql.HasOperationContext(ctx) {
		return next(ctx)
	}
	oc := graphql.GetOperationContext(ctx)
	if oc.Operation == nil || oc.Operation.Operation != ast.Mutation {
		return next(ctx)
	}
	if !c.Claim(ctx, operationFingerprint(oc)) {
		// Never sent: the edge answers with the stored response or a refusal instead.
		return &graphql.Response{Errors: gqlerror.List{{Message: "idempotency key not claimed"}}}
	}
	res := next(ctx)
	c.Ran(ran(res))
	return res
}

// operationFingerprint identifies an operation by its query (as the SHA-256 hash that
// persisted queries use, so the full and hash-only forms match), operation name and
// variables as canonical JSON, so variables in another key order are the same request.
func operationFingerprint(oc *graphql.OperationContext) []string {
	sum := sha256.Sum256([]byte(oc.RawQuery))
	vars := []byte("{}")
	if len(oc.Variables) > 0 {
		if b, err := json.Marshal(oc.Variables); err == nil {
			vars = CanonicalJSON(b)
		}
	}
	return []string{"graphql", hex.EncodeToString(sum[:]), oc.OperationName, string(vars)}
}

// ran reports whether a result means the mutation ran, so its response is kept: GraphQL
// answers 200 even for failed fields, so it ran when a field has data, when no field
// failed, or when every error is NOT_FOUND (asking again will say so).
func ran(res *graphql.Response) bool {
	if res == nil {
		return false
	}
	var data map[string]json.RawMessage
	if err := json.Unmarshal(res.Data, &data); err == nil {
		for _, v := range data {
			if !bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
				return true
			}
		}
	}
	for _, e := range res.Errors {
		if e.Extensions["code"] != errcode.For(models.ENOTFOUND) {
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
