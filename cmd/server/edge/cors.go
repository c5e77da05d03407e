package edge

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/rs/cors"

	"messages/models"
)

// CORSOptions say which browser origins may call the APIs.
type CORSOptions struct {
	// AllowedOrigins are exact origins ("https://app.example.com"); "*" allows any.
	AllowedOrigins []string
	// AllowLocalhost also allows any port of http://localhost and http://127.0.0.1, the
	// origins of a frontend in development.
	AllowLocalhost bool
}

// CORS answers cross-origin requests from the allowed origins, for the methods and
// headers of both APIs' clients (the inbox client's PATCH and DELETE and its Novu-*
// headers among them): a preflight gets 204
// before authentication runs (a browser sends no credentials with it), and real
// responses carry Access-Control-Allow-Origin and the headers a client reads (rate
// limits, Retry-After, the request id, idempotent replays, a GET's ETag). Every response says
// Vary: Origin. Other origins get no Access-Control header, so the browser refuses them.
// It returns nil, no guard, when no origin is allowed: RefusePreflights, which Edge.Around
// always composes, answers their preflights.
func CORS(o CORSOptions) Middleware {
	if len(o.AllowedOrigins) == 0 && !o.AllowLocalhost {
		return nil
	}
	c := cors.New(cors.Options{
		AllowOriginFunc: o.Allows(),
		AllowedMethods:  []string{http.MethodGet, http.MethodPost, http.MethodHead, http.MethodPatch, http.MethodDelete},
		// The platform's inbox client (@novu/js) sends its API and client versions on
		// every request, and its application identifier in keyless mode.
		AllowedHeaders: []string{"Authorization", "Content-Type", "Idempotency-Key", "X-Request-Id", "If-None-Match",
			"Novu-API-Version", "Novu-Client-Version", "Novu-Application-Identifier"},
		ExposedHeaders:       []string{"RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset", "Retry-After", "X-Request-Id", "Idempotency-Replay", "ETag"},
		MaxAge:               600,
		OptionsSuccessStatus: http.StatusNoContent,
	})
	return c.Handler
}

// RefusePreflights answers 403, written by errs, to a CORS preflight (OPTIONS with Origin
// and Access-Control-Request-Method) from an origin allowed refuses (nil refuses every
// origin), with no Access-Control-Allow header: such a preflight never reaches a mount's
// authentication, whether or not any origin is allowed. Preflights from allowed origins
// pass on to CORS.
func RefusePreflights(allowed func(origin string) bool, errs ErrorWriter) Middleware {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			origin := r.Header.Get("Origin")
			if r.Method == http.MethodOptions && origin != "" && r.Header.Get("Access-Control-Request-Method") != "" &&
				(allowed == nil || !allowed(origin)) {
				w.Header().Add("Vary", "Origin")
				errs.WriteError(w, r, models.Errorf(models.EFORBIDDEN,
					"this origin may not call the API: cross-origin requests are answered only for the origins the server allows"))
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// Allows returns the test of an origin against o, for CORS and for WebSocket upgrades.
func (o CORSOptions) Allows() func(origin string) bool {
	exact := map[string]bool{}
	anyOrigin := false
	for _, origin := range o.AllowedOrigins {
		origin = strings.TrimSuffix(strings.TrimSpace(origin), "/")
		anyOrigin = anyOrigin || origin == "*"
		exact[strings.ToLower(origin)] = true
	}
	return func(origin string) bool {
		return anyOrigin || exact[strings.ToLower(origin)] || (o.AllowLocalhost && isLocalhost(origin))
	}
}

// isLocalhost reports whether origin is http://localhost or http://127.0.0.1 on any port.
func isLocalhost(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Scheme != "http" || u.Path != "" || u.User != nil {
		return false
	}
	host := u.Hostname()
	return host == "localhost" || host == "127.0.0.1"
}

// ParseOrigins reads a comma-separated list of origins, as CORS_ALLOWED_ORIGINS holds it.
func ParseOrigins(list string) []string {
	var out []string
	for _, o := range strings.Split(list, ",") {
		if o = strings.TrimSpace(o); o != "" {
			out = append(out, o)
		}
	}
	return out
}
