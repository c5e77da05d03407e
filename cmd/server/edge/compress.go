package edge

import (
	"net/http"

	"github.com/klauspost/compress/gzhttp"
)

// Compress answers in gzip when the client asks for it and the body is worth it.
// Streams pass as they are: each event must reach the client when it is written, and a
// WebSocket takes over the connection.
func Compress() Middleware {
	return func(next http.Handler) http.Handler {
		gz := gzhttp.GzipHandler(next)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if Streaming(r) {
				next.ServeHTTP(w, r)
				return
			}
			gz.ServeHTTP(w, r)
		})
	}
}
