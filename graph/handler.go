package graph

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

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
	// Aliases caps the number of aliased fields, which repeat work under new names.
	Aliases int
}

// DefaultLimits admit a full 1000-message page with every field selected, and refuse
// queries that nest or repeat far beyond anything a client needs. The schema itself nests
// at most 8 deep; 15 leaves room for GraphiQL's standard introspection query (13 deep:
// seven levels of ofType) while bounding introspection's recursion.
var DefaultLimits = Limits{Complexity: 200_000, Depth: 15, QueryBytes: 32 << 10, Tokens: 10_000, Aliases: 30}

// HandlerOptions configure the GraphQL endpoint.
type HandlerOptions struct {
	Introspection bool
	Limits        Limits
	// Extensions are used before the built-in ones: metrics and tracing (see observe.go).
	Extensions []graphql.HandlerExtension
	// WebSocketPing is how often the server pings each WebSocket; 0 means it does not
	// (see websocketTransport).
	WebSocketPing time.Duration
	// executorOnly leaves every query to gqlgen's executor, for tests that hold the
	// list encoders (listquery.go) to it.
	executorOnly bool
	// listAnswered, when set, counts the queries the list encoders answer.
	listAnswered *atomic.Int64
}

// NewHandler returns the /graphql endpoint: POST and GET transports that answer as
// GraphQL over HTTP says (transport.go), bounded query and persisted-query caches, the
// limits, the error presenter and panic recovery.
func NewHandler(r *Resolver, o HandlerOptions) http.Handler {
	cfg := Config{Resolvers: r}
	cfg.Complexity.Query.Messages = func(child int, _ *models.ChannelType, _ *string, _ []string, _ *int, limit *int) int {
		n := models.DefaultPageSize
		if limit != nil && *limit > 0 {
			n = *limit
		}
		return 1 + n*child
	}
	cfg.Complexity.Query.MessagesConnection = func(child int, _ *models.ChannelType, _ *string, _ []string, first *int, _ *string) int {
		n := models.DefaultPageSize
		if first != nil && *first > 0 {
			n = *first
		}
		return 1 + n*child
	}
	es := NewExecutableSchema(cfg)
	srv := handler.New(es)
	// Subscriptions first: a WebSocket upgrade is a GET, and an event stream a POST.
	srv.AddTransport(r.websocketTransport(o.WebSocketPing))
	srv.AddTransport(sseTransport())
	srv.AddTransport(transport.Options{})
	// GraphQL over HTTP's statuses and media types, and GET caching (transport.go).
	srv.AddTransport(getTransport{})
	srv.AddTransport(postTransport{})
	srv.SetQueryCache(lru.New[*ast.QueryDocument](1000))
	srv.SetParserTokenLimit(o.Limits.Tokens)
	for _, e := range o.Extensions {
		srv.Use(e)
	}
	if o.Introspection {
		srv.Use(extension.Introspection{})
	}
	srv.Use(extension.AutomaticPersistedQuery{Cache: lru.New[string](1000)})
	srv.Use(queryLimits{bytes: o.Limits.QueryBytes, depth: o.Limits.Depth, aliases: o.Limits.Aliases, introspection: o.Introspection})
	srv.Use(extension.FixedComplexityLimit(o.Limits.Complexity))
	// Last, so it wraps the execution itself: a mutation claims its idempotency key first.
	srv.Use(idempotency{})
	if !o.executorOnly {
		// Innermost: it answers list queries without calling on.
		srv.Use(newListQueries(es.(*executableSchema), r, o.listAnswered))
	}
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
	if emptyText(res) {
		if fc := graphql.GetFieldContext(ctx); fc != nil && fc.Field.Definition != nil && !fc.Field.Definition.Type.NonNull {
			return nil, nil
		}
	}
	return res, nil
}

// emptyText reports whether v is a text or enum value without a value, which emptyAsNull
// (and the list encoders, encode.go) answer as null in a nullable field.
func emptyText(v any) bool {
	switch v := v.(type) {
	case string:
		return v == ""
	case models.ButtonType:
		return v == ""
	case models.MessageActionStatus:
		return v == ""
	case models.ChannelType:
		return v == ""
	}
	return false
}

// queryLimits refuses over-long query text, over-deep selections and, when it is off,
// introspection, all before execution.
type queryLimits struct {
	bytes         int
	depth         int
	aliases       int
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
	sh := shape{fragments: op.Doc.Fragments}
	sh.walk(op.Operation.SelectionSet, 0)
	switch {
	case sh.visits > maxVisits:
		return limitError("QUERY_TOO_COMPLEX", fmt.Sprintf("query expands to more than %d selections", maxVisits))
	case l.depth > 0 && sh.depth > l.depth:
		return limitError("DEPTH_LIMIT_EXCEEDED", fmt.Sprintf("query is nested deeper than the limit of %d", l.depth))
	case l.aliases > 0 && sh.aliases > l.aliases:
		return limitError("ALIAS_LIMIT_EXCEEDED", fmt.Sprintf("query uses more than %d aliases", l.aliases))
	}
	return nil
}

// shape is what queryLimits measures of an operation: how deep its selections nest and
// how many aliases it uses, with fragments expanded where they are spread.
type shape struct {
	fragments ast.FragmentDefinitionList
	depth     int
	aliases   int
	// visits bounds the walk: fragments spread inside fragments can expand a small
	// document into a huge tree, and such a document is refused, not walked.
	visits int
}

// maxVisits is the most selections the walk expands before refusing the operation.
const maxVisits = 20_000

func (sh *shape) walk(set ast.SelectionSet, level int) {
	for _, sel := range set {
		if sh.visits++; sh.visits > maxVisits {
			return
		}
		switch s := sel.(type) {
		case *ast.Field:
			sh.depth = max(sh.depth, level+1)
			if s.Alias != "" && s.Alias != s.Name {
				sh.aliases++
			}
			sh.walk(s.SelectionSet, level+1)
		case *ast.InlineFragment:
			sh.walk(s.SelectionSet, level)
		case *ast.FragmentSpread:
			if f := sh.fragments.ForName(s.Name); f != nil {
				sh.walk(f.SelectionSet, level)
			}
		}
	}
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
