package rest

import (
	"log/slog"
	"net/http"
	"time"

	"messages/cmd/server/edge"
	"messages/graph"
	"messages/models/service"
	"messages/models/session"
	"messages/models/store"
)

// ChainOptions are what a test varies of the production chain; the zero value is
// cmd/server's mounts with no rate limit and no deadline.
type ChainOptions struct {
	Limiter *edge.RateLimiter
	// AddressLimiter limits the keyless session requests per client address; nil: one
	// that never refuses a test.
	AddressLimiter *edge.RateLimiter
	Idempotency    *edge.Idempotency // nil: a fresh one over the resolver
	Timeout        time.Duration
	// Inner wraps each mount's handler inside every guard, where a test counts or fails
	// what gets through.
	Inner func(http.Handler) http.Handler
	// GraphQL configures the /graphql handler.
	GraphQL graph.HandlerOptions
}

// Backend is what the chain runs over: the service both APIs call, the store that keeps
// idempotency keys, and the logger and clock.
type Backend struct {
	Store   *store.Store
	Service *service.Service
	Logger  *slog.Logger
	Now     func() time.Time
}

// NewBackend builds the service over s, issuing and accepting session tokens with
// sessions (nil: none).
func NewBackend(s *store.Store, logger *slog.Logger, now func() time.Time, sessions *session.Signer) Backend {
	return Backend{Store: s, Service: service.New(service.Options{Store: s, Sessions: sessions, Now: now}), Logger: logger, Now: now}
}

// Chain is /v1 and /graphql behind the edge's API guards, mounted as cmd/server's routes
// mount them (edge.Edge.API with each mount's error writer and idempotency policy).
func Chain(res Backend, o ChainOptions) http.Handler {
	if o.Idempotency == nil {
		o.Idempotency = edge.NewIdempotency(res.Store, res.Logger, res.Now, edge.IdempotencyOptions{})
	}
	inner := func(h http.Handler) http.Handler {
		if o.Inner != nil {
			return o.Inner(h)
		}
		return h
	}
	if o.AddressLimiter == nil {
		var err error
		if o.AddressLimiter, err = edge.NewRateLimiter(edge.RateLimitOptions{Rate: 1e6, Burst: 1e6}, res.Logger); err != nil {
			panic(err)
		}
	}
	rs := NewServer(res.Service, res.Logger, res.Now)
	e := edge.New(edge.Options{Logger: res.Logger, Now: res.Now, Auth: res.Service, Limiter: o.Limiter, AddressLimiter: o.AddressLimiter,
		Idempotency: o.Idempotency, Timeout: o.Timeout, Errors: rs.Errors()})
	mux := http.NewServeMux()
	mux.Handle("/v1/", e.API(edge.Mount{Errors: rs.Errors(), Idempotency: NewIdempotencyPolicy(), Keyless: Keyless}, inner(rs.Routes())))
	mux.Handle("/graphql", e.API(edge.Mount{Errors: rs.Errors().WithErrors(graph.ErrorsArray), DeferredIdempotency: graph.IdempotencyPolicy{}, JSONBodies: true},
		inner(graph.NewHandler(&graph.Resolver{Service: res.Service, Logger: res.Logger, Now: res.Now}, o.GraphQL))))
	return mux
}

// NewAddressLimiterForTest is a per-address limiter of burst requests that refills one
// an hour on now's clock.
func NewAddressLimiterForTest(burst int, now func() time.Time) (*edge.RateLimiter, error) {
	return edge.NewRateLimiter(edge.RateLimitOptions{Rate: 1.0 / 3600, Burst: burst, Now: now}, nil)
}
