// Package rest is the /v1 shim: it keeps the two documented endpoints byte-compatible for
// existing clients by parsing requests into the resolvers' argument types, calling the
// same resolver methods as GraphQL, and writing their results as JSON. It also holds the
// HTTP guards both APIs share: API-key authentication, rate limits, idempotency keys and
// request deadlines.
package rest

import (
	"mime"
	"net/http"
	"strings"

	"messages/graph"
)

// Server serves /v1 and guards both /v1 and /graphql.
type Server struct {
	resolver    *graph.Resolver
	auth        Authenticator
	errors      errorWriter
	limiter     *RateLimiter
	idempotency *Idempotency
}

// Options configure the guards. The zero value means no rate limit and idempotency keys
// kept for DefaultIdempotencyOptions.TTL.
type Options struct {
	RateLimiter *RateLimiter
	Idempotency IdempotencyOptions
}

// NewServer returns the /v1 shim over the resolvers.
func NewServer(r *graph.Resolver, opts ...Options) *Server {
	var o Options
	if len(opts) > 0 {
		o = opts[0]
	}
	return &Server{
		resolver: r, auth: r.Store, errors: errorWriter{logger: r.Logger, now: r.Now},
		limiter: o.RateLimiter, idempotency: NewIdempotency(r, o.Idempotency),
	}
}

// Idempotency returns the idempotency-key middleware shared by /v1 and /graphql.
func (s *Server) Idempotency() *Idempotency { return s.idempotency }

// Handler returns /v1 behind its guards: authentication, then the rate limit, then
// idempotency keys (whose transaction must hold every query of the request).
func (s *Server) Handler() http.Handler {
	return s.guard(s.Routes(), false)
}

// GraphQL returns the GraphQL endpoint behind the same guards as /v1, with its body bounded
// before idempotency reads it.
func (s *Server) GraphQL(gql http.Handler) http.Handler {
	return s.guard(s.graphQLMediaType(http.MaxBytesHandler(gql, MaxBodyBytes)), true)
}

// graphQLMediaType refuses a POST whose body is not JSON with 415 and a coded error;
// gqlgen would answer "transport not supported" without a code.
func (s *Server) graphQLMediaType(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
			if err != nil || mt != "application/json" && !strings.HasSuffix(mt, "+json") {
				s.errors.write(w, r, &statusError{http.StatusUnsupportedMediaType, "Content-Type must be application/json"}, true)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Server) guard(next http.Handler, graphqlStyle bool) http.Handler {
	return s.Authenticate(s.RateLimit(s.limiter, s.idempotency.Wrap(next, graphqlStyle), graphqlStyle), graphqlStyle)
}

// Routes returns the bare /v1 routes, without guards. Unknown paths and methods answer
// with the documented error body.
func (s *Server) Routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/messages", s.listMessages)
	mux.HandleFunc("POST /v1/subscribers/{subscriberId}/messages/{messageId}/actions/{type}", s.markMessageAction)
	mux.HandleFunc("/v1/messages", s.methodNotAllowed("GET, HEAD"))
	mux.HandleFunc("/v1/subscribers/{subscriberId}/messages/{messageId}/actions/{type}", s.methodNotAllowed("POST"))
	mux.HandleFunc("/v1/", func(w http.ResponseWriter, r *http.Request) {
		s.errors.write(w, r, &statusError{http.StatusNotFound, "Cannot " + r.Method + " " + r.URL.Path}, false)
	})
	return mux
}

func (s *Server) methodNotAllowed(allow string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", allow)
		s.errors.write(w, r, &statusError{http.StatusMethodNotAllowed, "method " + r.Method + " is not allowed here"}, false)
	}
}

// WriteError answers with the documented error body, for routes outside /v1 that share it.
func (s *Server) WriteError(w http.ResponseWriter, r *http.Request, err error, graphqlStyle bool) {
	s.errors.write(w, r, err, graphqlStyle)
}
