package main

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"messages/models"
	"messages/rest"
)

// newLogger logs JSON in production and text in development, on stderr.
func newLogger(w io.Writer, c config) *slog.Logger {
	if c.development() {
		return slog.New(slog.NewTextHandler(w, nil))
	}
	return slog.New(slog.NewJSONHandler(w, nil))
}

// statusRecorder remembers the status a handler wrote.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// logRequests logs one line per request with a request id (X-Request-Id, accepted from the
// client when sane or generated, and echoed). It logs the path, never headers or bodies,
// so API keys and payloads stay out of the log.
func logRequests(logger *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := r.Header.Get("X-Request-Id")
		if !saneRequestID(id) {
			var b [12]byte
			_, _ = rand.Read(b[:])
			id = hex.EncodeToString(b[:])
		}
		w.Header().Set("X-Request-Id", id)
		rec := &statusRecorder{ResponseWriter: w}
		ctx, info := rest.WithRequestInfo(r.Context())
		r = r.WithContext(ctx) // the mux records the matched pattern on this request
		next.ServeHTTP(rec, r)
		logger.InfoContext(ctx, "request", "requestId", id, "method", r.Method, "path", r.URL.Path, "route", r.Pattern,
			"status", rec.status, "duration", time.Since(start).String(), "environmentId", info.EnvironmentID)
	})
}

// recoverPanics answers a panicking request with a 500 whose errorId leads to the stack in
// the log; nothing of the panic reaches the client.
func recoverPanics(rs *rest.Server, logger *slog.Logger, now func() time.Time, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			p := recover()
			if p == nil || p == http.ErrAbortHandler {
				if p != nil {
					panic(p)
				}
				return
			}
			e := models.Internal(now())
			logger.ErrorContext(r.Context(), "panic", "errorId", e.ID, "method", r.Method, "path", r.URL.Path,
				"panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			rs.WriteError(w, r, e, strings.HasPrefix(r.URL.Path, "/graphql"))
		}()
		next.ServeHTTP(w, r)
	})
}

// saneRequestID accepts client request ids of 1 to 128 characters from [A-Za-z0-9._-],
// so a hostile header cannot forge log lines.
func saneRequestID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}
