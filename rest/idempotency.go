package rest

import (
	"encoding/json"
	"messages/models"
	"net/http"
	"net/url"
	"strings"
)

// The /v1 routes that change anything: a call-to-action's mark, and the marks of read
// and seen (v1marks.go). Mark-all is not keyed: a keyed request runs in the
// transaction that stores its answer, where a change of all messages can only be
// queued as a job (202), and @novu/api sends a key with every request. Repeating it is
// safe without one: a repeat changes nothing.
const (
	markActionPattern = "POST /v1/subscribers/{subscriberId}/messages/{messageId}/actions/{type}"
	markAllPattern    = "POST /v1/subscribers/{subscriberId}/messages/mark-all"
	markAsPattern     = "POST /v1/subscribers/{subscriberId}/messages/mark-as"
	markByMarkPattern = "POST /v1/subscribers/{subscriberId}/messages/markAs"
)

// IdempotencyPolicy tells the edge's idempotency guard which /v1 requests take an
// Idempotency-Key (the marks of named messages and the deletes) and what identifies one.
type IdempotencyPolicy struct{ routes *http.ServeMux }

// NewIdempotencyPolicy returns the /v1 idempotency policy.
func NewIdempotencyPolicy() IdempotencyPolicy {
	routes := http.NewServeMux()
	for _, pattern := range []string{markActionPattern, markAsPattern, markByMarkPattern, deleteMessagePattern, deleteTransactionPattern} {
		routes.Handle(pattern, http.NotFoundHandler())
	}
	return IdempotencyPolicy{routes: routes}
}

// Fingerprint identifies a request that changes messages by its route, method, path
// segments and body as canonical JSON, so whitespace and key order do not make a retry a
// different request (a delete's query, its channel, is part of it). Other routes change
// nothing, so the key does not apply to them.
func (p IdempotencyPolicy) Fingerprint(r *http.Request, body []byte) (parts []string, applies bool) {
	_, pattern := p.routes.Handler(r)
	switch pattern {
	case "":
		return nil, false
	case deleteMessagePattern, deleteTransactionPattern:
		return []string{pattern, r.Method, pathSegments(r.URL), r.URL.RawQuery}, true
	}
	return restFingerprint(pattern, r, body), true
}

// Ran reports that every 2xx of /v1 means the request ran.
func (IdempotencyPolicy) Ran([]byte) bool { return true }

// restFingerprint is the parts that identify a mark of the route pattern.
func restFingerprint(pattern string, r *http.Request, body []byte) []string {
	return []string{pattern, r.Method, pathSegments(r.URL), string(models.CanonicalJSON(body))}
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
