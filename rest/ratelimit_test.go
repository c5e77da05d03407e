package rest_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"

	"messages/cmd/server/edge"
	"messages/graph"
	"messages/models/dbtest"
	"messages/models/store"
	"messages/rest"
)

// limitedAPI is newAPI's routes with the rate limiter inside authentication, as
// cmd/server wires them.
type limitedAPI struct {
	*api
	limiter *edge.RateLimiter
}

// newLimitedAPI serves /v1 and /graphql over s, limited by a limiter built from o.
func newLimitedAPI(t testing.TB, s *store.Store, o edge.RateLimitOptions) *limitedAPI {
	t.Helper()
	log := &logBuffer{}
	logger := slog.New(slog.NewTextHandler(log, nil))
	l, err := edge.NewRateLimiter(o, logger)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	res := rest.NewBackend(s, logger, func() time.Time { return clock }, nil)
	srv := httptest.NewServer(rest.Chain(res, rest.ChainOptions{Limiter: l, GraphQL: graph.HandlerOptions{Limits: graph.DefaultLimits}}))
	t.Cleanup(srv.Close)
	return &limitedAPI{api: &api{srv: srv, store: s, log: log}, limiter: l}
}

// limitHeaders are the rate-limit fields of a response; absent ones are "".
type limitHeaders struct{ Limit, Remaining, Reset, RetryAfter string }

func limitsOf(res response) limitHeaders {
	return limitHeaders{
		Limit:      res.header.Get("RateLimit-Limit"),
		Remaining:  res.header.Get("RateLimit-Remaining"),
		Reset:      res.header.Get("RateLimit-Reset"),
		RetryAfter: res.header.Get("Retry-After"),
	}
}

// tooMany checks a 429: the error body (GraphQL-flavoured on /graphql) with its message.
func tooMany(t testing.TB, res response, path string, graphqlStyle bool) {
	t.Helper()
	if !graphqlStyle {
		body := errorBody(t, res, http.StatusTooManyRequests, path)
		if msg := body["message"].(string); !strings.Contains(msg, "rate limit exceeded") {
			t.Errorf("message = %q, want it to say the rate limit was exceeded", msg)
		}
		return
	}
	if res.status != http.StatusTooManyRequests {
		t.Fatalf("status = %d, want 429; body %s", res.status, res.body)
	}
	noNulls(t, res.body)
	var body struct {
		StatusCode int             `json:"statusCode"`
		Path       string          `json:"path"`
		Timestamp  string          `json:"timestamp"`
		Error      string          `json:"error"`
		Message    string          `json:"message"`
		Data       json.RawMessage `json:"data"`
		Errors     []struct {
			Message    string            `json:"message"`
			Extensions map[string]string `json:"extensions"`
		} `json:"errors"`
	}
	if err := json.Unmarshal(res.body, &body); err != nil {
		t.Fatal(err)
	}
	want := []any{429, path, clockText, "Too Many Requests", true}
	got := []any{body.StatusCode, body.Path, body.Timestamp, body.Error, strings.Contains(body.Message, "rate limit exceeded")}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("error body (-want +got):\n%s\nbody %s", diff, res.body)
	}
	if len(body.Errors) != 1 || body.Errors[0].Message != body.Message || body.Errors[0].Extensions["code"] == "" || body.Data != nil {
		t.Errorf("want one GraphQL error with the message and an extensions.code, no data: %s", res.body)
	}
}

const gqlCount = `{ messages { totalCount } }`

// TestRateLimitHeadersAndRefusal: each answer counts the bucket down; burst+1 requests in
// one instant get 429 with Retry-After and the error body; a second later one token is
// back. /v1 and /graphql draw from the same bucket.
func TestRateLimitHeadersAndRefusal(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		tn := dbtest.NewTenant(t, s, "acme")
		clk := dbtest.NewClock(clock)
		a := newLimitedAPI(t, s, edge.RateLimitOptions{Rate: 1, Burst: 3, Now: clk.Now})
		const uri = "/v1/messages?limit=1"

		var got []limitHeaders
		for range 3 {
			res := a.get(t, tn.Key, uri)
			if res.status != http.StatusOK {
				t.Fatalf("status %d, want 200; body %s", res.status, res.body)
			}
			got = append(got, limitsOf(res))
		}
		res := a.get(t, tn.Key, uri)
		tooMany(t, res, uri, false)
		got = append(got, limitsOf(res))
		res = a.graphql(t, tn.Key, gqlCount, nil)
		tooMany(t, res, "/graphql", true)
		got = append(got, limitsOf(res))

		clk.Advance(time.Second)
		res = a.graphql(t, tn.Key, gqlCount, nil)
		if res.status != http.StatusOK {
			t.Fatalf("after a second: status %d, want 200; body %s", res.status, res.body)
		}
		got = append(got, limitsOf(res))

		want := []limitHeaders{
			{"3", "2", "1", ""},
			{"3", "1", "2", ""},
			{"3", "0", "3", ""},
			{"3", "0", "3", "1"},
			{"3", "0", "3", "1"},
			{"3", "0", "3", ""},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("rate-limit headers per request (-want +got):\n%s", diff)
		}
		if n := a.limiter.Refused(); n != 2 {
			t.Errorf("Refused() = %d, want 2", n)
		}
	})
}

