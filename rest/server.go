// Package rest is the /v1 shim: it keeps the documented endpoints byte-compatible for
// existing clients by parsing requests into the service's typed inputs, calling the same
// service as GraphQL (models/service), and writing its results, and its errors, as JSON.
// The guards in front of it (authentication, rate limits, idempotency keys, deadlines)
// are the HTTP edge's, shared with /graphql.
package rest

import (
	"log/slog"
	"net/http"
	"time"

	"messages/models/service"
)

// Server serves the /v1 routes over the service.
type Server struct {
	service *service.Service
	logger  *slog.Logger
	errors  ErrorWriter
}

// NewServer returns the /v1 shim over svc, logging to logger and stamping error bodies
// with now.
func NewServer(svc *service.Service, logger *slog.Logger, now func() time.Time) *Server {
	return &Server{service: svc, logger: logger, errors: NewErrorWriter(logger, now)}
}

// Errors is the /v1 error writer, for the edge's guards in front of the routes.
func (s *Server) Errors() ErrorWriter { return s.errors }

// Routes returns the bare /v1 routes, without guards. Unknown paths and methods answer
// with the documented error body.
func (s *Server) Routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/messages", s.listMessages)
	mux.HandleFunc(markActionPattern, s.markMessageAction)
	mux.HandleFunc(markAllPattern, s.markAllMessages)
	mux.HandleFunc(markAsPattern, s.markMessagesAs)
	mux.HandleFunc(markByMarkPattern, s.markMessagesByMark)
	mux.HandleFunc(deleteMessagePattern, s.deleteMessage)
	mux.HandleFunc(deleteTransactionPattern, s.deleteTransaction)
	mux.HandleFunc("POST "+inboxSessionPath, s.createSession)
	mux.HandleFunc(inboxSessionPath, s.methodNotAllowed("POST"))
	mux.HandleFunc("GET /v1/inbox/notifications", s.inboxNotifications)
	mux.HandleFunc("GET /v1/inbox/notifications/count", s.inboxCount)
	mux.HandleFunc("PATCH /v1/inbox/notifications/{id}/{change}", s.inboxChange)
	mux.HandleFunc("POST /v1/inbox/notifications/{bulk}", s.inboxBulkChange)
	mux.HandleFunc("DELETE /v1/inbox/notifications/{id}/delete", s.inboxDelete)
	mux.HandleFunc("POST /v1/inbox/notifications/delete", s.inboxDeleteAll)
	mux.HandleFunc("GET /v1/inbox/preferences", s.inboxPreferences)
	mux.HandleFunc("GET /v1/inbox/preferences/global", s.inboxGlobalPreference)
	mux.HandleFunc("PATCH /v1/inbox/preferences", s.preferencesReadOnly)
	mux.HandleFunc("PATCH /v1/inbox/preferences/{workflow}", s.preferencesReadOnly)
	mux.HandleFunc("/v1/messages", s.methodNotAllowed("GET, HEAD"))
	mux.HandleFunc("/v1/subscribers/{subscriberId}/messages/{messageId}/actions/{type}", s.methodNotAllowed("POST"))
	mux.HandleFunc("/v1/subscribers/{subscriberId}/messages/mark-all", s.methodNotAllowed("POST"))
	mux.HandleFunc("/v1/subscribers/{subscriberId}/messages/mark-as", s.methodNotAllowed("POST"))
	mux.HandleFunc("/v1/subscribers/{subscriberId}/messages/markAs", s.methodNotAllowed("POST"))
	mux.HandleFunc("/v1/", func(w http.ResponseWriter, r *http.Request) {
		s.errors.WriteError(w, r, RouteNotFound(r))
	})
	return mux
}

func (s *Server) methodNotAllowed(allow string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", allow)
		s.errors.WriteError(w, r, &statusError{http.StatusMethodNotAllowed, "method " + r.Method + " is not allowed here"})
	}
}
