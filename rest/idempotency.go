package rest

import (
	"encoding/json"
	"messages/models"
	"net/http"
	"net/url"
	"strings"
)

// markActionPattern is the one /v1 route that changes anything.
const markActionPattern = "POST /v1/subscribers/{subscriberId}/messages/{messageId}/actions/{type}"

// IdempotencyPolicy tells the edge's idempotency guard which /v1 requests take an
// Idempotency-Key (a mark: the one route that changes anything) and what identifies one.
type IdempotencyPolicy struct{ routes *http.ServeMux }

// NewIdempotencyPolicy returns the /v1 idempotency policy.
func NewIdempotencyPolicy() IdempotencyPolicy {
	routes := http.NewServeMux()
	routes.Handle(markActionPattern, http.NotFoundHandler())
	return IdempotencyPolicy{routes: routes}
}

// Fingerprint identifies a mark by its route, method, path segments and body as
// canonical JSON, so whitespace and key order do not make a retry a different request.
// Other routes change nothing, so the key does not apply to them.
func (p IdempotencyPolicy) Fingerprint(r *http.Request, body []byte) (parts []string, applies bool) {
	if _, pattern := p.routes.Handler(r); pattern != markActionPattern {
		return nil, false
	}
	return restFingerprint(r, body), true
}

// Ran reports that every 2xx of /v1 means the request ran.
func (IdempotencyPolicy) Ran([]byte) bool { return true }

// restFingerprint is the parts that identify a mark.
func restFingerprint(r *http.Request, body []byte) []string {
	return []string{markActionPattern, r.Method, pathSegments(r.URL), string(models.CanonicalJSON(body))}
}

// pathSegments is the path as a JSON list of its unescaped segments, so that "a%2Fb" in
// one segment differs from "a" and "b" in two.
func pathSegments(u *url.URL) string {
	segments := strings.Split(u.EscapedPath(), "/")
	for n, s := range segments {
		if v, err := url.PathUnescape(s); err == nil {
			segments[n] = v
		}
	}
	b, _ := json.Marshal(segments)
	return string(b)
}