// TestRateLimitRetryAfterRoundsUp: a refusal waits whole seconds, at least one, for the
// next token, however slow the rate.
func TestRateLimitRetryAfterRoundsUp(t *testing.T) {
	s := dbtest.Open(t, store.DialectSQLite)
	tn := dbtest.NewTenant(t, s, "acme")
	clk := dbtest.NewClock(clock)
	a := newLimitedAPI(t, s, edge.RateLimitOptions{Rate: 0.4, Burst: 1, Now: clk.Now})
	if res := a.get(t, tn.Key, "/v1/messages"); res.status != http.StatusOK {
		t.Fatalf("status %d, want 200", res.status)
	}
	clk.Advance(time.Second) // 1.5 s until the next token
	res := a.get(t, tn.Key, "/v1/messages")
	tooMany(t, res, "/v1/messages", false)
	if diff := cmp.Diff(limitHeaders{"1", "0", "2", "2"}, limitsOf(res)); diff != "" {
		t.Errorf("headers (-want +got):\n%s", diff)
	}
}

// TestRateLimitDefaults: zero options mean 50 per second with a burst of 100.
func TestRateLimitDefaults(t *testing.T) {
	s := dbtest.Open(t, store.DialectSQLite)
	tn := dbtest.NewTenant(t, s, "acme")
	a := newLimitedAPI(t, s, edge.RateLimitOptions{})
	res := a.get(t, tn.Key, "/v1/messages")
	if res.status != http.StatusOK {
		t.Fatalf("status %d, want 200", res.status)
	}
	// 20 ms to refill one token rounds up to a second.
	if diff := cmp.Diff(limitHeaders{"100", "99", "1", ""}, limitsOf(res)); diff != "" {
		t.Errorf("headers (-want +got):\n%s", diff)
	}
}

// TestRateLimitEnvironmentsIndependent: one tenant spending its bucket leaves another's
// untouched.
func TestRateLimitEnvironmentsIndependent(t *testing.T) {
	s := dbtest.Open(t, store.DialectSQLite)
	acme, globex := dbtest.NewTenant(t, s, "acme"), dbtest.NewTenant(t, s, "globex")
	a := newLimitedAPI(t, s, edge.RateLimitOptions{Rate: 1, Burst: 2, Now: dbtest.NewClock(clock).Now})
	for range 2 {
		if res := a.get(t, acme.Key, "/v1/messages"); res.status != http.StatusOK {
			t.Fatalf("acme: status %d, want 200", res.status)
		}
	}
	tooMany(t, a.get(t, acme.Key, "/v1/messages"), "/v1/messages", false)

	res := a.get(t, globex.Key, "/v1/messages")
	if res.status != http.StatusOK {
		t.Fatalf("globex: status %d, want 200; body %s", res.status, res.body)
	}
	if diff := cmp.Diff(limitHeaders{"2", "1", "1", ""}, limitsOf(res)); diff != "" {
		t.Errorf("globex headers (-want +got):\n%s", diff)
	}
	if n := a.limiter.Environments(); n != 2 {
		t.Errorf("Environments() = %d, want 2", n)
	}
}

// TestRateLimitUnauthenticatedNotCounted: 401s carry no rate-limit fields and take no
// token from anyone.
func TestRateLimitUnauthenticatedNotCounted(t *testing.T) {
	s := dbtest.Open(t, store.DialectSQLite)
	tn := dbtest.NewTenant(t, s, "acme")
	a := newLimitedAPI(t, s, edge.RateLimitOptions{Rate: 1, Burst: 2, Now: dbtest.NewClock(clock).Now})
	for _, e := range endpoints("0123456789abcdef01234567") {
		for _, auth := range []string{"", "ApiKey wrong", "Bearer " + tn.Key} {
			res := e.send(t, a.api, auth)
			unauthenticated(t, e, res)
			if diff := cmp.Diff(limitHeaders{}, limitsOf(res)); diff != "" {
				t.Errorf("%s with %q: rate-limit headers on a 401 (-want +got):\n%s", e.name, auth, diff)
			}
		}
	}
	if n := a.limiter.Environments(); n != 0 {
		t.Errorf("Environments() = %d after only 401s, want 0", n)
	}
	res := a.get(t, tn.Key, "/v1/messages")
	if diff := cmp.Diff(limitHeaders{"2", "1", "1", ""}, limitsOf(res)); diff != "" {
		t.Errorf("first authenticated request (-want +got):\n%s", diff)
	}
}

