package extension

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/executor"
	"github.com/google/go-cmp/cmp"
	"github.com/vektah/gqlparser/v2/ast"
)

// TestQueryLimits prepares abusive documents as gqlgen does before running one (parse,
// validate, the extensions' mutators): each is refused with its code, and a document
// just inside each limit is admitted. The handler's own tests (graph) hold the rest:
// complexity, the cap on listed errors, and that nothing refused reaches the database.
func TestQueryLimits(t *testing.T) {
	l := DefaultLimits
	tests := []struct {
		name          string
		query         string
		introspection bool
		want          []string // the codes of the errors, each once; nil: admitted
	}{
		{"admittedDepthAtLimit", introspectionDepth(l.Depth), true, nil},
		{"refusedDepthOverLimit", introspectionDepth(l.Depth + 1), true, []string{"DEPTH_LIMIT_EXCEEDED"}},
		{"admittedDepthThroughFragmentsAtLimit", introspectionDepthFragments(l.Depth), true, nil},
		{"refusedDepthThroughFragmentsOverLimit", introspectionDepthFragments(l.Depth + 1), true, []string{"DEPTH_LIMIT_EXCEEDED"}},
		{"admittedQueryOfMaxSize", padded(l.QueryBytes), true, nil},
		{"refusedQueryTooLarge", padded(l.QueryBytes + 1), true, []string{"QUERY_TOO_LARGE"}},
		// Counted in the text by the lexer before it is parsed, validated or registered.
		// 15 tokens and 2 for each spread.
		{"admittedTokensAtLimit", spreads((l.Tokens - 15) / 2), true, nil},
		{"refusedTooManyTokens", spreads((l.Tokens-15)/2 + 1), true, []string{"TOKEN_LIMIT_EXCEEDED"}},
		// At the limit the count admits the document, and the validator judges it.
		{"admittedSelectionsAtLimit", `{ messages { data { ` + unknownFields(l.Selections-2) + `} } }`, true, []string{"GRAPHQL_VALIDATION_FAILED"}},
		{"refusedTooManySelections", `{ messages { data { ` + unknownFields(l.Selections-1) + `} } }`, true, []string{"QUERY_TOO_COMPLEX"}},
		{"admittedRepeatsAtLimit", `{ messages { data { ` + strings.Repeat("_id ", l.Repeats) + `} } }`, true, nil},
		{"refusedRepeatedField", `{ messages { data { ` + strings.Repeat("_id ", l.Repeats+1) + `} } }`, true, []string{"QUERY_TOO_COMPLEX"}},
		{"refusedRepeatedAlias", `{ messages { data { ` + strings.Repeat("a: _id ", l.Repeats+1) + `} } }`, true, []string{"QUERY_TOO_COMPLEX"}},
		{"refusedTooManyAliasesInText", `{ messages { data { ` + aliases(l.Aliases+1) + `} } }`, true, []string{"ALIAS_LIMIT_EXCEEDED"}},
		{"admittedDirectivesAtLimit", `{ messages { data { ` + strings.Repeat("...F @include(if: true) ", l.Directives) + `} } } fragment F on Message { _id }`, true, nil},
		{"refusedTooManyDirectives", `{ messages { totalCount` + strings.Repeat(" @include(if: true)", l.Directives+1) + ` } }`, true, []string{"DIRECTIVE_LIMIT_EXCEEDED"}},
		{"refusedDeepText", strings.Repeat("{ a ", l.Depth) + "{ b }" + strings.Repeat(" }", l.Depth), true, []string{"DEPTH_LIMIT_EXCEEDED"}},
		// Braces inside arguments are values, not selection sets, and the names in them
		// are not fields: this payload nests past the depth limit and is admitted.
		{"admittedObjectValuesAreNotSelections", `mutation { markMessageAction(subscriberId: "nobody", messageId: "nothing", type: primary, status: done, payload: {` +
			strings.Repeat("a: {", l.Depth) + "b: 1" + strings.Repeat("}", l.Depth) + `}) { _id } }`, true, nil},
		{"admittedSchemaWhenOn", `{ __schema { queryType { name } } }`, true, nil},
		{"admittedTypenameWhenOff", `{ __typename }`, false, nil},
		{"refusedSchemaWhenOff", `{ __schema { queryType { name } } }`, false, []string{"INTROSPECTION_DISABLED"}},
		{"refusedTypeWhenOff", `{ __type(name: "Message") { name } }`, false, []string{"INTROSPECTION_DISABLED"}},
		{"refusedSchemaBesideDataWhenOff", `{ messages { totalCount } __schema { types { name } } }`, false, []string{"INTROSPECTION_DISABLED"}},
		{"refusedSchemaThroughFragmentWhenOff", `{ ...Q } fragment Q on Query { ... on Query { __schema { queryType { name } } } }`, false, []string{"INTROSPECTION_DISABLED"}},
	}
	es := &graphql.ExecutableSchemaMock{SchemaFunc: func() *ast.Schema { return loadSchema(t) }}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			exec := executor.New(es)
			exec.Use(QueryLimits{Limits: l, Introspection: tt.introspection})
			_, errs := exec.CreateOperationContext(graphql.StartOperationTrace(context.Background()), &graphql.RawParams{Query: tt.query})
			var codes []string
			for _, e := range errs {
				if code, _ := e.Extensions["code"].(string); !slices.Contains(codes, code) {
					codes = append(codes, code)
				}
			}
			if diff := cmp.Diff(tt.want, codes); diff != "" {
				t.Errorf("codes (-want +got):\n%s\n%.1000v", diff, errs)
			}
		})
	}
}

