package edge

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/golang-lru/v2/simplelru"
	"golang.org/x/time/rate"

	"messages/models"
)

// Rate-limit defaults: generous enough that no ordinary client meets them.
const (
	// DefaultRateLimit is the sustained requests per second of one environment.
	DefaultRateLimit = 50.0
	// DefaultRateBurst is the bucket size: requests a rested environment may send at once.
	DefaultRateBurst = 100
	// DefaultSessionRateLimit is the sustained requests per second of one subscriber,
	// all its sessions together: a person's inbox tabs poll and mark, a script does not.
	DefaultSessionRateLimit = 10.0
	// DefaultSessionRateBurst is what one subscriber's sessions may send at once: ten
	// tabs reconnecting together (a laptop waking up), each a connection_init, a
	// subscription or two and a page load's queries, or the inbox client's session, list,
	// counts and socket: about 50.
	DefaultSessionRateBurst = 60
	// DefaultRedisTimeout bounds a Redis round trip before the request passes unlimited.
	DefaultRedisTimeout = 100 * time.Millisecond
	// DefaultRedisKeyPrefix namespaces the buckets in a Redis shared with other uses.
	DefaultRedisKeyPrefix = "messages:ratelimit:"
	// DefaultMaxEnvironments caps the in-process buckets (a few hundred bytes each).
	DefaultMaxEnvironments = 100_000
)

// warnEvery spaces the warnings about an unavailable Redis: one per interval, not one
// per request.
const warnEvery = time.Minute

// RateLimitOptions configures NewRateLimiter; zero fields take the defaults above.
type RateLimitOptions struct {
	// Rate is the sustained requests per second of one environment.
	Rate float64
	// Burst is the bucket size: how many requests a rested environment may send at once.
	Burst int
	// RedisURL (redis://[:password@]host:port/db), when set, keeps the buckets in Redis so
	// every instance shares one limit per environment.
	RedisURL string
	// RedisKeyPrefix namespaces the Redis keys; the limiter library adds "rate:" in front.
	RedisKeyPrefix string
	// RedisTimeout bounds each Redis round trip; past it the request is let through.
	RedisTimeout time.Duration
	// MaxEnvironments caps the buckets held in process.
	MaxEnvironments int
	// Now is the limiter's clock (time.Now when nil), so tests need not sleep: the
	// in-process buckets run on it, and so does the rest after a Redis failure. Redis
	// buckets themselves run on the Redis server's clock.
	Now func() time.Time
}

// decision is a bucket's answer to one request.
type decision struct {
	allowed bool
	// limit is the bucket size and remaining the whole tokens left after this request.
	limit, remaining int
	// reset is the time until the bucket is full again.
	reset time.Duration
	// retryAfter is the time until one token is available; set when refused.
	retryAfter time.Duration
}

// buckets takes n tokens (at most the bucket size) from an environment's bucket: in
// process or in Redis.
type buckets interface {
	take(ctx context.Context, env string, n int) (decision, error)
}

var (
	_ buckets = (*memoryBuckets)(nil)
	_ buckets = (*redisBuckets)(nil)
)

// RateLimiter is a token bucket per environment (the API key's tenant). It is safe for
// concurrent use; Close releases the Redis connections.
type RateLimiter struct {
	buckets buckets
	memory  *memoryBuckets // nil when the buckets live in Redis
	redis   *redisBuckets  // nil in process
	logger  *slog.Logger

	refused    atomic.Uint64
	failedOpen atomic.Uint64
	unwarned   atomic.Uint64 // failures since the last warning
	warn       rate.Sometimes
}

