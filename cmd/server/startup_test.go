package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"messages/models"
	"messages/models/dbtest"
	"messages/models/store"
)

func TestBackoffDoublesToCap(t *testing.T) {
	b := startBackoff
	var got []time.Duration
	for range 8 {
		got = append(got, b.wait())
	}
	s := time.Second
	want := []time.Duration{s / 2, s, 2 * s, 4 * s, 8 * s, 10 * s, 10 * s, 10 * s}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("schedule (-want +got):\n%s", diff)
	}
}

func TestRedactError(t *testing.T) {
	err := errors.New("Access denied for user 'app' using password s3cr3t")
	got := redactError(err, "mysql://app:s3cr3t@db:3306/messages")
	if strings.Contains(got, "s3cr3t") || !strings.Contains(got, "xxxxx") {
		t.Errorf("redactError = %q, want the password replaced", got)
	}
}

// Errors that waiting cannot fix end the start at once instead of retrying forever.
func TestConnectGivesUpOnPermanentErrors(t *testing.T) {
	var log strings.Builder
	c := config{databaseURL: "postgres://db/x", pool: store.DefaultPool}
	_, err := connect(context.Background(), c, slog.New(slog.NewTextHandler(&log, nil)), startBackoff)
	if err == nil || !strings.Contains(err.Error(), "DATABASE_URL") {
		t.Fatalf("connect = %v, want the URL refused", err)
	}
	if strings.Contains(log.String(), "retrying") {
		t.Errorf("a malformed URL was retried:\n%s", log.String())
	}
}

// While it starts, the server is alive but not ready, and every API route answers 503
// with Retry-After and the documented error body.
func TestStartingRoutes(t *testing.T) {
	h := startingRoutes(slog.New(slog.NewTextHandler(io.Discard, nil)), time.Now)
	tests := []struct {
		name, method, path string
		status             int
		body               string
	}{
		{"healthz200", http.MethodGet, "/healthz", 200, `{"status":"ok"}`},
		{"readyz503", http.MethodGet, "/readyz", 503, `{"status":"starting"}`},
		{"list503", http.MethodGet, "/v1/messages", 503, ""},
		{"graphql503", http.MethodPost, "/graphql", 503, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(tt.method, tt.path, strings.NewReader(`{}`)))
			if rec.Code != tt.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tt.status, rec.Body)
			}
			if tt.body != "" {
				if got := strings.TrimSpace(rec.Body.String()); got != tt.body {
					t.Errorf("body %s, want %s", got, tt.body)
				}
				return
			}
			if got := rec.Header().Get("Retry-After"); got != "2" {
				t.Errorf("Retry-After = %q, want 2", got)
			}
			var body struct {
				StatusCode int    `json:"statusCode"`
				Message    string `json:"message"`
				Errors     []struct {
					Extensions map[string]string `json:"extensions"`
				} `json:"errors"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
				t.Fatal(err)
			}
			if body.StatusCode != 503 || body.Message != models.UnavailableMessage {
				t.Errorf("body %s, want statusCode 503 and %q", rec.Body, models.UnavailableMessage)
			}
			if tt.path == "/graphql" && (len(body.Errors) != 1 || body.Errors[0].Extensions["code"] != "SERVICE_UNAVAILABLE") {
				t.Errorf("graphql errors %s, want SERVICE_UNAVAILABLE", rec.Body)
			}
		})
	}
}

// /readyz says 200 only once the database answers and every migration is applied.
func TestReadyzNeedsMigrations(t *testing.T) {
	for _, dialect := range dbtest.Dialects {
		t.Run(dialect, func(t *testing.T) {
			ctx := context.Background()
			s, err := store.Open(ctx, dbtest.URL(t, dialect), store.DefaultPool)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			probe := func() (int, string) {
				rec := httptest.NewRecorder()
				readyz(s)(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
				return rec.Code, strings.TrimSpace(rec.Body.String())
			}
			if code, body := probe(); code != 503 || body != `{"status":"migrations pending"}` {
				t.Errorf("before migrating: %d %s", code, body)
			}
			if err := s.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			if code, body := probe(); code != 200 || body != `{"status":"ok"}` {
				t.Errorf("after migrating: %d %s", code, body)
			}
		})
	}
}
