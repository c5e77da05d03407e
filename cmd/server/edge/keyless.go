package edge

import (
	"net"
	"net/http"
	"strconv"
)

// KeylessBodyBytes bounds the body of a keyless request: a session request is an
// identifier, a hash and a subscriber's profile.
const KeylessBodyBytes = 16 << 10

// Keyless guards the requests a mount authenticates itself (Mount.Keyless), which carry
// no credential the edge knows: the platform's inbox clients open their session from a
// browser with an HMAC of the subscriber keyed by an API key the browser never holds.
// They have no caller yet, so no per-caller limit applies; instead each takes a token of
// its client address's bucket in l (429 with Retry-After when it is empty), and its body
// must be JSON of at most KeylessBodyBytes. A nil limiter refuses every such request, so
// a wiring mistake fails closed.
func Keyless(l *RateLimiter, errs ErrorWriter) Middleware {
	return func(next http.Handler) http.Handler {
		return chain(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if l == nil {
				errs.WriteError(w, r, &StatusError{http.StatusServiceUnavailable, "this server takes no requests without a credential"})
				return
			}
			if d, ok := l.take(r.Context(), "address/"+ClientAddress(r), 1); ok {
				d.setHeaders(w.Header())
				if !d.allowed {
					w.Header().Set("Retry-After", strconv.FormatInt(max(ceilSeconds(d.retryAfter), 1), 10))
					closeUnread(w, r)
					errs.WriteError(w, r, l.refusal(d, "this client address"))
					return
				}
			}
			next.ServeHTTP(w, r)
		}), JSONMediaType(errs), BodyLimit(KeylessBodyBytes))
	}
}

// ClientAddress is the address the request's connection comes from, without its port:
// behind a proxy, the proxy's.
func ClientAddress(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
