package edge

import (
	"context"
	"net/http"
	"time"
)

// DefaultRequestTimeout bounds the work of one request: well above a healthy request's
// milliseconds, well below the point where a client or load balancer gives up.
const DefaultRequestTimeout = 5 * time.Second

// Deadline gives every request a deadline of d in its context. The store runs every
// query with that context, so when the database stops answering the query is abandoned
// at the deadline, its connection discarded, and the request answered with 503 instead
// of hanging. A d of zero or less leaves requests without a deadline. Streams (see
// stream.go) get none here: their transport bounds each operation they carry
// (Gate.Operation), and lifts the connection's read and write timeouts only once the
// stream is authenticated and its request read.
func Deadline(d time.Duration) Middleware {
	return func(next http.Handler) http.Handler {
		if d <= 0 {
			return next
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if Streaming(r) {
				// A stream lasts as long as its client listens; each operation's work is
				// bounded where it is done.
				next.ServeHTTP(w, r)
				return
			}
			ctx, cancel := context.WithTimeout(r.Context(), d)
			defer cancel()
			next.ServeHTTP(w, r.WithContext(ctx))
		})
	}
}
