package main

import (
	"io"
	"messages/models/store"
	"net/http"
	"os"
	"strings"
	"testing"
)

// corsRequest sends method to path from origin; a preflight asks for a POST with the
// headers a GraphQL client sends.
func corsRequest(t *testing.T, base, method, path, origin, key string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Origin", origin)
	if method == http.MethodOptions {
		req.Header.Set("Access-Control-Request-Method", http.MethodPost)
		req.Header.Set("Access-Control-Request-Headers", "authorization,content-type,idempotency-key")
	}
	if key != "" {
		req.Header.Set("Authorization", "ApiKey "+key)
	}
	res, err := e2eClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res
}

// preflightRefused expects a preflight from origin to be 403 with the documented error
// body and no Access-Control-Allow header: answered before authentication, not 401.
func preflightRefused(t *testing.T, base, path, origin string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodOptions, base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Origin", origin)
	req.Header.Set("Access-Control-Request-Method", http.MethodPost)
	req.Header.Set("Access-Control-Request-Headers", "authorization,content-type")
	res, err := e2eClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	for k := range res.Header {
		if strings.HasPrefix(k, "Access-Control-Allow-") {
			t.Errorf("refused preflight carries %s: %v", k, res.Header)
		}
	}
	refused(http.StatusForbidden, "")(t, path, e2eReply{status: res.StatusCode, header: res.Header, body: body})
}

func TestCORS(t *testing.T) {
	w := newSessionWorld(t, store.DialectSQLite, "--cors-allowed-origins", "https://app.example.com, https://admin.example.com")
	for _, path := range []string{"/graphql", "/v1/messages", "/v1/inbox/session"} {
		t.Run("preflight204AllowedOrigin"+path, func(t *testing.T) {
			res := corsRequest(t, w.srv.base, http.MethodOptions, path, "https://app.example.com", "")
			allowHeaders := strings.ToLower(res.Header.Get("Access-Control-Allow-Headers"))
			if res.StatusCode != http.StatusNoContent || res.Header.Get("Access-Control-Allow-Origin") != "https://app.example.com" ||
				!strings.Contains(allowHeaders, "authorization") || !strings.Contains(allowHeaders, "idempotency-key") ||
				!strings.Contains(strings.Join(res.Header.Values("Vary"), ","), "Origin") {
				t.Errorf("preflight: %d %v", res.StatusCode, res.Header)
			}
		})
		t.Run("preflight403RefusedOrigin"+path, func(t *testing.T) {
			preflightRefused(t, w.srv.base, path, "https://evil.example.net")
		})
	}
	t.Run("get200AllowedOriginExposesHeaders", func(t *testing.T) {
		res := corsRequest(t, w.srv.base, http.MethodGet, "/v1/messages", "https://admin.example.com", w.key)
		exposed := strings.ToLower(res.Header.Get("Access-Control-Expose-Headers"))
		for _, h := range []string{"ratelimit-limit", "ratelimit-remaining", "ratelimit-reset", "retry-after", "x-request-id", "idempotency-replay", "etag"} {
			if !strings.Contains(exposed, h) {
				t.Errorf("Access-Control-Expose-Headers %q lacks %s", exposed, h)
			}
		}
		if res.StatusCode != http.StatusOK || res.Header.Get("Access-Control-Allow-Origin") != "https://admin.example.com" {
			t.Errorf("GET: %d, Allow-Origin %q", res.StatusCode, res.Header.Get("Access-Control-Allow-Origin"))
		}
	})
	t.Run("get200RefusedOriginNoCORSHeaders", func(t *testing.T) {
		res := corsRequest(t, w.srv.base, http.MethodGet, "/v1/messages", "https://evil.example.net", w.key)
		if res.Header.Get("Access-Control-Allow-Origin") != "" || !strings.Contains(strings.Join(res.Header.Values("Vary"), ","), "Origin") {
			t.Errorf("GET from a refused origin: Allow-Origin %q, Vary %q", res.Header.Get("Access-Control-Allow-Origin"), res.Header.Values("Vary"))
		}
	})
	t.Run("get401StillCarriesCORS", func(t *testing.T) {
		// A browser can read why it was refused.
		res := corsRequest(t, w.srv.base, http.MethodGet, "/v1/messages", "https://app.example.com", "")
		if res.StatusCode != http.StatusUnauthorized || res.Header.Get("Access-Control-Allow-Origin") != "https://app.example.com" {
			t.Errorf("401: %d, Allow-Origin %q", res.StatusCode, res.Header.Get("Access-Control-Allow-Origin"))
		}
	})
	t.Run("localhostRefusedInProduction", func(t *testing.T) {
		res := corsRequest(t, w.srv.base, http.MethodOptions, "/graphql", "http://localhost:3000", "")
		if res.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("production allowed a localhost origin it was not given")
		}
	})
}

