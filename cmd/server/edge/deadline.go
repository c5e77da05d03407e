package edge

import (
	"net/http"
	"time"
)

// DefaultRequestTimeout bounds the work of one request: well above a healthy request's
// milliseconds, well below the point where a client or load balancer gives up.
const DefaultRequestTimeout = 5 * time.Second

// Operation bounds every request that is not a stream as the Gate bounds an operation
// (Gate.Operation): a deadline in its context, and a byte budget the store charges the
// rows it reads and the GraphQL executor the response it writes. The store runs every
// query with that context, so when the database stops answering the query is abandoned
// at the deadline, its connection discarded, and the request answered with 503 instead
// of hanging. A stream gets neither here: its transport bounds each query and mutation it
// carries, and lifts the connection's read and write timeouts only once the stream is
// authenticated and its request read.
func Operation(g *Gate) Middleware {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if Streaming(r) {
				next.ServeHTTP(w, r)
				return
			}
			ctx, done := g.Operation(r.Context())
			defer done()
			next.ServeHTTP(w, r.WithContext(ctx))
		})
	}
}

// Deadline is Operation with a deadline of d and no byte budget; a d of zero or less
// leaves requests without a deadline.
func Deadline(d time.Duration) Middleware { return Operation(&Gate{timeout: d}) }
