package edge

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
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

// IdempotencyStore keeps idempotency keys and their responses: the resolver layer, over
// the store. Transaction runs fn in one database transaction that every call made with
// its context joins, so the key, the change and the response commit together.
type IdempotencyStore interface {
	Transaction(ctx context.Context, fn func(ctx context.Context) error) error
	ClaimIdempotencyKey(ctx context.Context, k *models.IdempotencyKey, lockWait time.Duration) (*models.IdempotencyKey, error)
	CompleteIdempotencyKey(ctx context.Context, k *models.IdempotencyKey) error
	PurgeIdempotencyKeys(ctx context.Context, now time.Time) (int64, error)
}

// IdempotencyPolicy is what a mount tells the idempotency guard about its POST requests
// that carry a key.
type IdempotencyPolicy interface {
	// Fingerprint identifies the request by parts that are equal exactly when a retry
	// is the same request, or reports that the key does not apply (the request changes
	// nothing, so it runs untouched).
	Fingerprint(r *http.Request, body []byte) (parts []string, applies bool)
	// Ran reports whether a 2xx response means the request ran, so it is kept.
	Ran(body []byte) bool
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
func NewIdempotency(store IdempotencyStore, logger *slog.Logger, now func() time.Time, o IdempotencyOptions) *Idempotency {
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
	return &Idempotency{store: store, logger: logger, now: now, opts: o, running: map[runningKey]bool{}}
}

// Guard applies idempotency keys to the POST requests policy says they apply to;
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
			if len(keys) == 0 || r.Method != http.MethodPost {
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
			key, err := idempotencyKey(keys)
			if err != nil {
				errs.WriteError(w, r, err)
				return
			}
			caller, err := models.CallerFrom(r.Context())
			if err != nil {
				errs.WriteError(w, r, err)
				return
			}
			w.Header().Set(IdempotencyKeyHeader, key)
			rk := runningKey{caller.EnvironmentID, key}
			if !i.start(rk) {
				refuse(w, r, errs, models.IdempotencyKeyBusy(key))
				return
			}
			defer i.finish(rk)
			rec := &models.IdempotencyKey{EnvironmentID: caller.EnvironmentID, Key: key, Fingerprint: fingerprint(parts...)}
			i.serve(w, r, next, rec, policy, errs)
		})
	}
}

// errNotKept rolls back a request whose response says it did not run.
var errNotKept = errors.New("response not kept")

// serve runs next in a transaction that first claims the key and last stores the
// response, then answers: the response, a replay of the stored one, or a refusal.
func (i *Idempotency) serve(w http.ResponseWriter, r *http.Request, next http.Handler, rec *models.IdempotencyKey, policy IdempotencyPolicy, errs ErrorWriter) {
	now := i.now()
	rec.CreatedAt, rec.ExpiresAt = now, now.Add(i.opts.TTL)
	res := &responseBuffer{header: http.Header{}}
	var stored *models.IdempotencyKey
	err := i.store.Transaction(r.Context(), func(ctx context.Context) error {
		var err error
		if stored, err = i.store.ClaimIdempotencyKey(ctx, rec, i.opts.LockWait); err != nil || stored != nil {
			return err
		}
		next.ServeHTTP(res, r.WithContext(ctx))
		if !ran(res.status(), res.body.Bytes(), policy) {
			return errNotKept
		}
		rec.Status, rec.ContentType, rec.Body = res.status(), res.header.Get("Content-Type"), res.body.Bytes()
		return i.store.CompleteIdempotencyKey(ctx, rec)
	})
	switch {
	case err == nil && stored != nil:
		i.replay(w, r, rec, stored, errs)
	case err == nil || errors.Is(err, errNotKept):
		res.writeTo(w)
	default:
		refuse(w, r, errs, err)
	}
}

// replay answers with the stored response when the request is the one stored, and with
// 422 when the key was used for another request.
func (i *Idempotency) replay(w http.ResponseWriter, r *http.Request, rec, stored *models.IdempotencyKey, errs ErrorWriter) {
	if stored.Status == 0 {
		// A committed record always holds a response; one without is treated as running.
		refuse(w, r, errs, models.IdempotencyKeyBusy(rec.Key))
		return
	}
	if stored.Fingerprint != rec.Fingerprint {
		errs.WriteError(w, r, models.Invalid(IdempotencyKeyHeader, rec.Key,
			fmt.Sprintf("Idempotency-Key %q was already used for a different request; send a new key for a new request", rec.Key)))
		return
	}
	if stored.ContentType != "" {
		w.Header().Set("Content-Type", stored.ContentType)
	}
	i.replays.Add(1)
	w.Header().Set(IdempotencyReplayHeader, "true")
	w.WriteHeader(stored.Status)
	_, _ = w.Write(stored.Body)
}

// Replays counts the stored responses sent again to a retried request, for metrics.
func (i *Idempotency) Replays() uint64 { return i.replays.Load() }

// refuse writes an error; a conflict (the key is in use) tells the client when to retry.
func refuse(w http.ResponseWriter, r *http.Request, errs ErrorWriter, err error) {
	if models.ErrorCode(err) == models.ECONFLICT {
		w.Header().Set("Retry-After", "1")
	}
	errs.WriteError(w, r, err)
}

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

// ran reports whether a response means the request ran, so it is stored with its change:
// 404 (the record does not exist, and asking again will say so), and 2xx when the
// mount's policy agrees (GraphQL answers 200 even for failed fields). Refusals before
// running (400, 401, 409, 413, 415, 422, 429) and failures (5xx) roll back, so the client
// may retry.
func ran(status int, body []byte, policy IdempotencyPolicy) bool {
	if status == http.StatusNotFound {
		return true
	}
	if status < 200 || status > 299 {
		return false
	}
	return policy.Ran(body)
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
