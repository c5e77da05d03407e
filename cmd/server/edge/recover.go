package edge

import (
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"time"

	"messages/models"
)

// Recover answers a panicking request with a 500 whose errorId leads to the stack in the
// log; nothing of the panic reaches the client. The body is written by the error writer
// of the mount the request reached (see MountErrors), or by errs outside any mount.
// http.ErrAbortHandler passes through, as net/http expects.
func Recover(logger *slog.Logger, now func() time.Time, errs ErrorWriter) Middleware {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			defer func() {
				p := recover()
				if p == nil {
					return
				}
				if p == http.ErrAbortHandler {
					panic(p)
				}
				e := models.Internal(now())
				logger.ErrorContext(r.Context(), "panic", "errorId", e.ID, "method", r.Method, "path", r.URL.Path,
					"panic", fmt.Sprint(p), "stack", string(debug.Stack()))
				writer := errs
				if info := requestInfoFrom(r.Context()); info != nil && info.Errors != nil {
					writer = info.Errors
				}
				writer.WriteError(w, r, e)
			}()
			next.ServeHTTP(w, r)
		})
	}
}
