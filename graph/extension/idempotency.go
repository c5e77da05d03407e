package extension

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

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

type claimKey struct{}

// WithClaim returns ctx carrying c for the Idempotency extension: the HTTP edge's claim
// on a request's Idempotency-Key, or the Gate's on a streamed mutation's key.
func WithClaim(ctx context.Context, c IdempotencyClaim) context.Context {
	if c == nil {
		return ctx
	}
	return context.WithValue(ctx, claimKey{}, c)
}

// Idempotency is the gqlgen extension that applies a request's idempotency key to a
// mutation, where gqlgen has parsed the document: it claims the key (WithClaim) before
// the mutation runs, with the operation as gqlgen read it for fingerprint, and tells the
// claim from the result whether the mutation ran. Queries, and requests without a claim,
// pass untouched. Used last, it wraps the execution itself.
type Idempotency struct{}

var (
	_ graphql.HandlerExtension    = Idempotency{}
	_ graphql.ResponseInterceptor = Idempotency{}
)

// ExtensionName names the extension in gqlgen's stats.
func (Idempotency) ExtensionName() string { return "Idempotency" }

// Validate accepts every schema.
func (Idempotency) Validate(graphql.ExecutableSchema) error { return nil }

// InterceptResponse runs around the execution of an operation (and around gqlgen's
// error responses, which have no operation).
func (Idempotency) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
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
			vars = models.CanonicalJSON(b)
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
