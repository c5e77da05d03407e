package edge

import (
	"mime"
	"net/http"
	"strings"
)

// JSONMediaType refuses a POST whose body is not JSON with 415, written by errs; a
// handler such as gqlgen would answer "transport not supported" without a code.
func JSONMediaType(errs ErrorWriter) Middleware {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost {
				mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
				if err != nil || mt != "application/json" && !strings.HasSuffix(mt, "+json") {
					errs.WriteError(w, r, &StatusError{http.StatusUnsupportedMediaType, "Content-Type must be application/json"})
					return
				}
			}
			next.ServeHTTP(w, r)
		})
	}
}
