package rest

import (
	"context"
	"net/http"
	"strings"

	"messages/models"
)

// maxKeyLength bounds what is hashed and looked up; real keys are 64 characters.
const maxKeyLength = 256

// Authenticator resolves an API key to its caller.
type Authenticator interface {
	Authenticate(ctx context.Context, key string) (models.Caller, error)
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
// context; others get 401 with the error body (GraphQL-flavoured on /graphql). The key
// itself is never logged.
func (s *Server) Authenticate(next http.Handler, graphqlStyle bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key, err := apiKey(r)
		if err == nil {
			var caller models.Caller
			caller, err = s.auth.Authenticate(r.Context(), key)
			if err == nil {
				if info, ok := r.Context().Value(requestInfoKey{}).(*RequestInfo); ok {
					info.EnvironmentID = caller.EnvironmentID
				}
				next.ServeHTTP(w, r.WithContext(models.WithCaller(r.Context(), caller)))
				return
			}
		}
		s.errors.write(w, r, err, graphqlStyle)
	})
}

// RequestInfo is what the access log reports about a request beyond its HTTP line; the
// guards fill it in as they learn it (never the key itself).
type RequestInfo struct {
	EnvironmentID string
}

type requestInfoKey struct{}

// WithRequestInfo returns a context whose RequestInfo Authenticate fills in.
func WithRequestInfo(ctx context.Context) (context.Context, *RequestInfo) {
	info := &RequestInfo{}
	return context.WithValue(ctx, requestInfoKey{}, info), info
}
