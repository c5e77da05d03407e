package edge

import (
	"net"
	"net/http"
	"strings"

	"messages/models"
)

// LoopbackHost answers 403, written by errs, to a request whose Host is not localhost,
// 127.0.0.1 or [::1] (any port), for the development helpers that hold the demo key or
// hand out session tokens without one. A page on another site can make a browser resolve
// its own name to 127.0.0.1 (DNS rebinding), but the browser still sends that name as
// the Host: refused here, the page reads nothing.
func LoopbackHost(errs ErrorWriter) Middleware {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !loopbackHost(r.Host) {
				errs.WriteError(w, r, models.Errorf(models.EFORBIDDEN,
					"the development helpers answer only on localhost, 127.0.0.1 or [::1]: open them by one of those names"))
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// loopbackHost reports whether host, as a Host header holds it, names the loopback
// interface by one of the three names a person types.
func loopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	} else {
		host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	}
	return strings.EqualFold(host, "localhost") || host == "127.0.0.1" || host == "::1"
}
