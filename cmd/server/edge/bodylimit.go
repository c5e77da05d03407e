package edge

import "net/http"

// BodyLimit bounds request bodies to n bytes; reading past it fails with an
// *http.MaxBytesError carrying n, and the handler answers 413 stating that limit (a
// handler's own larger bound does not hide it).
func BodyLimit(n int64) Middleware {
	return func(next http.Handler) http.Handler { return http.MaxBytesHandler(next, n) }
}
