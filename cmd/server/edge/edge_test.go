package edge_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"messages/cmd/server/edge"
	"messages/models"
)

// namedErrors answers every error with its own name, so a test sees whose writer ran.
type namedErrors string

func (n namedErrors) WriteError(w http.ResponseWriter, _ *http.Request, err error) {
	status := http.StatusInternalServerError
	var s interface{ HTTPStatus() int }
	switch {
	case errors.As(err, &s):
		status = s.HTTPStatus()
	case models.ErrorCode(err) == models.EUNAUTHORIZED:
		status = http.StatusUnauthorized
	case models.ErrorCode(err) == models.ERATELIMITED:
		status = http.StatusTooManyRequests
	}
	w.WriteHeader(status)
	_, _ = io.WriteString(w, string(n))
}

// keys authenticates the one key "good" as environment env-1.
type keys struct{}

func (keys) Authenticate(_ context.Context, key string) (models.Caller, error) {
	if key != "good" {
		return models.Caller{}, models.Errorf(models.EUNAUTHORIZED, "unknown key")
	}
	return models.Caller{EnvironmentID: "env-1"}, nil
}

func (keys) RevokedKeys(context.Context, []string) ([]string, error) { return nil, nil }

func (keys) AuthenticateSession(_ context.Context, token string) (models.Caller, error) {
	if sub, ok := strings.CutSuffix(token, "-token"); ok {
		return models.Caller{EnvironmentID: "env-1", SubscriberID: sub}, nil
	}
	return models.Caller{}, models.Errorf(models.EUNAUTHORIZED, "session token is malformed")
}

// A mount's refusals and a panic inside it are written by the mount's own writer; a
// panic outside every mount by the edge's.
func TestMountErrors(t *testing.T) {
	e := edge.New(edge.Options{Logger: slog.New(slog.DiscardHandler), Now: time.Now, Auth: keys{}, Errors: namedErrors("edge")})
	mux := http.NewServeMux()
	mux.Handle("/a/", e.API(edge.Mount{Errors: namedErrors("a")}, http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("a") })))
	mux.Handle("/b/", e.API(edge.Mount{Errors: namedErrors("b"), JSONBodies: true}, http.NotFoundHandler()))
	mux.HandleFunc("/", func(http.ResponseWriter, *http.Request) { panic("outside") })
	h := e.Around(mux, mux)
	for _, tt := range []struct {
		name, method, path, key string
		status                  int
		writer                  string
	}{
		{"unauthenticatedA", http.MethodGet, "/a/x", "", http.StatusUnauthorized, "a"},
		{"unauthenticatedB", http.MethodGet, "/b/x", "bad", http.StatusUnauthorized, "b"},
		{"panicInsideA", http.MethodGet, "/a/x", "good", http.StatusInternalServerError, "a"},
		{"mediaTypeB", http.MethodPost, "/b/x", "good", http.StatusUnsupportedMediaType, "b"},
		{"panicOutside", http.MethodGet, "/c", "", http.StatusInternalServerError, "edge"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(tt.method, tt.path, nil)
			if tt.key != "" {
				req.Header.Set("Authorization", "ApiKey "+tt.key)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tt.status || rec.Body.String() != tt.writer {
				t.Errorf("%s %s: %d %q, want %d written by %q", tt.method, tt.path, rec.Code, rec.Body.String(), tt.status, tt.writer)
			}
		})
	}
}