// TestRateLimitConcurrentBurst: of many simultaneous requests in one instant, exactly
// burst pass.
func TestRateLimitConcurrentBurst(t *testing.T) {
	s := dbtest.Open(t, store.DialectSQLite)
	tn := dbtest.NewTenant(t, s, "acme")
	a := newLimitedAPI(t, s, edge.RateLimitOptions{Rate: 1, Burst: 5, Now: dbtest.NewClock(clock).Now})
	if got := statusCounts(t, 20, func() int { return a.get(t, tn.Key, "/v1/messages?limit=1").status }); !cmp.Equal(got, map[int]int{200: 5, 429: 15}) {
		t.Errorf("statuses = %v, want 5 × 200 and 15 × 429", got)
	}
}

// statusCounts runs n requests at once and counts their statuses.
func statusCounts(t testing.TB, n int, send func() int) map[int]int {
	t.Helper()
	var mu sync.Mutex
	counts := map[int]int{}
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			status := send()
			mu.Lock()
			defer mu.Unlock()
			counts[status]++
		})
	}
	wg.Wait()
	return counts
}

// redisURL returns the Redis of TEST_REDIS_URL (default 127.0.0.1:6379) with a client
// on it, skipping the test when it is unreachable unless REQUIRE_REDIS=1.
func redisURL(t testing.TB) (string, *redis.Client) {
	t.Helper()
	u := os.Getenv("TEST_REDIS_URL")
	if u == "" {
		u = "redis://127.0.0.1:6379/0"
	}
	opts, err := redis.ParseURL(u)
	if err != nil {
		t.Fatalf("TEST_REDIS_URL: %v", err)
	}
	client := redis.NewClient(opts)
	t.Cleanup(func() { _ = client.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := client.Ping(ctx).Err(); err != nil {
		if os.Getenv("REQUIRE_REDIS") == "1" {
			t.Fatalf("Redis at %s is unreachable and REQUIRE_REDIS=1: %v", opts.Addr, err)
		}
		t.Skipf("Redis at %s is unreachable (set TEST_REDIS_URL, or REQUIRE_REDIS=1 to fail instead): %v", opts.Addr, err)
	}
	return u, client
}

// redisPrefix returns a key prefix of this test alone and deletes its keys when the test
// ends.
func redisPrefix(t testing.TB, client *redis.Client) string {
	t.Helper()
	var b [6]byte
	_, _ = rand.Read(b[:])
	prefix := "messages:test:" + hex.EncodeToString(b[:]) + ":"
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		keys, err := client.Keys(ctx, "*"+prefix+"*").Result()
		if err == nil && len(keys) > 0 {
			err = client.Del(ctx, keys...).Err()
		}
		if err != nil {
			t.Errorf("delete test keys: %v", err)
		}
	})
	return prefix
}

// TestRateLimitRedisSharedBucket: two instances on one Redis draw from one bucket per
// environment, on both dialects.
func TestRateLimitRedisSharedBucket(t *testing.T) {
	url, client := redisURL(t)
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		tn := dbtest.NewTenant(t, s, "acme")
		// 100 s per token: nothing refills while the test runs.
		o := edge.RateLimitOptions{Rate: 0.01, Burst: 3, RedisURL: url, RedisKeyPrefix: redisPrefix(t, client), RedisTimeout: 2 * time.Second}
		a, b := newLimitedAPI(t, s, o), newLimitedAPI(t, s, o)

		var got []limitHeaders
		for _, srv := range []*limitedAPI{a, b, a} {
			res := srv.get(t, tn.Key, "/v1/messages")
			if res.status != http.StatusOK {
				t.Fatalf("status %d, want 200; body %s", res.status, res.body)
			}
			got = append(got, limitsOf(res))
		}
		res := b.get(t, tn.Key, "/v1/messages")
		tooMany(t, res, "/v1/messages", false)
		got = append(got, limitsOf(res))
		res = a.graphql(t, tn.Key, gqlCount, nil)
		tooMany(t, res, "/graphql", true)
		got = append(got, limitsOf(res))

		want := []limitHeaders{
			{"3", "2", "100", ""},
			{"3", "1", "200", ""},
			{"3", "0", "300", ""},
			{"3", "0", "300", "100"},
			{"3", "0", "300", "100"},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("rate-limit headers across instances (-want +got):\n%s", diff)
		}
		if refused := a.limiter.Refused() + b.limiter.Refused(); refused != 2 {
			t.Errorf("refused %d, want 2", refused)
		}
		if n := a.limiter.FailedOpen() + b.limiter.FailedOpen(); n != 0 {
			t.Errorf("failed open %d times with Redis up; log:\n%s%s", n, a.log, b.log)
		}

		other := dbtest.NewTenant(t, s, "globex")
		if res := b.get(t, other.Key, "/v1/messages"); res.status != http.StatusOK {
			t.Errorf("other environment: status %d, want 200", res.status)
		}
	})
}

