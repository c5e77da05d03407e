package edge_test

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"messages/cmd/server/edge"
	"messages/models"
	"messages/models/dbtest"
	"messages/rest"
)

// clock is the fixed time of the tests' guards.
var clock = time.Date(2025, 3, 1, 9, 30, 15, 250_000_000, time.UTC)

// v1Errors is the /v1 error writer on the fixed clock, as the /v1 mount injects it.
func v1Errors() rest.ErrorWriter {
	return rest.NewErrorWriter(slog.New(slog.DiscardHandler), func() time.Time { return clock })
}

// TestRateLimitOptionsInvalid: nonsense settings fail at start, without echoing a Redis
// password.
func TestRateLimitOptionsInvalid(t *testing.T) {
	for name, o := range map[string]edge.RateLimitOptions{
		"negativeRate":  {Rate: -1},
		"negativeBurst": {Burst: -1},
		"badRedisURL":   {RedisURL: "http://:s3cret@example.com"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := edge.NewRateLimiter(o, slog.New(slog.DiscardHandler))
			if err == nil {
				t.Fatal("no error")
			}
			if strings.Contains(err.Error(), "s3cret") {
				t.Errorf("error shows the password: %v", err)
			}
		})
	}
}

// envAPI serves only the limiter, behind a stand-in for authentication that takes the
// environment from X-Environment, so a test can be thousands of tenants cheaply.
func envAPI(t testing.TB, o edge.RateLimitOptions) (*httptest.Server, *edge.RateLimiter) {
	t.Helper()
	l, err := edge.NewRateLimiter(o, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	limited := edge.RateLimit(l, nil, v1Errors())(ok)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		caller := models.Caller{EnvironmentID: r.Header.Get("X-Environment")}
		limited.ServeHTTP(w, r.WithContext(models.WithCaller(r.Context(), caller)))
	}))
	t.Cleanup(srv.Close)
	return srv, l
}

func envGet(t testing.TB, srv *httptest.Server, env string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
	req.Header.Set("X-Environment", env)
	res, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// TestRateLimitEvictsIdleEnvironments: buckets that have filled up again are dropped, so
// the in-process map holds only the environments seen lately; one still empty is kept
// and stays refused.
func TestRateLimitEvictsIdleEnvironments(t *testing.T) {
	clk := dbtest.NewClock(clock)
	srv, l := envAPI(t, edge.RateLimitOptions{Rate: 1, Burst: 2, Now: clk.Now})
	envGet(t, srv, "hot")
	envGet(t, srv, "hot")
	for i := range 1000 {
		if status := envGet(t, srv, fmt.Sprintf("env-%d", i)); status != http.StatusNoContent {
			t.Fatalf("env-%d: status %d, want 204", i, status)
		}
	}
	if n := l.Environments(); n != 1001 {
		t.Fatalf("Environments() = %d, want 1001", n)
	}
	if status := envGet(t, srv, "hot"); status != http.StatusTooManyRequests {
		t.Errorf("hot: status %d after 1000 others, want 429 (its bucket kept)", status)
	}

	clk.Advance(2 * time.Second) // burst / rate: every bucket is full again
	envGet(t, srv, "new")
	if n := l.Environments(); n != 1 {
		t.Errorf("Environments() = %d once the others were idle, want 1", n)
	}
}

// TestRateLimitBoundedEnvironments: past MaxEnvironments the least recently used bucket
// goes, even within the refill time.
func TestRateLimitBoundedEnvironments(t *testing.T) {
	srv, l := envAPI(t, edge.RateLimitOptions{Rate: 1, Burst: 2, MaxEnvironments: 100, Now: dbtest.NewClock(clock).Now})
	for i := range 1000 {
		envGet(t, srv, fmt.Sprintf("env-%d", i))
		if n := l.Environments(); n > 100 {
			t.Fatalf("Environments() = %d after %d environments, want at most 100", n, i+1)
		}
	}
}

// TestRateLimitWithoutCallerFailsClosed: the limiter wired outside authentication
// refuses with 401 rather than limiting nobody.
func TestRateLimitWithoutCallerFailsClosed(t *testing.T) {
	l, err := edge.NewRateLimiter(edge.RateLimitOptions{}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	edge.RateLimit(l, nil, v1Errors())(http.NotFoundHandler()).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/v1/messages", nil))
	if rec.Code != http.StatusUnauthorized {
		t.Errorf("status %d, want 401", rec.Code)
	}
}
