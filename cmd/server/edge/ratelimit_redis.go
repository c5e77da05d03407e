package edge

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"
	"golang.org/x/time/rate"
)

// redisRest is how long Redis is left alone after a failure: requests in that time pass
// unlimited at once instead of each waiting out the timeout on a Redis that is down.
const redisRest = time.Second

// redisBuckets keep each environment's bucket in Redis with redis_rate's GCRA script, so
// every instance draws from the same bucket and Redis's clock is the only clock.
type redisBuckets struct {
	client  *redis.Client
	limiter *redis_rate.Limiter
	limit   redis_rate.Limit
	prefix  string
	timeout time.Duration
	now     func() time.Time
	// restUntil is when Redis may be asked again (Unix nanoseconds) after lastErr.
	restUntil atomic.Int64
	lastErr   atomic.Pointer[error]
}

func newRedisBuckets(o RateLimitOptions) (*redisBuckets, error) {
	opts, err := redis.ParseURL(o.RedisURL)
	if err != nil {
		// The URL may hold a password: say what is wrong, not what it was.
		return nil, fmt.Errorf("rate limit: REDIS_URL is not a valid redis:// URL")
	}
	timeout := o.RedisTimeout
	if timeout == 0 {
		timeout = DefaultRedisTimeout
	}
	opts.DialTimeout, opts.ReadTimeout, opts.WriteTimeout, opts.PoolTimeout = timeout, timeout, timeout, timeout
	opts.ContextTimeoutEnabled = true
	opts.MaxRetries = -1 // a failure lets the request through; retrying only adds latency
	opts.DisableIdentity = true
	prefix := o.RedisKeyPrefix
	if prefix == "" {
		prefix = DefaultRedisKeyPrefix
	}
	client := redis.NewClient(opts)
	return &redisBuckets{
		client:  client,
		limiter: redis_rate.NewLimiter(client),
		// Rate 1 per emission interval, so fractional rates (0.5 per second) work too.
		limit:   redis_rate.Limit{Rate: 1, Period: tokensDuration(rate.Limit(o.Rate), 1), Burst: o.Burst},
		prefix:  prefix,
		timeout: timeout,
		now:     o.Now,
	}, nil
}

func (b *redisBuckets) take(ctx context.Context, env string, n int) (decision, error) {
	if b.now().UnixNano() < b.restUntil.Load() {
		return decision{}, fmt.Errorf("not asked within %s of a failure: %w", redisRest, *b.lastErr.Load())
	}
	rctx, cancel := context.WithTimeout(ctx, b.timeout)
	defer cancel()
	res, err := b.limiter.AllowN(rctx, b.prefix+env, b.limit, min(n, b.limit.Burst))
	if err != nil {
		if ctx.Err() == nil {
			b.lastErr.Store(&err)
			b.restUntil.Store(b.now().Add(redisRest).UnixNano())
		}
		return decision{}, err
	}
	return decision{
		allowed:    res.Allowed > 0,
		limit:      b.limit.Burst,
		remaining:  res.Remaining,
		reset:      res.ResetAfter,
		retryAfter: res.RetryAfter,
	}, nil
}

func (b *redisBuckets) close() error { return b.client.Close() }