// TestRateLimitRedisConcurrentBurst: many simultaneous requests over two instances pass
// exactly burst times in all.
func TestRateLimitRedisConcurrentBurst(t *testing.T) {
	url, client := redisURL(t)
	s := dbtest.Open(t, store.DialectSQLite)
	tn := dbtest.NewTenant(t, s, "acme")
	o := edge.RateLimitOptions{Rate: 0.01, Burst: 5, RedisURL: url, RedisKeyPrefix: redisPrefix(t, client), RedisTimeout: 2 * time.Second}
	a, b := newLimitedAPI(t, s, o), newLimitedAPI(t, s, o)
	var mu sync.Mutex
	turn := 0
	got := statusCounts(t, 20, func() int {
		mu.Lock()
		srv := []*limitedAPI{a, b}[turn%2]
		turn++
		mu.Unlock()
		return srv.get(t, tn.Key, "/v1/messages?limit=1").status
	})
	if !cmp.Equal(got, map[int]int{200: 5, 429: 15}) {
		t.Errorf("statuses = %v, want 5 × 200 and 15 × 429", got)
	}
}

// TestRateLimitRedisDownFailsOpen: with Redis unreachable every request passes, without
// rate-limit fields, and the log holds one warning, not one per request.
func TestRateLimitRedisDownFailsOpen(t *testing.T) {
	s := dbtest.Open(t, store.DialectSQLite)
	tn := dbtest.NewTenant(t, s, "acme")
	// Port 1 is closed; the password must not reach the log.
	a := newLimitedAPI(t, s, edge.RateLimitOptions{Rate: 1, Burst: 1, RedisURL: "redis://:s3cret@127.0.0.1:1/0"})
	for i := range 5 {
		res := a.get(t, tn.Key, "/v1/messages")
		if res.status != http.StatusOK {
			t.Fatalf("request %d: status %d, want 200; body %s", i, res.status, res.body)
		}
		if diff := cmp.Diff(limitHeaders{}, limitsOf(res)); diff != "" {
			t.Errorf("request %d: rate-limit headers without Redis (-want +got):\n%s", i, diff)
		}
	}
	if n := strings.Count(a.log.String(), "level=WARN"); n != 1 {
		t.Errorf("%d warnings, want 1; log:\n%s", n, a.log)
	}
	if !strings.Contains(a.log.String(), "rate limit store unavailable") {
		t.Errorf("no warning about the store; log:\n%s", a.log)
	}
	if strings.Contains(a.log.String(), "s3cret") {
		t.Errorf("the log shows the Redis password:\n%s", a.log)
	}
	if n := a.limiter.FailedOpen(); n != 5 {
		t.Errorf("FailedOpen() = %d, want 5", n)
	}
}

// TestRateLimitRedisSlowFailsOpen: a Redis that accepts connections and never answers
// costs a request the timeout, not a hang or a 5xx: every request answers 200 within a
// client deadline and counts as let through.
func TestRateLimitRedisSlowFailsOpen(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// Registered before the limiter's cleanup, so it runs after the client has closed its
	// connections and every reader has returned.
	var conns sync.WaitGroup
	t.Cleanup(func() { ln.Close(); conns.Wait() })
	conns.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Go(func() { defer c.Close(); _, _ = io.Copy(io.Discard, c) })
		}
	})
	s := dbtest.Open(t, store.DialectSQLite)
	tn := dbtest.NewTenant(t, s, "acme")
	a := newLimitedAPI(t, s, edge.RateLimitOptions{RedisURL: "redis://" + ln.Addr().String(), RedisTimeout: 50 * time.Millisecond})
	// A hang would outlast this deadline by far; the Redis timeout is 50 ms.
	a.srv.Client().Timeout = 10 * time.Second
	for i := range 3 {
		if res := a.get(t, tn.Key, "/v1/messages"); res.status != http.StatusOK {
			t.Fatalf("request %d: status %d, want 200; body %s", i, res.status, res.body)
		}
	}
	if n := a.limiter.FailedOpen(); n != 3 {
		t.Errorf("FailedOpen() = %d, want 3: each request let through unlimited", n)
	}
	if n := strings.Count(a.log.String(), "level=WARN"); n != 1 {
		t.Errorf("%d warnings, want 1; log:\n%s", n, a.log)
	}
}
