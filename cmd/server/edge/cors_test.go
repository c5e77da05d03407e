package edge_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"messages/cmd/server/edge"
)

// A preflight from an origin not allowed is 403 before any mount, with no
// Access-Control-Allow header, whether or not CORS is set; other requests pass.
func TestRefusePreflights(t *testing.T) {
	allowed := edge.CORSOptions{AllowedOrigins: []string{"https://app.example.com"}}.Allows()
	for name, origins := range map[string]func(string) bool{"noOriginsAllowed": nil, "oneOriginAllowed": allowed} {
		t.Run(name, func(t *testing.T) {
			h := hygieneEdge(origins, noContent)
			req := httptest.NewRequest(http.MethodOptions, "/m/x", nil)
			req.Header.Set("Origin", "https://evil.example.net")
			req.Header.Set("Access-Control-Request-Method", http.MethodPost)
			rec, body := serve(t, h, req)
			if rec.Code != http.StatusForbidden || body.StatusCode != http.StatusForbidden || rec.Header().Get("Access-Control-Allow-Origin") != "" {
				t.Errorf("preflight from a refused origin: %d %v %s, want 403 without CORS headers", rec.Code, rec.Header(), rec.Body.String())
			}
			plain := httptest.NewRequest(http.MethodOptions, "/x", nil)
			plain.Header.Set("Origin", "https://evil.example.net")
			if rec, _ := serve(t, h, plain); rec.Code != http.StatusNoContent {
				t.Errorf("OPTIONS that is no preflight: %d, want it served", rec.Code)
			}
		})
	}
	req := httptest.NewRequest(http.MethodOptions, "/x", nil)
	req.Header.Set("Origin", "https://app.example.com")
	req.Header.Set("Access-Control-Request-Method", http.MethodPost)
	if rec, _ := serve(t, hygieneEdge(allowed, noContent), req); rec.Code != http.StatusNoContent {
		t.Errorf("preflight from an allowed origin: %d, want it passed on", rec.Code)
	}
}