// The platform's inbox client, from an allowed origin, may send every method and header
// it uses: its preflights for PATCH and DELETE with its Novu-* headers are allowed, and
// its keyless session's answer carries the CORS headers too.
func TestCORSInboxClient(t *testing.T) {
	w := newSessionWorld(t, store.DialectSQLite, "--cors-allowed-origins", "https://app.example.com")
	for _, method := range []string{http.MethodGet, http.MethodPost, http.MethodPatch, http.MethodDelete} {
		t.Run("preflight204"+method, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodOptions, w.srv.base+"/v1/inbox/notifications/0123456789abcdef01234567/read", nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Origin", "https://app.example.com")
			req.Header.Set("Access-Control-Request-Method", method)
			// Sorted and lower-cased, as browsers send it.
			req.Header.Set("Access-Control-Request-Headers", "authorization,content-type,novu-api-version,novu-application-identifier,novu-client-version")
			res, err := e2eClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			allowHeaders := strings.ToLower(res.Header.Get("Access-Control-Allow-Headers"))
			if res.StatusCode != http.StatusNoContent || res.Header.Get("Access-Control-Allow-Origin") != "https://app.example.com" ||
				!strings.Contains(res.Header.Get("Access-Control-Allow-Methods"), method) {
				t.Fatalf("preflight: %d %v", res.StatusCode, res.Header)
			}
			for _, h := range []string{"novu-api-version", "novu-client-version", "novu-application-identifier", "authorization", "content-type"} {
				if !strings.Contains(allowHeaders, h) {
					t.Errorf("Access-Control-Allow-Headers %q lacks %s", allowHeaders, h)
				}
			}
		})
	}
	t.Run("keylessSession401CarriesCORS", func(t *testing.T) {
		req, err := http.NewRequest(http.MethodPost, w.srv.base+"/v1/inbox/session",
			strings.NewReader(`{"applicationIdentifier":"nosuchapp000","subscriberHash":"00","subscriber":{"subscriberId":"ada"}}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Origin", "https://app.example.com")
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Novu-API-Version", "2024-06-26")
		res, err := e2eClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusUnauthorized || res.Header.Get("Access-Control-Allow-Origin") != "https://app.example.com" {
			t.Errorf("keyless session: %d, Allow-Origin %q", res.StatusCode, res.Header.Get("Access-Control-Allow-Origin"))
		}
	})
}

// In production without CORS_ALLOWED_ORIGINS every preflight is refused with 403 before
// authentication; requests with a key still work and carry no CORS header.
func TestCORSProductionWithoutOrigins(t *testing.T) {
	w := newSessionWorld(t, store.DialectSQLite)
	for _, path := range []string{"/graphql", "/v1/messages", "/v1/inbox/session"} {
		t.Run("preflight403"+path, func(t *testing.T) {
			preflightRefused(t, w.srv.base, path, "https://app.example.com")
		})
	}
	t.Run("get200NoCORSHeaders", func(t *testing.T) {
		res := corsRequest(t, w.srv.base, http.MethodGet, "/v1/messages", "https://app.example.com", w.key)
		if res.StatusCode != http.StatusOK || res.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("GET: %d, Allow-Origin %q", res.StatusCode, res.Header.Get("Access-Control-Allow-Origin"))
		}
	})
}

// In development any http://localhost and http://127.0.0.1 origin may call the APIs, and
// nothing else unless configured.
func TestCORSDevelopmentAllowsLocalhost(t *testing.T) {
	t.Chdir(t.TempDir())
	t.Setenv("DATABASE_URL", "")
	os.Unsetenv("DATABASE_URL")
	t.Setenv("APP_ENV", "development")
	srv := start(t)
	for origin, allowed := range map[string]bool{
		"http://localhost:3000": true, "http://127.0.0.1:5173": true, "http://localhost": true,
		"https://localhost:3000": false, "http://localhost.evil.net": false, "http://example.com": false,
	} {
		res := corsRequest(t, srv.base, http.MethodOptions, "/graphql", origin, "")
		if got := res.Header.Get("Access-Control-Allow-Origin") == origin; got != allowed {
			t.Errorf("origin %s: allowed %v, want %v", origin, got, allowed)
		}
	}
}
