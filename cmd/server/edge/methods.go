package edge

import (
	"net/http"
	"slices"
	"strings"
)

// Methods answers 405 with Allow listing allowed to a request whose method is none of
// them, nor OPTIONS or HEAD (which the handler answers itself), so a handler that would
// refuse other methods less clearly (gqlgen: 400 "transport not supported") never sees
// them. It writes through the error writer of the mount it sits in (see MountErrors), so
// it belongs inside Edge.API; outside any mount it answers in plain text.
func Methods(allowed ...string) Middleware {
	allow := strings.Join(allowed, ", ")
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if slices.Contains(allowed, r.Method) || r.Method == http.MethodOptions || r.Method == http.MethodHead {
				next.ServeHTTP(w, r)
				return
			}
			w.Header().Set("Allow", allow)
			err := &StatusError{Status: http.StatusMethodNotAllowed, Message: "method not allowed: use " + allow}
			if info := requestInfoFrom(r.Context()); info != nil && info.Errors != nil {
				info.Errors.WriteError(w, r, err)
				return
			}
			http.Error(w, err.Message, err.Status)
		})
	}
}
