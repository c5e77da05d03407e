// Package edge is the HTTP edge both APIs share: the guards a request passes before
// /v1 or /graphql sees it (deadline, authentication, rate limit, idempotency key, media
// type) and those around every route (metrics, request log, panic recovery,
// compression). Each guard is a Middleware built by a constructor, one file each, and
// Edge composes them in one place for serve and the tests alike. The edge knows nothing
// of /v1 or GraphQL: each mount says how its errors are written and which of its
// requests take an idempotency key.
package edge

import (
	"log/slog"
	"net/http"
	"time"

	"messages/models"
)

// Middleware is the one shape of every guard: it wraps the handler that comes after it.
type Middleware func(http.Handler) http.Handler

// ErrorWriter answers a request with err in the mount's own error shape: the documented
// JSON error body on /v1, the same body with GraphQL's errors array on /graphql.
type ErrorWriter interface {
	WriteError(w http.ResponseWriter, r *http.Request, err error)
}

// StatusError is a refusal only HTTP has words for (413, 415, 429): error writers
// answer with its status.
type StatusError struct {
	Status  int
	Message string
}

func (e *StatusError) Error() string { return e.Message }

// HTTPStatus is the status of the refusal; error writers find it with errors.As on an
// interface { HTTPStatus() int }, so they need not import this package.
func (e *StatusError) HTTPStatus() int { return e.Status }

// MaxBodyBytes bounds a request body the edge reads or lets through; larger is 413.
const MaxBodyBytes = 1 << 20

// Options are the guards' dependencies and settings, built once by serve.
type Options struct {
	Logger *slog.Logger
	// Now is the one clock of the guards: error ids, durations, idempotency expiry.
	Now func() time.Time
	// Auth resolves API keys to callers and says which were revoked (the resolver layer).
	Auth Authenticator
	// Limiter is the rate limit per environment; nil means none.
	Limiter *RateLimiter
	// SessionLimiter is the rate limit of subscriber sessions, one bucket per subscriber
	// (all its sessions together), on top of the environment's; nil means none.
	SessionLimiter *RateLimiter
	// AddressLimiter is the rate limit per client address of the requests a mount
	// authenticates itself (Mount.Keyless); nil refuses them.
	AddressLimiter *RateLimiter
	// CORS answers browsers on other origins; nil means none are allowed.
	CORS Middleware
	// Origins are the browser origins besides the server's own that may open a
	// WebSocket or send a preflight (the same list CORS allows; other origins'
	// preflights are answered 403); nil means none.
	Origins func(origin string) bool
	// Idempotency holds idempotency keys; nil means keys are ignored.
	Idempotency *Idempotency
	// Shards is the bulkhead of a sharded database: each request or operation of a
	// tenant takes a slot of its environment's shard while it runs; nil means none.
	Shards ShardSlots
	// Timeout is the deadline of one request's or operation's work; 0 means none.
	Timeout time.Duration
	// Budget is the bytes one request or operation may hold in records read and response
	// written (models.Budget); 0 means unbounded.
	Budget int64
	// BudgetPool is the bytes every request in flight may hold together; nil means
	// unbounded.
	BudgetPool *models.BudgetPool
	// WatchInterval is how often the credentials of open streams are checked again;
	// 0 means DefaultWatchInterval.
	WatchInterval time.Duration
	// Metrics counts and times requests; nil means not measured.
	Metrics *Metrics
	// Trace spans each request (the otelhttp wrapper); nil means not traced.
	Trace Middleware
	// Errors answers requests outside any mount (a panic there, for one).
	Errors ErrorWriter
}

// Mount is what one API mount tells the edge about itself.
type Mount struct {
	// Errors writes the mount's refusals.
	Errors ErrorWriter
	// Idempotency says which requests take an idempotency key and what identifies them,
	// before they run (/v1).
	Idempotency IdempotencyPolicy
	// DeferredIdempotency hands the handler each keyed request's Claim, for a mount that
	// learns only while serving whether a request changes anything (GraphQL). With
	// neither, keys are ignored.
	DeferredIdempotency DeferredPolicy
	// WebSockets says the mount takes WebSocket upgrades and authenticates them in their
	// first message (GraphQL's connection_init); their origin is checked here.
	WebSockets bool
	// TokenQuery, when set, says the mount takes WebSocket upgrades that carry a session
	// token in this query parameter instead of an Authorization header (browsers cannot
	// set headers on a WebSocket; the platform's inbox client sends ?token=): the upgrade
	// is authenticated with it before it is accepted, as a request's header would be, and
	// its origin is checked here. Requests that are not upgrades still need the header.
	TokenQuery string
	// JSONBodies refuses POST bodies that are not JSON (415) and bounds them to
	// MaxBodyBytes (413), for a mount whose handler would answer them less clearly.
	JSONBodies bool
	// Keyless says which requests the mount's handler authenticates itself, with no
	// credential the edge knows (the inbox client's session, by HMAC): they pass the
	// Keyless guard instead of authentication, the per-caller rate limit and
	// idempotency keys. Nil: none.
	Keyless func(r *http.Request) bool
}

