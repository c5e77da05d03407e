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
			authorization := r.Header.Get("Authorization")
			if authorization == "" && m.TokenQuery != "" && WebSocket(r) {
				authorization, r = queryToken(r, m.TokenQuery)
			}
			ctx, err := g.Open(r.Context(), authorization)
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

// queryToken is the session token in r's query parameter name, as a bearer credential
// ("" when there is none), and r without that parameter, so that no error body or log
// down the chain quotes the credential.
func queryToken(r *http.Request, name string) (string, *http.Request) {
	q := r.URL.Query()
	token := q.Get(name)
	if token == "" {
		return "", r
	}
	q.Del(name)
	u := *r.URL
	u.RawQuery = q.Encode()
	stripped := *r
	stripped.URL = &u
	stripped.RequestURI = u.RequestURI()
	return "Bearer " + token, &stripped
}
