package edge

import (
	"context"
	"net/http"

	"messages/models"
)

// Authenticator resolves a request's credential to its caller: the resolver layer, over
// the store. An API key is the environment's; a session token is one subscriber's.
type Authenticator interface {
	Authenticate(ctx context.Context, apiKey string) (models.Caller, error)
	AuthenticateSession(ctx context.Context, token string) (models.Caller, error)
}

// Authenticate admits requests with a valid API key or session token and puts the caller
// in the request context; others get 401 written by errs. Credentials are never logged.
// With upgrades, WebSocket upgrades pass unauthenticated, for a mount that authenticates
// them in their first message.
func Authenticate(auth Authenticator, errs ErrorWriter, upgrades bool) Middleware {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if upgrades && WebSocket(r) {
				// The protocol's first message carries the credential (browsers cannot
				// set headers on a WebSocket); the mount checks it there.
				next.ServeHTTP(w, r)
				return
			}
			c, err := models.ParseCredential(r.Header.Get("Authorization"))
			if err == nil {
				var caller models.Caller
				if c.Token != "" {
					caller, err = auth.AuthenticateSession(r.Context(), c.Token)
				} else {
					caller, err = auth.Authenticate(r.Context(), c.APIKey)
				}
				if err == nil {
					if info := requestInfoFrom(r.Context()); info != nil {
						info.EnvironmentID = caller.EnvironmentID
					}
					next.ServeHTTP(w, r.WithContext(models.WithCaller(r.Context(), caller)))
					return
				}
			}
			errs.WriteError(w, r, err)
		})
	}
}
