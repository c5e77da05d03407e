package edge

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"messages/models"
)

// Idempotency headers: the client's key, echoed on every answer to it, and the mark of a
// replayed response.
const (
	IdempotencyKeyHeader    = "Idempotency-Key"
	IdempotencyReplayHeader = "Idempotency-Replay"
)

// MaxIdempotencyKeyLength is the longest key accepted, in characters.
const MaxIdempotencyKeyLength = 255

// IdempotencyOptions configure idempotency keys; zero fields take the defaults.
type IdempotencyOptions struct {
	// TTL is how long a response is replayed. Older records count as absent and are purged.
	TTL time.Duration
	// PurgeInterval is how often PurgeExpired deletes expired records.
	PurgeInterval time.Duration
	// LockWait is how long, on MySQL, a request waits for another instance's transaction
	// holding the same key before answering 409.
	LockWait time.Duration
}

// DefaultIdempotencyOptions keep responses for 24 hours, as Stripe does.
var DefaultIdempotencyOptions = IdempotencyOptions{TTL: 24 * time.Hour, PurgeInterval: time.Hour, LockWait: time.Second}

// IdempotencyStore keeps idempotency keys and their responses (models/store.Store).
// RetryTransaction runs fn in one database transaction that every call made with its
// context joins, so the key, the change and the response commit together; it runs fn
// again when the transaction loses a conflict with a concurrent one.
type IdempotencyStore interface {
	RetryTransaction(ctx context.Context, fn func(ctx context.Context) error) error
	ClaimIdempotencyKey(ctx context.Context, k *models.IdempotencyKey, lockWait time.Duration) (*models.IdempotencyKey, error)
	CompleteIdempotencyKey(ctx context.Context, k *models.IdempotencyKey) error
	PurgeIdempotencyKeys(ctx context.Context, now time.Time) (int64, error)
}

// IdempotencyPolicy is what a mount that knows before running whether a request changes
// anything (/v1) tells the guard about its POST requests carrying a key.
type IdempotencyPolicy interface {
	// Fingerprint identifies the request by parts that are equal exactly when a retry
	// is the same request, or reports that the key does not apply (the request changes
	// nothing, so it runs untouched).
	Fingerprint(r *http.Request, body []byte) (parts []string, applies bool)
}

// Claim is how the handler of a deferring mount uses the request's key once it knows the
// request changes something (GraphQL: once the document is parsed and the operation is
// a mutation). Claim takes the key for the request identified by parts, inside the
// transaction of ctx, and reports whether the request may run; when it may not, the
// guard answers instead (a replay or a refusal) and what the handler writes is dropped.
// After running, Ran reports whether the request ran (so its response is kept) or was
// refused (so it is rolled back and may be retried). It is an unnamed interface type so
// that a mount implements DeferredPolicy without importing this package.
type Claim = interface {
	Claim(ctx context.Context, parts []string) (run bool)
	Ran(ran bool)
}

// DeferredPolicy is what a mount that learns only while serving whether a request
// changes anything tells the guard: how to hand its handler the request's Claim.
type DeferredPolicy interface {
	Defer(r *http.Request, c Claim) *http.Request
}

// Idempotency makes requests carrying an Idempotency-Key safe to retry: the first one runs
// in a database transaction that also stores its response, and every retry within the
// TTL gets that response again without running. One value serves every mount, so a key
// is held once per environment whichever route uses it.
type Idempotency struct {
	store  IdempotencyStore
	logger *slog.Logger
	now    func() time.Time
	opts   IdempotencyOptions

	mu      sync.Mutex
	running map[runningKey]bool

	replays atomic.Uint64
}

// runningKey is a key in use by a request of this process.
type runningKey struct{ environmentID, key string }

// NewIdempotency returns the idempotency keys kept in store.
func NewIdempotency(st IdempotencyStore, logger *slog.Logger, now func() time.Time, o IdempotencyOptions) *Idempotency {
	if o.TTL <= 0 {
		o.TTL = DefaultIdempotencyOptions.TTL
	}
	if o.PurgeInterval <= 0 {
		o.PurgeInterval = DefaultIdempotencyOptions.PurgeInterval
	}
	if o.LockWait <= 0 {
		o.LockWait = DefaultIdempotencyOptions.LockWait
	}
	if logger == nil {
		logger = slog.Default()
	}
	if now == nil {
		now = time.Now
	}
	return &Idempotency{store: st, logger: logger, now: now, opts: o, running: map[runningKey]bool{}}
}

