// Package rest is the /v1 shim: it keeps the two documented endpoints byte-compatible for
// existing clients by parsing requests into the resolvers' argument types, calling the
// same resolver methods as GraphQL, and writing their results as JSON.
package rest

import (
	"net/http"

	"messages/graph"
)

// Server serves /v1 and authenticates requests for both /v1 and /graphql.
type Server struct {
	resolver *graph.Resolver
	auth     Authenticator
	errors   errorWriter
}

// NewServer returns the /v1 shim over the resolvers.
func NewServer(r *graph.Resolver) *Server {
	return &Server{resolver: r, auth: r.Store, errors: errorWriter{logger: r.Logger, now: r.Now}}
}

// Handler returns the /v1 routes, each behind API-key authentication. Unknown paths
// and methods answer with the documented error body.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/messages", s.listMessages)
	mux.HandleFunc("POST /v1/subscribers/{subscriberId}/messages/{messageId}/actions/{type}", s.markMessageAction)
	mux.HandleFunc("/v1/messages", s.methodNotAllowed("GET, HEAD"))
	mux.HandleFunc("/v1/subscribers/{subscriberId}/messages/{messageId}/actions/{type}", s.methodNotAllowed("POST"))
	mux.HandleFunc("/v1/", func(w http.ResponseWriter, r *http.Request) {
		s.errors.write(w, r, &statusError{http.StatusNotFound, "Cannot " + r.Method + " " + r.URL.Path}, false)
	})
	return s.Authenticate(mux, false)
}

func (s *Server) methodNotAllowed(allow string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", allow)
		s.errors.write(w, r, &statusError{http.StatusMethodNotAllowed, "method " + r.Method + " is not allowed here"}, false)
	}
}

// WriteError answers with the documented error body, for routes outside /v1 (GraphQL's
// HTTP-level refusals) that share it.
func (s *Server) WriteError(w http.ResponseWriter, r *http.Request, err error, graphqlStyle bool) {
	s.errors.write(w, r, err, graphqlStyle)
}