// TestQueryLimitsScanTextsNotParsedYet: the text's limits are counted once per text, the
// first time it comes, not again while the handler's document cache holds it parsed
// (it passed them to get there); a text the cache does not hold is counted and refused.
func TestQueryLimitsScanTextsNotParsedYet(t *testing.T) {
	tight := Limits{Tokens: 10}
	over := `{ messages { data { _id subject title } } }` // 11 tokens
	cache := NewDocumentCache(1 << 20)
	limits := QueryLimits{Limits: tight, Parsed: cache}
	ctx := context.Background()
	if err := limits.MutateOperationParameters(ctx, &graphql.RawParams{Query: over}); err == nil || err.Extensions["code"] != "TOKEN_LIMIT_EXCEEDED" {
		t.Fatalf("a text not parsed yet: %v, want TOKEN_LIMIT_EXCEEDED", err)
	}
	// As if parsed under the limits it was kept with: it is not counted again.
	cache.Add(ctx, over, &ast.QueryDocument{})
	if err := limits.MutateOperationParameters(ctx, &graphql.RawParams{Query: over}); err != nil {
		t.Errorf("a text the cache holds: %v, want it admitted without a count", err)
	}
	if err := limits.MutateOperationParameters(ctx, &graphql.RawParams{Query: over + " "}); err == nil {
		t.Errorf("another text: admitted, want TOKEN_LIMIT_EXCEEDED")
	}
	// The size is checked whatever the cache holds.
	small := QueryLimits{Limits: Limits{QueryBytes: 10}, Parsed: cache}
	if err := small.MutateOperationParameters(ctx, &graphql.RawParams{Query: over}); err == nil || err.Extensions["code"] != "QUERY_TOO_LARGE" {
		t.Errorf("a cached text over the size: %v, want QUERY_TOO_LARGE", err)
	}
}

// introspectionDepth returns a valid query nested exactly depth levels deep (depth >= 4),
// through introspection's ofType chain, the only part of the schema that nests freely.
func introspectionDepth(depth int) string {
	n := depth - 4
	return `{ __type(name: "Message") { fields { type { ` + strings.Repeat("ofType { ", n) + `name` + strings.Repeat(" }", n) + ` } } } }`
}

// introspectionDepthFragments nests like introspectionDepth, through a fragment spread
// and an inline fragment.
func introspectionDepthFragments(depth int) string {
	n := depth - 4
	return `{ __type(name: "Message") { ...F } } fragment F on __Type { fields { ... on __Field { type { ` +
		strings.Repeat("ofType { ", n) + `name` + strings.Repeat(" }", n) + ` } } } }`
}

// aliases returns n distinct aliases of _id.
func aliases(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "a%d: _id ", i)
	}
	return b.String()
}

// padded returns a valid query exactly size bytes long.
func padded(size int) string {
	q := `{ messages { totalCount } }`
	return q + strings.Repeat(" ", size-len(q))
}

// spreads returns a valid query spreading a fragment n times.
func spreads(n int) string {
	return `{ messages { data { ` + strings.Repeat("...F ", n) + `} } } fragment F on Message { _id }`
}

// unknownFields returns n distinct field names no type has.
func unknownFields(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "f%d ", i)
	}
	return b.String()
}
