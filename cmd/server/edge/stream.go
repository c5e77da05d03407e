package edge

import (
	"net/http"
	"net/url"
	"strings"

	"messages/models"
)

// Long-lived streams (GraphQL subscriptions over WebSocket or Server-Sent Events) pass
// the edge differently from requests: no request deadline or byte budget (their
// transport gives each operation one, Gate.Operation), no compression, and the server's
// read and write timeouts lifted by the transport once the stream is authenticated; a
// WebSocket is authenticated by its first message, not a header, and its origin is
// checked here instead of by CORS.

// WebSocket reports whether r asks to upgrade to a WebSocket.
func WebSocket(r *http.Request) bool {
	return r.Method == http.MethodGet && strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
}

// EventStream reports whether r asks for a stream of Server-Sent Events.
func EventStream(r *http.Request) bool {
	return r.Method == http.MethodPost && strings.Contains(r.Header.Get("Accept"), "text/event-stream")
}

// Streaming reports whether r opens a long-lived stream.
func Streaming(r *http.Request) bool { return WebSocket(r) || EventStream(r) }

// WebSocketOrigins refuses, with 403, a WebSocket upgrade a browser sends from an
// origin that is neither the server's own nor allowed: a cross-site page could
// otherwise open a socket with the user's ambient credentials, and CORS does not cover
// WebSockets. Clients that send no Origin (not browsers) pass.
func WebSocketOrigins(allowed func(origin string) bool, errs ErrorWriter) Middleware {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			origin := r.Header.Get("Origin")
			if !WebSocket(r) || origin == "" || sameOrigin(origin, r.Host) || (allowed != nil && allowed(origin)) {
				next.ServeHTTP(w, r)
				return
			}
			errs.WriteError(w, r, models.Errorf(models.EFORBIDDEN, "WebSocket connections from origin %s are not allowed", origin))
		})
	}
}

func sameOrigin(origin, host string) bool {
	u, err := url.Parse(origin)
	return err == nil && u.Host != "" && strings.EqualFold(u.Host, host)
}