// Guard applies idempotency keys to the POST and DELETE requests policy says they apply to;
// everything else passes through untouched, whatever its headers. It must sit inside
// Authenticate, which puts the caller's environment in the context. A nil Idempotency
// ignores keys.
func (i *Idempotency) Guard(policy IdempotencyPolicy, errs ErrorWriter) Middleware {
	return func(next http.Handler) http.Handler {
		if i == nil || policy == nil {
			return next
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			keys := r.Header.Values(IdempotencyKeyHeader)
			if len(keys) == 0 || r.Method != http.MethodPost && r.Method != http.MethodDelete {
				next.ServeHTTP(w, r)
				return
			}
			body, whole := readBody(r)
			r = withBody(r, body, whole)
			if !whole {
				// Too large or unreadable: the handler refuses it and nothing runs.
				next.ServeHTTP(w, r)
				return
			}
			parts, applies := policy.Fingerprint(r, body)
			if !applies {
				next.ServeHTTP(w, r)
				return
			}
			a, err := i.newAttempt(w, r, keys)
			if err == nil {
				err = a.begin(parts)
			}
			if err != nil {
				refuse(w, r, errs, err)
				return
			}
			a.serve(w, r, errs, func(res http.ResponseWriter, ctx context.Context) {
				if a.claim(ctx) {
					// The body afresh for each run of the transaction.
					next.ServeHTTP(res, withBody(r, body, true).WithContext(ctx))
				}
			})
		})
	}
}

// DeferredGuard applies idempotency keys to the POST requests whose handler claims
// them (see Claim): each keyed POST is served in a transaction, which the handler's claim
// joins and which commits only with a response that is kept. Requests the handler does
// not claim (queries) get their response as it is, and nothing is stored.
func (i *Idempotency) DeferredGuard(policy DeferredPolicy, errs ErrorWriter) Middleware {
	return func(next http.Handler) http.Handler {
		if i == nil || policy == nil {
			return next
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			keys := r.Header.Values(IdempotencyKeyHeader)
			if len(keys) == 0 || r.Method != http.MethodPost || EventStream(r) {
				// An event stream is not answered whole: its transport applies the key to
				// the mutation it carries (Gate.Idempotent).
				next.ServeHTTP(w, r)
				return
			}
			body, whole := readBody(r)
			if !whole {
				// Too large or unreadable: the handler refuses it and nothing runs.
				next.ServeHTTP(w, withBody(r, body, whole))
				return
			}
			a, err := i.newAttempt(w, r, keys)
			if err != nil {
				errs.WriteError(w, r, err)
				return
			}
			a.serve(w, r, errs, func(res http.ResponseWriter, ctx context.Context) {
				// The body afresh for each run of the transaction.
				next.ServeHTTP(res, policy.Defer(withBody(r, body, true).WithContext(ctx), a))
			})
		})
	}
}

// Replays counts the stored responses sent again to a retried request, for metrics.
func (i *Idempotency) Replays() uint64 { return i.replays.Load() }

func (i *Idempotency) start(k runningKey) bool {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.running[k] {
		return false
	}
	i.running[k] = true
	return true
}

func (i *Idempotency) finish(k runningKey) {
	i.mu.Lock()
	defer i.mu.Unlock()
	delete(i.running, k)
}

// PurgeExpired deletes expired records at once and then every PurgeInterval, until ctx
// ends. Run it in its own goroutine.
func (i *Idempotency) PurgeExpired(ctx context.Context) {
	t := time.NewTicker(i.opts.PurgeInterval)
	defer t.Stop()
	for {
		n, err := i.store.PurgeIdempotencyKeys(ctx, i.now())
		switch {
		case err != nil && ctx.Err() == nil:
			i.logger.WarnContext(ctx, "purging expired idempotency keys failed", "error", err)
		case n > 0:
			i.logger.InfoContext(ctx, "purged expired idempotency keys", "count", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// idempotencyKey validates the header: one value of 1 to 255 printable characters.
func idempotencyKey(values []string) (string, error) {
	if len(values) != 1 {
		return "", models.Errorf(models.EMALFORMED, "send one Idempotency-Key header, not %d", len(values))
	}
	k := values[0]
	n := utf8.RuneCountInString(k)
	valid := n >= 1 && n <= MaxIdempotencyKeyLength && utf8.ValidString(k)
	for _, c := range k {
		valid = valid && unicode.IsPrint(c)
	}
	if !valid {
		return "", models.Errorf(models.EMALFORMED, "Idempotency-Key must be 1 to %d printable characters", MaxIdempotencyKeyLength)
	}
	return k, nil
}

// ran reports whether a response's status means the request ran, so it is stored with
// its change: 2xx, and 404 (the record does not exist, and asking again will say so).
// Refusals before running (400, 401, 409, 413, 415, 422, 429) and failures (5xx) roll
// back, so the client may retry. A deferring mount says more with Claim.Ran (GraphQL
// answers 200 even for failed fields).
func ran(status int) bool {
	return status == http.StatusNotFound || status >= 200 && status <= 299
}

// fingerprint hashes the parts, each prefixed by its length so no two lists collide.
func fingerprint(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(p)))
		h.Write(n[:])
		h.Write([]byte(p))
	}
	return hex.EncodeToString(h.Sum(nil))
}
