package graph

import (
	"context"
	"net/http"
	"sync/atomic"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	gqlextension "github.com/99designs/gqlgen/graphql/handler/extension"
	gqltransport "github.com/99designs/gqlgen/graphql/handler/transport"

	"messages/graph/extension"
	"messages/graph/transport"
	"messages/models"
)

// HandlerOptions configure the GraphQL endpoint.
type HandlerOptions struct {
	Introspection bool
	// Suggestions lets validation errors suggest the names a client may have meant ("Did
	// you mean \"messages\"?"): a help in development, a map of the schema in production.
	Suggestions bool
	Limits      extension.Limits
	// Extensions are used before the built-in ones: metrics and tracing
	// (extension.Metrics, extension.Tracing).
	Extensions []graphql.HandlerExtension
	// Gate is what every operation of a WebSocket or an event stream passes. Without one
	// the handler serves neither: only POST and GET, each guarded by the HTTP edge as a
	// request.
	Gate transport.Gate
	// Socket bounds each WebSocket; zero fields take transport.DefaultSocketOptions.
	Socket transport.SocketOptions
	// TrustedDocuments are the documents frontends were built with (nil: none), and
	// Trusted what they mean to a request (docs/browsers.md).
	TrustedDocuments *extension.TrustedSet
	Trusted          extension.TrustedMode
	// executorOnly leaves every query to gqlgen's executor, for tests that hold the
	// list encoders (listquery.go) to it.
	executorOnly bool
	// listAnswered, when set, counts the queries the list encoders answer.
	listAnswered *atomic.Int64
}

// DefaultLimits are the limits of a production handler (extension.DefaultLimits).
var DefaultLimits = extension.DefaultLimits

// The handler's caches, each bounded in bytes (extension.ByteLRU).
const (
	// documentCacheBytes bounds the parsed and validated documents kept: at 48 bytes
	// charged per byte of text, about 700 documents of a typical 500 bytes (an app sends
	// a few dozen distinct ones), or 70 of the densest the limits admit.
	documentCacheBytes = 16 << 20
	// persistedQueryCacheBytes bounds the persisted queries kept (their text).
	persistedQueryCacheBytes = 8 << 20
	// planCacheBytes bounds the list plans kept (listquery.go).
	planCacheBytes = 8 << 20
)

// NewHandler returns the /graphql endpoint: POST and GET transports that answer as
// GraphQL over HTTP says, WebSocket and event-stream transports whose operations pass the
// Gate (package transport), query and persisted-query caches bounded in bytes, the limits,
// metrics, tracing, idempotency and trusted documents (package extension), the list encoders
// (listquery.go), the error presenter and panic recovery.
func NewHandler(r *Resolver, o HandlerOptions) http.Handler {
	cfg := Config{Resolvers: r}
	es := NewExecutableSchema(cfg)
	srv := handler.New(pagedSchema{es})
	if o.Gate != nil {
		// Streams first: a WebSocket upgrade is a GET, and an event stream a POST.
		srv.AddTransport(transport.NewWebSocket(o.Gate, o.Socket))
		srv.AddTransport(transport.NewEventStream(o.Gate))
	}
	srv.AddTransport(gqltransport.Options{})
	// GraphQL over HTTP's statuses and media types, and GET caching.
	srv.AddTransport(transport.GET{})
	srv.AddTransport(transport.POST{})
	// Trusted documents come parsed and validated from their set, everything else from
	// the cache of documents parsed on demand.
	documents := extension.TrustedCache{Documents: o.TrustedDocuments, Next: extension.NewDocumentCache(documentCacheBytes)}
	srv.SetQueryCache(documents)
	srv.SetParserTokenLimit(o.Limits.Tokens)
	srv.SetDisableSuggestion(!o.Suggestions)
	for _, e := range o.Extensions {
		srv.Use(e)
	}
	if o.Introspection {
		srv.Use(gqlextension.Introspection{})
	}
	// A document id becomes its text first, so the limits and the caches see the text.
	srv.Use(extension.TrustedDocuments{Documents: o.TrustedDocuments, Mode: o.Trusted})
	// The limits before persisted queries: only a document within them is registered.
	srv.Use(extension.QueryLimits{Limits: o.Limits, Introspection: o.Introspection, Parsed: documents})
	srv.Use(gqlextension.AutomaticPersistedQuery{Cache: extension.NewPersistedQueryCache(persistedQueryCacheBytes)})
	srv.Use(gqlextension.FixedComplexityLimit(o.Limits.Complexity))
	// Last, so it wraps the execution itself: a mutation claims its idempotency key first.
	srv.Use(extension.Idempotency{})
	if !o.executorOnly {
		// Its field interceptor writes the list root fields' results (listquery.go).
		srv.Use(newListQueries(es.(*executableSchema), o.listAnswered))
	}
	srv.AroundFields(emptyAsNull)
	srv.SetErrorPresenter(r.presentError)
	srv.SetRecoverFunc(r.recoverPanic)
	return srv
}

// IdempotencyPolicy is the /graphql mount's idempotency policy for the HTTP edge: which
// requests take a key is known only once gqlgen has parsed the document, so the edge
// hands each keyed request's claim to the handler, where extension.Idempotency uses it
// for mutations.
type IdempotencyPolicy struct{}

// Defer returns r carrying c for extension.Idempotency.
func (IdempotencyPolicy) Defer(r *http.Request, c extension.IdempotencyClaim) *http.Request {
	return r.WithContext(extension.WithClaim(r.Context(), c))
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
// answers as null in a nullable field, and so do the list encoders, which call it on the
// value of every nullable field they write (listencoders.generated.go).
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
