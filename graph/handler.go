package graph

import (
	"context"
	"fmt"
	"net/http"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"messages/models"
)

// Limits refuse abusive queries before they run.
type Limits struct {
	// Complexity caps the cost of an operation: each field costs 1, and a list of
	// messages costs its limit times the cost of one message.
	Complexity int
	// Depth caps how deeply selections nest.
	Depth int
	// QueryBytes caps the length of the query text.
	QueryBytes int
	// Tokens caps the number of lexer tokens, bounding the parser's work.
	Tokens int
}

// DefaultLimits admit a full 1000-message page with every field selected, and refuse
// queries that nest or repeat far beyond anything a client needs.
var DefaultLimits = Limits{Complexity: 200_000, Depth: 12, QueryBytes: 32 << 10, Tokens: 10_000}

// HandlerOptions configure the GraphQL endpoint.
type HandlerOptions struct {
	Introspection bool
	Limits        Limits
}

// NewHandler returns the /graphql endpoint: POST and GET transports, bounded query and
// persisted-query caches, the limits, the error presenter and panic recovery.
func NewHandler(r *Resolver, o HandlerOptions) http.Handler {
	cfg := Config{Resolvers: r}
	cfg.Complexity.Query.Messages = func(child int, _ *models.ChannelType, _ *string, _ []string, _ *int, limit *int) int {
		n := models.DefaultPageSize
		if limit != nil && *limit > 0 {
			n = *limit
		}
		return 1 + n*child
	}
	srv := handler.New(NewExecutableSchema(cfg))
	srv.AddTransport(transport.Options{})
	srv.AddTransport(transport.GET{})
	srv.AddTransport(transport.POST{})
	srv.SetQueryCache(lru.New[*ast.QueryDocument](1000))
	srv.SetParserTokenLimit(o.Limits.Tokens)
	if o.Introspection {
		srv.Use(extension.Introspection{})
	}
	srv.Use(extension.AutomaticPersistedQuery{Cache: lru.New[string](1000)})
	srv.Use(queryLimits{bytes: o.Limits.QueryBytes, depth: o.Limits.Depth, introspection: o.Introspection})
	srv.Use(extension.FixedComplexityLimit(o.Limits.Complexity))
	srv.AroundFields(emptyAsNull)
	srv.SetErrorPresenter(r.presentError)
	srv.SetRecoverFunc(r.recoverPanic)
	return srv
}

// emptyAsNull answers null for an optional text or enum field without a value, where
// /v1 omits the field, instead of "" (which is not even a valid enum value).
func emptyAsNull(ctx context.Context, next graphql.Resolver) (any, error) {
	res, err := next(ctx)
	if err != nil || res == nil {
		return res, err
	}
	var empty bool
	switch v := res.(type) {
	case string:
		empty = v == ""
	case models.ButtonType:
		empty = v == ""
	case models.MessageActionStatus:
		empty = v == ""
	case models.ChannelType:
		empty = v == ""
	}
	if empty {
		if fc := graphql.GetFieldContext(ctx); fc != nil && fc.Field.Definition != nil && !fc.Field.Definition.Type.NonNull {
			return nil, nil
		}
	}
	return res, nil
}

// queryLimits refuses over-long query text, over-deep selections and, when it is off,
// introspection, all before execution.
type queryLimits struct {
	bytes         int
	depth         int
	introspection bool
}

var (
	_ graphql.OperationParameterMutator = queryLimits{}
	_ graphql.OperationContextMutator   = queryLimits{}
)

func (queryLimits) ExtensionName() string { return "QueryLimits" }

func (queryLimits) Validate(graphql.ExecutableSchema) error { return nil }

// MutateOperationParameters refuses query text longer than the limit before parsing.
func (l queryLimits) MutateOperationParameters(_ context.Context, p *graphql.RawParams) *gqlerror.Error {
	if l.bytes > 0 && len(p.Query) > l.bytes {
		return limitError("QUERY_TOO_LARGE", fmt.Sprintf("query is %d bytes, more than the limit of %d", len(p.Query), l.bytes))
	}
	return nil
}

// MutateOperationContext refuses operations nested deeper than the limit, and
// introspection when it is off.
func (l queryLimits) MutateOperationContext(_ context.Context, op *graphql.OperationContext) *gqlerror.Error {
	if op.Operation == nil {
		return nil
	}
	if !l.introspection && introspects(op.Operation.SelectionSet, op.Doc.Fragments, map[string]bool{}) {
		return limitError("INTROSPECTION_DISABLED", "introspection is disabled on this server")
	}
	if l.depth <= 0 {
		return nil
	}
	if d := depth(op.Operation.SelectionSet, op.Doc.Fragments, 0, l.depth); d > l.depth {
		return limitError("DEPTH_LIMIT_EXCEEDED", fmt.Sprintf("query is nested deeper than the limit of %d", l.depth))
	}
	return nil
}

// depth returns the nesting depth of a selection set, following fragments, and stops
// counting once past max so cyclic or huge documents cost little.
func depth(set ast.SelectionSet, fragments ast.FragmentDefinitionList, level, max int) int {
	if level > max {
		return level
	}
	deepest := level
	for _, sel := range set {
		var d int
		switch s := sel.(type) {
		case *ast.Field:
			if len(s.SelectionSet) == 0 {
				d = level + 1
			} else {
				d = depth(s.SelectionSet, fragments, level+1, max)
			}
		case *ast.InlineFragment:
			d = depth(s.SelectionSet, fragments, level, max)
		case *ast.FragmentSpread:
			if f := fragments.ForName(s.Name); f != nil {
				d = depth(f.SelectionSet, fragments, level, max)
			}
		}
		if d > deepest {
			deepest = d
		}
	}
	return deepest
}

// introspects reports whether the operation asks for __schema or __type at its root,
// directly or through fragments (each fragment followed once).
func introspects(set ast.SelectionSet, fragments ast.FragmentDefinitionList, seen map[string]bool) bool {
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			if s.Name == "__schema" || s.Name == "__type" {
				return true
			}
		case *ast.InlineFragment:
			if introspects(s.SelectionSet, fragments, seen) {
				return true
			}
		case *ast.FragmentSpread:
			if seen[s.Name] {
				continue
			}
			seen[s.Name] = true
			if f := fragments.ForName(s.Name); f != nil && introspects(f.SelectionSet, fragments, seen) {
				return true
			}
		}
	}
	return false
}

func limitError(code, message string) *gqlerror.Error {
	return &gqlerror.Error{Message: message, Extensions: map[string]any{"code": code}}
}
