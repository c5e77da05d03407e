package edge_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"messages/cmd/server/edge"
)

// The requests a mount authenticates itself pass without a credential, but only through
// the Keyless guard: one token of their client address's bucket each (another address
// has its own), a JSON body of at most KeylessBodyBytes; without a limiter they are
// refused. Every other request of the mount still needs a credential.
func TestKeyless(t *testing.T) {
	now := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	limiter, err := edge.NewRateLimiter(edge.RateLimitOptions{Rate: 1.0 / 3600, Burst: 2, Now: func() time.Time { return now }}, nil)
	if err != nil {
		t.Fatal(err)
	}
	read := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			w.WriteHeader(http.StatusRequestEntityTooLarge)
			return
		}
		w.WriteHeader(http.StatusCreated)
	})
	keyless := func(r *http.Request) bool { return r.URL.Path == "/m/open" && r.Header.Get("Authorization") == "" }
	mount := func(l *edge.RateLimiter) http.Handler {
		e := edge.New(edge.Options{Logger: slog.New(slog.DiscardHandler), Now: time.Now, Auth: keys{}, AddressLimiter: l, Errors: namedErrors("edge")})
		return e.API(edge.Mount{Errors: namedErrors("m"), Keyless: keyless}, read)
	}
	h := mount(limiter)
	send := func(path, addr, contentType, body string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
		req.RemoteAddr = addr
		req.Header.Set("Content-Type", contentType)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	for i, tt := range []struct {
		name, path, addr, contentType, body string
		status                              int
	}{
		{"keyless201", "/m/open", "192.0.2.1:1000", "application/json", "{}", 201},
		{"keyless201OtherPort", "/m/open", "192.0.2.1:2000", "application/json", "{}", 201},
		{"keyless429SameAddress", "/m/open", "192.0.2.1:3000", "application/json", "{}", 429},
		{"keyless201OtherAddress", "/m/open", "192.0.2.2:1000", "application/json", "{}", 201},
		{"keyless415NotJSON", "/m/open", "192.0.2.3:1000", "text/plain", "{}", 415},
		{"keyless413Large", "/m/open", "192.0.2.4:1000", "application/json", strings.Repeat(" ", edge.KeylessBodyBytes+1), 413},
		{"other401", "/m/else", "192.0.2.5:1000", "application/json", "{}", 401},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := send(tt.path, tt.addr, tt.contentType, tt.body)
			if rec.Code != tt.status {
				t.Fatalf("request %d: %d %q, want %d", i, rec.Code, rec.Body.String(), tt.status)
			}
			if tt.status == 429 && (rec.Header().Get("Retry-After") == "" || rec.Body.String() != "m") {
				t.Errorf("429 without Retry-After or not written by the mount: %v %q", rec.Header(), rec.Body.String())
			}
		})
	}
	h = mount(nil)
	if rec := send("/m/open", "192.0.2.9:1000", "application/json", "{}"); rec.Code != http.StatusServiceUnavailable {
		t.Errorf("without an address limiter: %d, want 503", rec.Code)
	}
}
