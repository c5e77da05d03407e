package edge_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"messages/cmd/server/edge"
)

// Methods other than those allowed, OPTIONS and HEAD are 405 with Allow, written by the
// mount's writer after authentication.
func TestMethods(t *testing.T) {
	h := hygieneEdge(nil, edge.Methods(http.MethodGet, http.MethodPost)(noContent))
	for _, tt := range []struct {
		name, method, key string
		status            int
	}{
		{"methods204Get", http.MethodGet, "good", http.StatusNoContent},
		{"methods204Post", http.MethodPost, "good", http.StatusNoContent},
		{"methods204Options", http.MethodOptions, "good", http.StatusNoContent},
		{"methods204Head", http.MethodHead, "good", http.StatusNoContent},
		{"methods405Put", http.MethodPut, "good", http.StatusMethodNotAllowed},
		{"methods405Delete", http.MethodDelete, "good", http.StatusMethodNotAllowed},
		{"methods405Patch", http.MethodPatch, "good", http.StatusMethodNotAllowed},
		{"methods405Other", "PROPFIND", "good", http.StatusMethodNotAllowed},
		{"methods401PutWithoutKey", http.MethodPut, "", http.StatusUnauthorized},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(tt.method, "/m/x", nil)
			if tt.key != "" {
				req.Header.Set("Authorization", "ApiKey "+tt.key)
			}
			rec, body := serve(t, h, req)
			if rec.Code != tt.status {
				t.Fatalf("%d %s, want %d", rec.Code, rec.Body.String(), tt.status)
			}
			if tt.status == http.StatusMethodNotAllowed {
				if rec.Header().Get("Allow") != "GET, POST" || body.Errors == nil {
					t.Errorf("Allow %q, body %s: want GET, POST and the mount's body", rec.Header().Get("Allow"), rec.Body.String())
				}
			}
		})
	}
}
