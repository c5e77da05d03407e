package edge

import (
	"context"
	"net/http"
	"strings"

	"messages/models"
)

// maxKeyLength bounds what is hashed and looked up; real keys are 64 characters.
const maxKeyLength = 256

// maxTokenLength bounds a session token read from a header; real ones are under 400.
const maxTokenLength = 4096

// Authenticator resolves a request's credential to its caller: the resolver layer, over
// the store. An API key is the environment's; a session token is one subscriber's.
type Authenticator interface {
	Authenticate(ctx context.Context, apiKey string) (models.Caller, error)
	AuthenticateSession(ctx context.Context, token string) (models.Caller, error)
}

// credential is what the Authorization header holds: "ApiKey <key>" (a backend) or
// "Bearer <session token>" (a browser). Scheme words match case-insensitively, as HTTP
// auth schemes do.
type credential struct {
	apiKey, token string
}

func readCredential(r *http.Request) (credential, error) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return credential{}, models.Errorf(models.EUNAUTHORIZED, "API key or session token required: send Authorization: ApiKey <key> or Bearer <token>")
	}
	scheme, value, ok := strings.Cut(h, " ")
	value = strings.TrimSpace(value)
	valid := ok && value != "" && !strings.ContainsAny(value, " \t")
	switch {
	case strings.EqualFold(scheme, "ApiKey") && valid && len(value) <= maxKeyLength:
		return credential{apiKey: value}, nil
	case strings.EqualFold(scheme, "Bearer") && valid && len(value) <= maxTokenLength:
		return credential{token: value}, nil
	case strings.EqualFold(scheme, "Bearer"):
		return credential{}, models.Errorf(models.EUNAUTHORIZED, "session token is malformed: send Authorization: Bearer <token>")
	}
	return credential{}, models.Errorf(models.EUNAUTHORIZED, "Authorization header must be: ApiKey <key> or Bearer <token>")
}

// Authenticate admits requests with a valid API key or session token and puts the caller
// in the request context; others get 401 written by errs. Credentials are never logged.
func Authenticate(auth Authenticator, errs ErrorWriter) Middleware {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			c, err := readCredential(r)
			if err == nil {
				var caller models.Caller
				if c.token != "" {
					caller, err = auth.AuthenticateSession(r.Context(), c.token)
				} else {
					caller, err = auth.Authenticate(r.Context(), c.apiKey)
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
