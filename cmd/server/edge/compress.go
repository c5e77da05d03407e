package edge

import (
	"net/http"

	"github.com/klauspost/compress/gzhttp"
)

// Compress answers in gzip when the client asks for it and the body is worth it.
func Compress() Middleware {
	return func(next http.Handler) http.Handler { return gzhttp.GzipHandler(next) }
}