// Edge builds the production chain of guards.
type Edge struct {
	o    Options
	gate *Gate
}

// New returns the edge with o's dependencies; a nil Logger or Now take slog.Default and
// time.Now.
func New(o Options) *Edge {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.BudgetPool == nil {
		o.BudgetPool = models.NewBudgetPool(0)
	}
	g := &Gate{auth: o.Auth, limiter: o.Limiter, sessions: o.SessionLimiter, timeout: o.Timeout, idem: o.Idempotency, shards: o.Shards,
		pool: o.BudgetPool, budget: o.Budget, watch: NewWatch(o.Auth, o.Now, o.WatchInterval, o.Logger)}
	return &Edge{o: o, gate: g}
}

// Gate is the guards of every operation, for the doors that are not one HTTP request
// each (the /graphql transports of WebSockets and event streams).
func (e *Edge) Gate() *Gate { return e.gate }

// Watched is the number of open streams whose credential is watched, for metrics.
func (e *Edge) Watched() int { return e.gate.watch.Len() }

// Around wraps every route: metrics (with tracing inside, so spans see the route), the
// request log, the URI limit, panic recovery, compression and CORS, in that order: an
// overlong URI and a preflight are answered before any mount's authentication, and still
// logged and measured. Preflights from origins Origins refuses are answered 403 whether or
// not CORS is set. routers are the ServeMuxes under next, outermost first, that name a
// request's route for metrics; handlers that are not a Router are skipped.
func (e *Edge) Around(next http.Handler, routers ...http.Handler) http.Handler {
	var named []Router
	for _, h := range routers {
		if r, ok := h.(Router); ok {
			named = append(named, r)
		}
	}
	return chain(next,
		e.o.Metrics.Instrument(e.o.Now, named...),
		e.o.Trace,
		Log(e.o.Logger, e.o.Now),
		URILimit(MaxURIBytes, e.o.Errors),
		Recover(e.o.Logger, e.o.Now, e.o.Errors),
		Compress(),
		RefusePreflights(e.o.Origins, e.o.Errors),
		e.o.CORS,
	)
}

// API guards one API mount: its error writer for everything inside, the deadline,
// authentication, the rate limit, idempotency keys and, when asked, JSON bodies; the
// requests the mount authenticates itself (Mount.Keyless) pass its error writer, the
// deadline and the Keyless guard instead. The
// order matters: the rate limit and idempotency need the caller authentication found,
// and idempotency's transaction must hold every query of the request.
func (e *Edge) API(m Mount, next http.Handler) http.Handler {
	guards := []Middleware{
		MountErrors(m.Errors),
		Operation(e.gate),
		websocketOrigins(m, e.o.Origins),
		authenticate(e.gate, m),
		RateLimit(e.o.Limiter, e.o.SessionLimiter, m.Errors),
		shardSlot(e.gate, m.Errors),
	}
	if m.Idempotency != nil {
		guards = append(guards, e.o.Idempotency.Guard(m.Idempotency, m.Errors))
	}
	if m.DeferredIdempotency != nil {
		guards = append(guards, e.o.Idempotency.DeferredGuard(m.DeferredIdempotency, m.Errors))
	}
	if m.JSONBodies {
		guards = append(guards, JSONMediaType(m.Errors), BodyLimit(MaxBodyBytes))
	}
	guarded := chain(next, guards...)
	if m.Keyless == nil {
		return guarded
	}
	keyless := chain(next, MountErrors(m.Errors), Operation(e.gate), Keyless(e.o.AddressLimiter, m.Errors))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if m.Keyless(r) {
			keyless.ServeHTTP(w, r)
			return
		}
		guarded.ServeHTTP(w, r)
	})
}

func websocketOrigins(m Mount, allowed func(string) bool) Middleware {
	if !m.WebSockets && m.TokenQuery == "" {
		return nil
	}
	return WebSocketOrigins(allowed, m.Errors)
}

// chain wraps next in guards, the first outermost; nil guards are skipped.
func chain(next http.Handler, guards ...Middleware) http.Handler {
	for i := len(guards) - 1; i >= 0; i-- {
		if guards[i] != nil {
			next = guards[i](next)
		}
	}
	return next
}
