package edge

import (
	"context"
	"time"

	"messages/models"
)

// Gate composes, in one place, the guards every operation passes whatever door it comes
// through: a /v1 or /graphql request, each message of a GraphQL WebSocket, each
// Server-Sent Events stream. Each door adapts it to its own words and moments:
//
//	guard                 HTTP request (/v1, /graphql)    WebSocket                   SSE stream
//	authentication        Authorization header (Open)     connection_init (Open)      header (Open)
//	revocation, expiry    each request authenticates      Watch: closed 4403          Watch: error event, end
//	rate limit            Admit per request               Admit per subscribe         Admit per request
//	deadline, byte budget Operation per request           Operation per query/mutation Operation per query/mutation
//	idempotency key       Idempotency-Key header          extensions.idempotencyKey   Idempotency-Key header
//
// The HTTP middleware of this package (Authenticate, RateLimit, Operation) are
// the adapters for requests; the /graphql transports (graph/transport's WebSocket and event
// stream) call the Gate itself. The platform's inbox socket (rest/inboxsocket) is
// authenticated and rate limited as its upgrade request, by the token of its query
// (Mount.TokenQuery), and closed 4403 through Watch. docs/reliability.md has the same
// table, with a column for it.
type Gate struct {
	auth      Authenticator
	limiter   *RateLimiter
	sessions  *RateLimiter
	timeout   time.Duration
	idem      *Idempotency
	shards    ShardSlots
	pool      *models.BudgetPool
	budget    int64
	watch     *Watch
	connsAuth func(ctx context.Context)
}

// Open authenticates an Authorization value ("ApiKey <key>" or "Bearer <session
// token>") and returns ctx carrying the caller, for the operations of the door it opened.
// The connection it arrived on counts as authenticated from then on (Connections).
func (g *Gate) Open(ctx context.Context, authorization string) (context.Context, error) {
	c, err := models.ParseCredential(authorization)
	if err != nil {
		return ctx, err
	}
	var caller models.Caller
	if c.Token != "" {
		caller, err = g.auth.AuthenticateSession(ctx, c.Token)
	} else {
		caller, err = g.auth.Authenticate(ctx, c.APIKey)
	}
	if err != nil {
		return ctx, err
	}
	MarkAuthenticated(ctx)
	if info := requestInfoFrom(ctx); info != nil {
		info.setEnvironment(caller.EnvironmentID)
	}
	return models.WithCaller(ctx, caller), nil
}

// Admit takes one operation's tokens from the rate-limit buckets of ctx's caller: its
// subscriber's (for a session: all the subscriber's sessions share it), then its
// environment's. A refusal is a RATE_LIMITED error saying when to
// retry; nothing is taken then from the environment.
func (g *Gate) Admit(ctx context.Context) error {
	caller, err := models.CallerFrom(ctx)
	if err != nil {
		return err
	}
	_, err = admit(ctx, caller, g.limiter, g.sessions, 1)
	return err
}

// charge takes units more of ctx's caller's buckets, for work beyond an admitted
// operation's usual (models.Charge).
func (g *Gate) charge(ctx context.Context, units int) error {
	caller, err := models.CallerFrom(ctx)
	if err != nil {
		return err
	}
	_, err = admit(ctx, caller, g.limiter, g.sessions, units)
	return err
}

// Operation bounds the work of one query or mutation: the request deadline in its
// context, a byte budget for the records it reads and the response it writes, and the
// charge of further rate-limit units for costly work (models.Charge). done
// releases both once the response is written.
func (g *Gate) Operation(ctx context.Context) (context.Context, func()) {
	b := g.pool.NewBudget(g.budget)
	ctx = models.WithBudget(ctx, b)
	if g.limiter != nil || g.sessions != nil {
		ctx = models.WithCharge(ctx, g.charge)
	}
	cancel := context.CancelFunc(func() {})
	if g.timeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, g.timeout)
	}
	// An operation of a socket or stream, whose caller is known, takes its shard's slot
	// here; a request takes it once authenticated (shardSlot). One that finds no slot
	// before its deadline runs with its context ended, and so fails as unavailable.
	leave := func() {}
	if caller, err := models.CallerFrom(ctx); err == nil && g.shards != nil {
		if release, err := g.shards.EnterShard(ctx, caller.EnvironmentID); err == nil {
			leave = release
		}
	}
	return ctx, func() { leave(); cancel(); b.Release() }
}

// Watch calls end, once, when the credential of ctx's caller stops being valid: its API
// key revoked (through any instance: within the store's authentication TTL and one
// interval), or its session token expired. stop unregisters; call it when the door
// closes.
func (g *Gate) Watch(ctx context.Context, end func(error)) (stop func()) {
	caller, err := models.CallerFrom(ctx)
	if err != nil {
		end(err)
		return func() {}
	}
	return g.watch.Add(caller, end)
}

// Idempotent runs serve at most once for key among the caller's requests: in one
// transaction with the key's claim, which serve hands to the GraphQL idempotency
// extension (it claims for a mutation only). It returns serve's response, or the
// response stored by the run that used key first (replayed), or a refusal: the key is in
// use (CONFLICT), was used for another request (BAD_USER_INPUT), or is malformed. A nil
// idempotency store runs serve without a claim.
func (g *Gate) Idempotent(ctx context.Context, key string, serve func(ctx context.Context, c Claim) []byte) (body []byte, replayed bool, err error) {
	if g.idem == nil {
		return serve(ctx, nil), false, nil
	}
	return g.idem.run(ctx, key, serve)
}
