package edge_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"messages/cmd/server/edge"
	"messages/rest"
)

// Only loopback names pass: a rebound DNS name is 403.
func TestLoopbackHost(t *testing.T) {
	h := hygieneEdge(nil, edge.LoopbackHost(rest.NewErrorWriter(slog.New(slog.DiscardHandler), time.Now))(noContent))
	for host, allowed := range map[string]bool{
		"localhost": true, "localhost:8080": true, "LOCALHOST:8080": true, "127.0.0.1": true, "127.0.0.1:8080": true,
		"[::1]": true, "[::1]:8080": true,
		"evil.example": false, "evil.example:8080": false, "localhost.evil.example": false, "127.0.0.2:8080": false,
		"10.0.0.1:8080": false, "": false,
	} {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.Host = host
		rec, body := serve(t, h, req)
		if got := rec.Code == http.StatusNoContent; got != allowed {
			t.Errorf("Host %q: %d, want allowed %v", host, rec.Code, allowed)
		}
		if !allowed && (rec.Code != http.StatusForbidden || body.Message == "") {
			t.Errorf("Host %q: %d %s, want 403 with the error body", host, rec.Code, rec.Body.String())
		}
	}
}
