package edge

import (
	"crypto/rand"
	"encoding/hex"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/felixge/httpsnoop"
)

// Log logs one line per request with a request id (X-Request-Id, accepted from the
// client when sane or generated, and echoed). It logs the path, never headers or bodies,
// so API keys and payloads stay out of the log.
func Log(logger *slog.Logger, now func() time.Time) Middleware {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := now()
			id := r.Header.Get("X-Request-Id")
			if !saneRequestID(id) {
				var b [12]byte
				_, _ = rand.Read(b[:])
				id = hex.EncodeToString(b[:])
			}
			w.Header().Set("X-Request-Id", id)
			var status int
			ctx, info := withRequestInfo(r.Context())
			r = r.WithContext(ctx) // the mux records the matched pattern on this request
			next.ServeHTTP(recordStatus(w, &status), r)
			logger.InfoContext(ctx, "request", "requestId", id, "method", r.Method, "path", r.URL.Path, "route", r.Pattern,
				"status", status, "duration", now().Sub(start).String(), "environmentId", info.environment())
		})
	}
}

// recordStatus wraps w so *status holds the first status the handler sent: the one it
// wrote, or 200 at its first body byte. It stays 0 when the handler sent nothing.
func recordStatus(w http.ResponseWriter, status *int) http.ResponseWriter {
	return httpsnoop.Wrap(w, httpsnoop.Hooks{
		WriteHeader: func(next httpsnoop.WriteHeaderFunc) httpsnoop.WriteHeaderFunc {
			return func(code int) {
				if *status == 0 {
					*status = code
				}
				next(code)
			}
		},
		Write: func(next httpsnoop.WriteFunc) httpsnoop.WriteFunc {
			return func(b []byte) (int, error) {
				if *status == 0 {
					*status = http.StatusOK
				}
				return next(b)
			}
		},
		ReadFrom: func(next httpsnoop.ReadFromFunc) httpsnoop.ReadFromFunc {
			return func(src io.Reader) (int64, error) {
				if *status == 0 {
					*status = http.StatusOK
				}
				return next(src)
			}
		},
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
