package edge

import (
	"context"
	"net/http"
	"strings"

	"messages/models"
)

// maxKeyLength bounds what is hashed and looked up; real keys are 64 characters.
const maxKeyLength = 256

// Authenticator resolves an API key to its caller: the resolver layer, over the store.
type Authenticator interface {
	Authenticate(ctx context.Context, apiKey string) (models.Caller, error)
}

// apiKey extracts the key of "Authorization: ApiKey <key>". The scheme word is matched
// case-insensitively, as HTTP auth schemes are.
func apiKey(r *http.Request) (string, error) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return "", models.Errorf(models.EUNAUTHORIZED, "API key required: send Authorization: ApiKey <key>")
	}
	scheme, key, ok := strings.Cut(h, " ")
	key = strings.TrimSpace(key)
	if !ok || !strings.EqualFold(scheme, "ApiKey") || key == "" || len(key) > maxKeyLength || strings.ContainsAny(key, " \t") {
		return "", models.Errorf(models.EUNAUTHORIZED, "Authorization header must be: ApiKey <key>")
	}
	return key, nil
}

// Authenticate admits requests with a valid API key and puts the caller in the request
// context; others get 401 written by errs. The key itself is never logged.
func Authenticate(auth Authenticator, errs ErrorWriter) Middleware {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			key, err := apiKey(r)
			if err == nil {
				var caller models.Caller
				caller, err = auth.Authenticate(r.Context(), key)
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
