package edge

import (
	"context"
	"net/http"

	"messages/models"
)

// Authenticator resolves a request's credential to its caller (models/service.Service). An API key is the environment's; a session token is one subscriber's.
type Authenticator interface {
	Authenticate(ctx context.Context, apiKey string) (models.Caller, error)
	AuthenticateSession(ctx context.Context, token string) (models.Caller, error)
	KeyChecker
}

// Authenticate admits requests with a valid API key or session token (Gate.Open) and
// puts the caller in the request context; others get 401 written by errs. Credentials are
// never logged. With upgrades, WebSocket upgrades pass unauthenticated, for a mount that
// authenticates them in their first message.
func Authenticate(g *Gate, errs ErrorWriter, upgrades bool) Middleware {
	return authenticate(g, Mount{Errors: errs, WebSockets: upgrades})
}

// authenticate is Authenticate for mount m: with m.TokenQuery, a WebSocket upgrade
// without an Authorization header presents the session token of that query parameter.
func authenticate(g *Gate, m Mount) Middleware {
	errs, upgrades := m.Errors, m.WebSockets
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if upgrades && WebSocket(r) {
				// The protocol's first message carries the credential (browsers cannot
				// set headers on a WebSocket); the mount checks it there.
				next.ServeHTTP(w, r)
				return
			}
			ctx, err := g.Open(r.Context(), credential(r, m.TokenQuery))
			if err != nil {
				closeUnread(w, r)
				errs.WriteError(w, r, err)
				return
			}
			next.ServeHTTP(w, r.WithContext(ctx))
		})
	}
}

// closeUnread ends the connection after a refusal answered before the request's body
// was read: net/http would otherwise read what is left of the body before answering,
// waiting on a client that sends it slowly (or never) for the whole read timeout.
func closeUnread(w http.ResponseWriter, r *http.Request) {
	if r.ContentLength != 0 {
		w.Header().Set("Connection", "close")
	}
}

// credential is r's Authorization header; for a WebSocket upgrade without one, the
// session token in the query parameter tokenQuery (when set), as a bearer credential.
func credential(r *http.Request, tokenQuery string) string {
	if h := r.Header.Get("Authorization"); h != "" || tokenQuery == "" || !WebSocket(r) {
		return h
	}
	if token := r.URL.Query().Get(tokenQuery); token != "" {
		return "Bearer " + token
	}
	return ""
}