// NewRateLimiter returns a limiter with the options' rate and burst, in Redis when
// o.RedisURL is set and in process otherwise. Redis is not contacted here: an
// unreachable Redis only means requests pass unlimited, with a warning.
func NewRateLimiter(o RateLimitOptions, logger *slog.Logger) (*RateLimiter, error) {
	if o.Rate < 0 || math.IsNaN(o.Rate) || math.IsInf(o.Rate, 0) || o.Burst < 0 || o.MaxEnvironments < 0 || o.RedisTimeout < 0 {
		return nil, fmt.Errorf("rate limit: rate, burst, Redis timeout and maximum environments must be finite and not negative")
	}
	if o.Rate == 0 {
		o.Rate = DefaultRateLimit
	}
	if o.Burst == 0 {
		o.Burst = DefaultRateBurst
	}
	if logger == nil {
		logger = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	l := &RateLimiter{logger: logger, warn: rate.Sometimes{Interval: warnEvery}}
	if o.RedisURL != "" {
		rb, err := newRedisBuckets(o)
		if err != nil {
			return nil, err
		}
		l.buckets, l.redis = rb, rb
		return l, nil
	}
	if o.MaxEnvironments == 0 {
		o.MaxEnvironments = DefaultMaxEnvironments
	}
	l.memory = newMemoryBuckets(rate.Limit(o.Rate), o.Burst, o.MaxEnvironments, o.Now)
	l.buckets = l.memory
	return l, nil
}

// Close releases the Redis client, if any.
func (l *RateLimiter) Close() error {
	if l == nil || l.redis == nil {
		return nil
	}
	return l.redis.close()
}

// Refused counts the requests answered 429, for metrics.
func (l *RateLimiter) Refused() uint64 { return l.refused.Load() }

// FailedOpen counts the requests let through unlimited because Redis did not answer in
// time, for metrics.
func (l *RateLimiter) FailedOpen() uint64 { return l.failedOpen.Load() }

// Environments is the number of buckets held in process (0 with Redis), for metrics and
// to show memory stays bounded.
func (l *RateLimiter) Environments() int {
	if l.memory == nil {
		return 0
	}
	return l.memory.len()
}

// take asks env's bucket for n tokens. ok is false when the bucket could not be asked
// (Redis down or slow): the request then passes unlimited, and a warning is logged at
// most once per warnEvery with the number of failures it stands for.
func (l *RateLimiter) take(ctx context.Context, env string, n int) (decision, bool) {
	d, err := l.buckets.take(ctx, env, n)
	if err == nil {
		return d, true
	}
	l.failedOpen.Add(1)
	if ctx.Err() != nil {
		return decision{}, false // the client left; not Redis's fault
	}
	l.unwarned.Add(1)
	l.warn.Do(func() {
		l.logger.WarnContext(ctx, "rate limit store unavailable: requests pass unlimited",
			"error", err, "failuresSinceLastWarning", l.unwarned.Swap(0), "nextWarningIn", warnEvery.String())
	})
	return decision{}, false
}

// RateLimit takes a token from the caller's environment bucket before next runs and, for
// a subscriber session, one from its subscriber's bucket in sessions as well, so one
// person's browsers cannot spend their environment's allowance. It must sit inside Authenticate,
// which puts the caller in the context; without one it answers 401, so a wiring mistake
// fails closed. A nil limiter disables that limit.
//
// Headers follow the IETF httpapi draft "RateLimit header fields for HTTP" in its
// three-field form (draft-ietf-httpapi-ratelimit-headers-07), all in whole numbers:
//   - RateLimit-Limit: the bucket size (burst), the most requests a rested client may
//     send at once;
//   - RateLimit-Remaining: whole tokens left after this request;
//   - RateLimit-Reset: seconds, rounded up, until the bucket is full again, i.e. until
//     Remaining is back at Limit: the draft's "quota resets" read for a token bucket. The
//     wait for the next single token is Retry-After, sent with 429.
//
// A refusal is 429 with Retry-After (seconds, rounded up, at least 1) and the error body
// errs writes. A refused request takes no token. When Redis cannot be asked the request
// passes without RateLimit fields: values the server does not know would mislead
// clients that pace themselves by them.
func RateLimit(l, sessions *RateLimiter, errs ErrorWriter) Middleware {
	return func(next http.Handler) http.Handler {
		if l == nil && sessions == nil {
			return next
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			caller, err := models.CallerFrom(r.Context())
			if err != nil && WebSocket(r) {
				// Authenticated by its first message (Authenticate let it through): its
				// connection_init and each operation it carries are admitted there.
				next.ServeHTTP(w, r)
				return
			}
			if err != nil {
				errs.WriteError(w, r, err)
				return
			}
			shown, err := admit(r.Context(), caller, l, sessions, 1)
			if shown != nil {
				shown.setHeaders(w.Header())
			}
			if err != nil {
				w.Header().Set("Retry-After", strconv.FormatInt(max(ceilSeconds(shown.retryAfter), 1), 10))
				closeUnread(w, r)
				errs.WriteError(w, r, err)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// admit takes n tokens of the caller's subscriber bucket (for a subscriber session) and
// of its environment's (at most each bucket's size: work costlier than that empties it): the subscriber's first, since it is the likelier to refuse, and
// then the environment keeps its token. shown is the decision the caller paces itself by
// (its subscriber's bucket for a session), or on a refusal the refusing bucket's, with
// err saying when to retry; nil when no bucket could be asked (Redis down: the request
// passes).
//
// The unit of the session limit is the subscriber, all its sessions together, not one
// session token: tokens are cheap to get (each inbox tab opens its own, and the keyless
// POST /v1/inbox/session hands one to whoever knows a subscriber's hash), so a bucket per
// token would give one person as many allowances as tokens they ask for; a subscriber is
// the person the limit is about, and its bucket is the same on every instance.
func admit(ctx context.Context, caller models.Caller, l, sessions *RateLimiter, n int) (shown *decision, err error) {
	if caller.Scoped() && sessions != nil {
		if d, ok := sessions.take(ctx, caller.EnvironmentID+"/"+caller.SubscriberID, n); ok {
			if !d.allowed {
				return &d, sessions.refusal(d, "this subscriber (all its sessions together)")
			}
			shown = &d
		}
	}
	if l != nil {
		if d, ok := l.take(ctx, caller.EnvironmentID, n); ok {
			if !d.allowed {
				return &d, l.refusal(d, "this environment")
			}
			if shown == nil {
				shown = &d
			}
		}
	}
	return shown, nil
}

// refusal counts a refusal and says when to retry.
func (l *RateLimiter) refusal(d decision, whose string) error {
	l.refused.Add(1)
	return models.Errorf(models.ERATELIMITED, "rate limit exceeded for %s: retry after %d s", whose, max(ceilSeconds(d.retryAfter), 1))
}

// setHeaders writes the RateLimit fields of d.
func (d decision) setHeaders(h http.Header) {
	h.Set("RateLimit-Limit", strconv.Itoa(d.limit))
	h.Set("RateLimit-Remaining", strconv.Itoa(max(d.remaining, 0)))
	h.Set("RateLimit-Reset", strconv.FormatInt(ceilSeconds(d.reset), 10))
}

// ceilSeconds rounds d up to whole seconds, never below 0. Both bucket kinds compute in
// floating point, so d is first rounded to the millisecond: 1.00000006 s is 1, not 2.
func ceilSeconds(d time.Duration) int64 {
	d = d.Round(time.Millisecond)
	if d <= 0 {
		return 0
	}
	return int64((d + time.Second - 1) / time.Second)
}

// memoryBuckets are the in-process buckets: a rate.Limiter per environment in an LRU
// list. A bucket left alone for burst/rate is full again, exactly as a new one would be,
// so dropping it then loses nothing; that keeps memory to the environments seen lately.
// MaxEnvironments bounds it under churn by dropping the least recently used bucket,
// which at worst hands that environment a fresh burst.
type memoryBuckets struct {
	rate  rate.Limit
	burst int
	idle  time.Duration // time for an empty bucket to fill up
	now   func() time.Time

	mu  sync.Mutex
	lru *simplelru.LRU[string, *memoryBucket]
}

type memoryBucket struct {
	limiter *rate.Limiter
	seen    time.Time
}

func newMemoryBuckets(r rate.Limit, burst, maxEnvironments int, now func() time.Time) *memoryBuckets {
	lru, err := simplelru.NewLRU[string, *memoryBucket](maxEnvironments, nil)
	if err != nil {
		panic(err) // maxEnvironments is positive: checked by NewRateLimiter
	}
	return &memoryBuckets{rate: r, burst: burst, now: now, idle: tokensDuration(r, float64(burst)), lru: lru}
}

func (m *memoryBuckets) take(_ context.Context, env string, n int) (decision, error) {
	n = min(n, m.burst)
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	b := m.bucket(env, now)
	allowed := b.limiter.AllowN(now, n)
	tokens := b.limiter.TokensAt(now)
	d := decision{
		allowed:   allowed,
		limit:     m.burst,
		remaining: int(math.Floor(tokens)),
		reset:     tokensDuration(m.rate, float64(m.burst)-tokens),
	}
	if !allowed {
		d.retryAfter = tokensDuration(m.rate, float64(n)-tokens)
	}
	return d, nil
}

// bucket returns env's bucket, marked as used at now, after dropping the buckets that
// are full again; at the cap, adding one drops the least recently used.
func (m *memoryBuckets) bucket(env string, now time.Time) *memoryBucket {
	for _, b, ok := m.lru.GetOldest(); ok && now.Sub(b.seen) >= m.idle; _, b, ok = m.lru.GetOldest() {
		m.lru.RemoveOldest()
	}
	if b, ok := m.lru.Get(env); ok {
		b.seen = now
		return b
	}
	b := &memoryBucket{limiter: rate.NewLimiter(m.rate, m.burst), seen: now}
	m.lru.Add(env, b)
	return b
}

func (m *memoryBuckets) len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.lru.Len()
}

// tokensDuration is how long the bucket takes to gain tokens at rate r.
func tokensDuration(r rate.Limit, tokens float64) time.Duration {
	if tokens <= 0 {
		return 0
	}
	d := tokens / float64(r) * float64(time.Second)
	if d >= math.MaxInt64 {
		return math.MaxInt64
	}
	return time.Duration(d)
}
