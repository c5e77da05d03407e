package edge

import "net/http"

// BodyLimit bounds request bodies to n bytes; reading past it fails, and the handler
// answers 413.
func BodyLimit(n int64) Middleware {
	return func(next http.Handler) http.Handler { return http.MaxBytesHandler(next, n) }
}
