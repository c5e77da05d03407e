package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v3"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"messages/cmd/server/edge"
	"messages/graph"
	"messages/graph/extension"
	"messages/graph/transport"
	"messages/models"
	"messages/models/changefeed"
	"messages/models/service"
	"messages/models/session"
	"messages/models/store"
	"messages/rest/inboxsocket"
)

// defaultReadTimeout bounds how long a request's headers and body take to arrive: a
// megabyte on a slow mobile link, not a client that sends a byte a minute.
const defaultReadTimeout = 30 * time.Second

func (a *app) serveCommand() *cli.Command {
	return &cli.Command{
		Name:  "serve",
		Usage: "serve GraphQL at /graphql, REST at /v1 and, in development, the playground at /",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "addr", Usage: "address to listen on (unset: 127.0.0.1:8080 in development, so the demo key and the live inbox stay on this machine; :8080 in production)", Sources: cli.EnvVars("ADDR")},
			&cli.BoolFlag{Name: "graphql-introspection", Usage: "allow introspection in production (always on in development)", Sources: cli.EnvVars("GRAPHQL_INTROSPECTION")},
			&cli.DurationFlag{Name: "request-timeout", Usage: "deadline of each request's work; past it the database is abandoned and the request answered with 503", Value: edge.DefaultRequestTimeout, Sources: cli.EnvVars("REQUEST_TIMEOUT")},
			&cli.FloatFlag{Name: "rate-limit", Usage: "requests per second allowed to each environment (token bucket refill rate)", Value: edge.DefaultRateLimit, Sources: cli.EnvVars("RATE_LIMIT")},
			&cli.IntFlag{Name: "rate-burst", Usage: "requests an environment may send at once (token bucket size)", Value: edge.DefaultRateBurst, Sources: cli.EnvVars("RATE_BURST")},
			&cli.StringFlag{Name: "redis-url", Usage: "redis://host:6379/0 to share rate limits between instances (unset: in process)", Sources: cli.EnvVars("REDIS_URL")},
			&cli.StringFlag{Name: "cursor-secret", Usage: "secret that signs messagesConnection cursors; set the same value on every instance (unset: random per process, cursors die with it)", Sources: cli.EnvVars("CURSOR_SECRET")},
			&cli.StringFlag{Name: "session-secret", Usage: "secret (at least 32 bytes) that signs subscriber session tokens; set the same value on every instance (unset: random per process, sessions die with it)", Sources: cli.EnvVars("SESSION_SECRET")},
			&cli.StringFlag{Name: "session-secret-previous", Usage: "the secret session tokens were signed with before the current one: still accepted, so a rotation ends no session", Sources: cli.EnvVars("SESSION_SECRET_PREVIOUS")},
			&cli.FloatFlag{Name: "session-rate-limit", Usage: "requests per second allowed to each subscriber, all its sessions together, on top of its environment's limit, and to each client address opening inbox sessions without a key (POST /v1/inbox/session by subscriberHash)", Value: edge.DefaultSessionRateLimit, Sources: cli.EnvVars("SESSION_RATE_LIMIT")},
			&cli.IntFlag{Name: "session-rate-burst", Usage: "requests a subscriber's sessions together, or a client address opening inbox sessions without a key, may send at once", Value: edge.DefaultSessionRateBurst, Sources: cli.EnvVars("SESSION_RATE_BURST")},
			&cli.StringFlag{Name: "cors-allowed-origins", Usage: "comma-separated browser origins allowed to call /graphql and /v1 (https://app.example.com; * for any); in development any http://localhost:* and http://127.0.0.1:* origin is allowed too", Sources: cli.EnvVars("CORS_ALLOWED_ORIGINS")},
			&cli.DurationFlag{Name: "events-poll-interval", Usage: "how often each instance reads the messages changed since its last read, for messageEvents subscriptions", Value: changefeed.DefaultInterval, Sources: cli.EnvVars("EVENTS_POLL_INTERVAL")},
			&cli.DurationFlag{Name: "events-rest-interval", Usage: "how often it reads them once nothing changed for 2 s, until a read finds a change or this instance writes messages (at most events-poll-interval: no rest)", Value: changefeed.DefaultRestInterval, Sources: cli.EnvVars("EVENTS_REST_INTERVAL")},
			&cli.DurationFlag{Name: "events-lookback", Usage: "how far back each read of changes looks again, for transactions that commit after rows written later (longer writers register a hold, as import does)", Value: changefeed.DefaultLookback, Sources: cli.EnvVars("EVENTS_LOOKBACK")},
			&cli.IntFlag{Name: "events-buffer", Usage: "changes queued for a subscription whose client reads more slowly than they come; past it they are read again from the database when the client catches up", Value: changefeed.DefaultBuffer, Sources: cli.EnvVars("EVENTS_BUFFER")},
			&cli.DurationFlag{Name: "events-slow-timeout", Usage: "how long a subscription's client may read nothing while events wait before it is closed (SLOW_CONSUMER)", Value: changefeed.DefaultSlowTimeout, Sources: cli.EnvVars("EVENTS_SLOW_TIMEOUT")},
			&cli.DurationFlag{Name: "websocket-ping", Usage: "how often the server pings each GraphQL WebSocket with a ping frame, closing with 1008 those that did not answer the previous one (0: never)", Value: transport.DefaultSocketOptions.Ping, Sources: cli.EnvVars("WEBSOCKET_PING_INTERVAL")},
			&cli.DurationFlag{Name: "read-timeout", Usage: "how long a request's headers and body may take to arrive; a stream's transport lifts it only once the stream is authenticated and its request read", Value: defaultReadTimeout, Sources: cli.EnvVars("READ_TIMEOUT")},
			&cli.DurationFlag{Name: "websocket-init-timeout", Usage: "how long a GraphQL WebSocket may stay open without connection_init before it is closed with 4408", Value: transport.DefaultSocketOptions.InitTimeout, Sources: cli.EnvVars("WEBSOCKET_INIT_TIMEOUT")},
			&cli.IntFlag{Name: "websocket-max-subscriptions", Usage: "subscriptions one GraphQL WebSocket may hold at once; one more is refused with an error message, the socket kept", Value: transport.DefaultSocketOptions.MaxSubscriptions, Sources: cli.EnvVars("WEBSOCKET_MAX_SUBSCRIPTIONS")},
			&cli.IntFlag{Name: "websocket-max-in-flight", Usage: "queries and mutations one GraphQL WebSocket runs at once; the next waits until one finishes", Value: transport.DefaultSocketOptions.MaxInFlight, Sources: cli.EnvVars("WEBSOCKET_MAX_IN_FLIGHT")},
			&cli.IntFlag{Name: "inbox-sockets-per-subscriber", Usage: "inbox sockets (/v1/inbox/socket) one subscriber may hold open on an instance; more are refused with 429 before the upgrade", Value: inboxsocket.DefaultOptions.PerSubscriber, Sources: cli.EnvVars("INBOX_SOCKETS_PER_SUBSCRIBER")},
			&cli.IntFlag{Name: "max-connections-per-address", Usage: "connections one client address may hold at once; more are answered 429 and closed (0: unbounded; behind a load balancer every client has its address)", Value: edge.DefaultMaxConnectionsPerAddress, Sources: cli.EnvVars("MAX_CONNECTIONS_PER_ADDRESS")},
			&cli.IntFlag{Name: "max-unauthenticated-connections", Usage: "connections, all addresses together, on which nothing was authenticated yet; more are answered 503 and closed (0: unbounded)", Value: edge.DefaultMaxUnauthenticatedConnections, Sources: cli.EnvVars("MAX_UNAUTHENTICATED_CONNECTIONS")},
			&cli.IntFlag{Name: "response-budget", Usage: "bytes one request or GraphQL operation may hold in the records it reads and the response it writes; past it the client is told to ask for less (422, RESPONSE_TOO_LARGE)", Value: models.DefaultRequestBudget, Sources: cli.EnvVars("RESPONSE_BUDGET")},
			&cli.IntFlag{Name: "response-budget-total", Usage: "bytes every request in flight may hold together; past it requests are refused with 503 until others finish (0: unbounded)", Value: models.DefaultBudgetPool, Sources: cli.EnvVars("RESPONSE_BUDGET_TOTAL")},
			&cli.DurationFlag{Name: "events-retention", Usage: "how old a messageEvents cursor may be to resume from, and how long the tombstones of deleted messages are kept (a resumed stream and import read them)", Value: service.DefaultEventRetention, Sources: cli.EnvVars("EVENTS_RETENTION")},
			&cli.DurationFlag{Name: "bulk-job-lease", Usage: "how long an instance holds a bulk change it carries on past its request without renewing it (each batch renews it): how late another instance takes on the change of one that died", Value: service.DefaultStateJobLease, Sources: cli.EnvVars("BULK_JOB_LEASE")},
			&cli.DurationFlag{Name: "idempotency-ttl", Usage: "how long idempotency keys and their responses are kept", Value: edge.DefaultIdempotencyOptions.TTL, Sources: cli.EnvVars("IDEMPOTENCY_TTL")},
			&cli.StringFlag{Name: "database-read-urls", Usage: "comma-separated mysql:// URLs of read replicas of DATABASE_URL; lists, cursors and counts read from one that is up and within --database-read-max-lag, everything else from the primary (unset: all from the primary)", Sources: cli.EnvVars("DATABASE_READ_URLS")},
			&cli.DurationFlag{Name: "database-read-max-lag", Usage: "how far behind the primary a read replica may be (Seconds_Behind_Master, checked every second) and still serve lists; one further behind, stopped or down is skipped for the primary", Value: store.DefaultReplicaMaxLag, Sources: cli.EnvVars("DATABASE_READ_MAX_LAG")},
			&cli.DurationFlag{Name: "database-read-after-write", Usage: "how long a caller's lists read from the primary after it wrote through this instance, so it sees its own writes (unset: twice --database-read-max-lag; 0: never)", Value: 2 * store.DefaultReplicaMaxLag, Sources: cli.EnvVars("DATABASE_READ_AFTER_WRITE")},
			&cli.StringFlag{Name: "trusted-documents", Usage: "off, allow (a request may name a trusted document by its id, answered without parsing it again; any document still runs) or require (subscriber sessions may run only trusted documents; API keys any): see documents add and docs/browsers.md", Value: extension.TrustedAllow.String(), Sources: cli.EnvVars("TRUSTED_DOCUMENTS")},
			&cli.DurationFlag{Name: "auth-cache-ttl", Usage: "how long an instance trusts an API key or session it checked: the longest a key revoked through another instance still works here (0: check every request)", Value: store.DefaultAuthTTL, Sources: cli.EnvVars("AUTH_CACHE_TTL")},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			c, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			c.introspection = c.development() || cmd.Bool("graphql-introspection")
			replicas, err := replicaOptions(cmd, c)
			if err != nil {
				return err
			}
			trusted, err := extension.ParseTrustedMode(cmd.String("trusted-documents"))
			if err != nil {
				return usageError{fmt.Errorf("TRUSTED_DOCUMENTS %v", err)}
			}
			return a.serve(ctx, c, serveOptions{
				replicas:       replicas,
				addr:           listenAddr(cmd, c),
				requestTimeout: cmd.Duration("request-timeout"),
				cursorSecret:   cmd.String("cursor-secret"),
				rateLimit:      edge.RateLimitOptions{Rate: cmd.Float("rate-limit"), Burst: cmd.Int("rate-burst"), RedisURL: cmd.String("redis-url")},
				sessionLimit:   edge.RateLimitOptions{Rate: cmd.Float("session-rate-limit"), Burst: cmd.Int("session-rate-burst"), RedisURL: cmd.String("redis-url")},
				sessionSecrets: [][]byte{[]byte(cmd.String("session-secret")), []byte(cmd.String("session-secret-previous"))},
				cors:           edge.CORSOptions{AllowedOrigins: edge.ParseOrigins(cmd.String("cors-allowed-origins")), AllowLocalhost: c.development()},
				idempotency:    edge.IdempotencyOptions{TTL: cmd.Duration("idempotency-ttl")},
				bulkJobLease:   cmd.Duration("bulk-job-lease"),
				events:         changefeed.Options{Interval: cmd.Duration("events-poll-interval"), RestInterval: cmd.Duration("events-rest-interval"), Lookback: cmd.Duration("events-lookback"), Buffer: cmd.Int("events-buffer"), SlowTimeout: cmd.Duration("events-slow-timeout")},
				eventRetention: cmd.Duration("events-retention"),
				socket: transport.SocketOptions{Ping: pingInterval(cmd.Duration("websocket-ping")), InitTimeout: cmd.Duration("websocket-init-timeout"),
					MaxSubscriptions: cmd.Int("websocket-max-subscriptions"), MaxInFlight: cmd.Int("websocket-max-in-flight")},
				inboxSocket: inboxsocket.Options{PerSubscriber: cmd.Int("inbox-sockets-per-subscriber")},
				connections: edge.ConnectionOptions{PerAddress: cmd.Int("max-connections-per-address"), Unauthenticated: cmd.Int("max-unauthenticated-connections")},
				readTimeout: cmd.Duration("read-timeout"),
				budget:      int64(cmd.Int("response-budget")),
				budgetTotal: int64(cmd.Int("response-budget-total")),
				authTTL:     cmd.Duration("auth-cache-ttl"),
				trusted:     trusted,
			})
		},
	}
}

// serveOptions are the settings of serve alone.
type serveOptions struct {
	addr           string
	requestTimeout time.Duration
	cursorSecret   string
	rateLimit      edge.RateLimitOptions
	sessionLimit   edge.RateLimitOptions
	// sessionSecrets sign (the first) and verify (all) session tokens.
	sessionSecrets [][]byte
	cors           edge.CORSOptions
	idempotency    edge.IdempotencyOptions
	bulkJobLease   time.Duration
	// events tune the change feed behind messageEvents.
	events         changefeed.Options
	eventRetention time.Duration
	// readTimeout bounds the arrival of a request's headers and body.
	readTimeout time.Duration
	// socket bounds each GraphQL WebSocket.
	socket transport.SocketOptions
	// inboxSocket bounds the platform's inbox sockets.
	inboxSocket inboxsocket.Options
	// connections bound the connections held per client address and unauthenticated.
	connections edge.ConnectionOptions
	// budget and budgetTotal bound the bytes one request and all requests in flight hold.
	budget, budgetTotal int64
	// authTTL is how long a checked credential is trusted (store.Store.AuthTTL).
	authTTL time.Duration
	// replicas are the read replicas lists read from (none: the primary).
	replicas store.ReplicaOptions
	// trusted is what trusted documents mean to /graphql (TRUSTED_DOCUMENTS).
	trusted extension.TrustedMode
}

// trustedDocumentsInterval is how often an instance reads the trusted documents' ids,
// and so how soon what documents add or remove changes reaches it.
const trustedDocumentsInterval = 2 * time.Second

// listenAddr is --addr (ADDR) when given; unset, 127.0.0.1:8080 in development, where the
// playground holds the demo key and the live inbox issues tokens without one, and :8080,
// every interface, in production.
func listenAddr(cmd *cli.Command, c config) string {
	if cmd.IsSet("addr") {
		return cmd.String("addr")
	}
	if c.development() {
		return "127.0.0.1:8080"
	}
	return ":8080"
}

// replicaOptions reads the read replicas' settings: URLs that must be MySQL's, as the
// primary must be, and a positive lag bound.
func replicaOptions(cmd *cli.Command, c config) (store.ReplicaOptions, error) {
	o := store.ReplicaOptions{MaxLag: cmd.Duration("database-read-max-lag"), ReadAfterWrite: cmd.Duration("database-read-after-write"), Pool: c.pool}
	if !cmd.IsSet("database-read-after-write") {
		o.ReadAfterWrite = 2 * o.MaxLag
	}
	list := cmd.String("database-read-urls")
	if list == "" {
		return o, nil
	}
	var err error
	if o.URLs, err = store.ParseReadURLs(list); err != nil {
		return o, usageError{err}
	}
	switch {
	case !strings.HasPrefix(c.databaseURL, "mysql://"):
		return o, usageError{errors.New("DATABASE_READ_URLS needs a MySQL primary in DATABASE_URL: SQLite has no replicas")}
	case o.MaxLag <= 0:
		return o, usageError{fmt.Errorf("DATABASE_READ_MAX_LAG must be positive, got %s", o.MaxLag)}
	case o.ReadAfterWrite < 0:
		return o, usageError{fmt.Errorf("DATABASE_READ_AFTER_WRITE must not be negative, got %s", o.ReadAfterWrite)}
	}
	return o, nil
}

// serve runs the HTTP server until ctx ends, then drains in-flight requests. It listens
// at once: until the database is reachable and migrated, /healthz says 200, /readyz 503
// and every other route 503, while connect keeps retrying.
func (a *app) serve(ctx context.Context, c config, o serveOptions) error {
	logger := newLogger(a.stderr, c)
	now := a.now
	if now == nil {
		now = time.Now
	}
	d, err := newDependencies(ctx, c, o, logger, now)
	if err != nil {
		return err
	}
	defer d.close()
	l, err := listen(o, logger, now)
	if err != nil {
		return err
	}
	logger.Info("listening", "addr", l.ln.Addr().String(), "env", c.appEnv, "database", store.RedactURL(c.databaseURL))
	logConfig(logger, c)
	keys, err := keySealer(c)
	if err != nil {
		return l.abandon(ctx, err)
	}
	switch {
	case keys.sealer.Opens() && !keys.sealer.Enabled():
		logger.Warn("API_KEY_SECRET is not set, only API_KEY_SECRET_PREVIOUS: keys sealed under it still open, but no API key can be created until API_KEY_SECRET is set")
	case !keys.sealer.Enabled():
		logger.Warn("API_KEY_SECRET is not set: new API keys are stored as hashes only, and the platform's inbox clients cannot open sessions with a subscriberHash")
	}
	st, demo, err := a.open(ctx, c, logger, keys, append([]store.OpenOption{store.WithClock(now), store.WithAuthTTL(o.authTTL),
		store.WithKeySealer(keys.sealer)}, a.storeOptions...)...)
	if err != nil {
		return l.abandon(ctx, err)
	}
	defer st.Close()
	go st.SweepSnoozes(ctx, time.Second)
	go st.SweepDeletions(ctx, time.Minute, cmp.Or(o.eventRetention, service.DefaultEventRetention))
	if err := useReplicas(st, o.replicas, logger); err != nil {
		return errors.Join(err, l.shutdown())
	}
	documents := graph.NewTrustedSet(st, logger)
	if err := documents.Refresh(ctx); err != nil {
		return errors.Join(fmt.Errorf("read trusted documents: %w", err), l.shutdown())
	}
	go documents.Watch(ctx, trustedDocumentsInterval)
	feed, err := l.startFeed(ctx, st, o.events, logger)
	if feed == nil {
		return err
	}
	svc := service.New(service.Options{Store: st, Sessions: d.sessions, Feed: feed, CursorSecret: []byte(o.cursorSecret),
		EventRetention: o.eventRetention, Now: now, Logger: logger,
		StateJobs: service.StateJobOptions{Lease: o.bulkJobLease}})
	// Bulk changes past their request run until the server stops, and stop (giving up
	// their leases) before the store closes.
	jobs, stopJobs := context.WithCancel(ctx)
	jobsStopped := make(chan struct{})
	go func() { svc.RunStateJobs(jobs); close(jobsStopped) }()
	defer func() { stopJobs(); <-jobsStopped }()
	idempotency := edge.NewIdempotency(st, logger, now, o.idempotency)
	go idempotency.PurgeExpired(ctx)
	pool := models.NewBudgetPool(o.budgetTotal)
	obs, err := newObservability(st, d.limiter, idempotency, feed, d.tracer, l.conns, pool)
	if err != nil {
		return errors.Join(err, l.shutdown())
	}
	l.handler.set(routes(svc, st, logger, now, c, demo.key, guards{limiter: d.limiter, sessionLimiter: d.sessionLimiter, addressLimiter: d.addressLimiter,
		cors: edge.CORS(o.cors), origins: o.cors.Allows(), idempotency: idempotency, timeout: o.requestTimeout,
		socket: o.socket, inboxSocket: o.inboxSocket, budget: o.budget, pool: pool, obs: obs, documents: documents, trusted: o.trusted}))
	logger.Info("ready", "requestTimeout", o.requestTimeout.String())
	a.announce(c, l.ln.Addr(), demo)
	return l.wait(ctx)
}

// dependencies are what serve builds before it listens: the rate limiters, the session
// signer and the tracer.
type dependencies struct {
	limiter, sessionLimiter *edge.RateLimiter
	// addressLimiter limits, per client address, the inbox client's keyless session
	// requests, at the rate and burst of a subscriber session.
	addressLimiter *edge.RateLimiter
	sessions       *session.Signer
	tracer         *sdktrace.TracerProvider
	logger         *slog.Logger
}

func newDependencies(ctx context.Context, c config, o serveOptions, logger *slog.Logger, now func() time.Time) (*dependencies, error) {
	d := &dependencies{logger: logger}
	var err error
	o.rateLimit.Now = now
	if d.limiter, err = edge.NewRateLimiter(o.rateLimit, logger); err != nil {
		return nil, usageError{err}
	}
	o.sessionLimit.Now = now
	o.sessionLimit.RedisKeyPrefix = edge.DefaultRedisKeyPrefix + "session:"
	if d.sessionLimiter, err = edge.NewRateLimiter(o.sessionLimit, logger); err != nil {
		d.close()
		return nil, usageError{err}
	}
	o.sessionLimit.RedisKeyPrefix = edge.DefaultRedisKeyPrefix + "address:"
	if d.addressLimiter, err = edge.NewRateLimiter(o.sessionLimit, logger); err != nil {
		d.close()
		return nil, usageError{err}
	}
	secrets := o.sessionSecrets
	if len(secrets) == 0 || len(secrets[0]) == 0 {
		secrets = [][]byte{session.RandomSecret()}
		if !c.development() {
			logger.Warn("SESSION_SECRET is not set: session tokens are signed with a random secret, die with this process and work on no other instance")
		}
	}
	if d.sessions, err = session.NewSigner(now, secrets...); err != nil {
		d.close()
		return nil, usageError{fmt.Errorf("--session-secret: %w", err)}
	}
	if d.tracer, err = newTracing(ctx, logger); err != nil {
		d.close()
		return nil, usageError{err}
	}
	return d, nil
}

// close releases what newDependencies built.
func (d *dependencies) close() {
	if d.limiter != nil {
		_ = d.limiter.Close()
	}
	if d.sessionLimiter != nil {
		_ = d.sessionLimiter.Close()
	}
	if d.addressLimiter != nil {
		_ = d.addressLimiter.Close()
	}
	if d.tracer != nil {
		shutdownTracing(d.tracer, d.logger)
	}
}

// useReplicas points st's lists at the read replicas of o, if any.
func useReplicas(st *store.Store, o store.ReplicaOptions, logger *slog.Logger) error {
	if len(o.URLs) == 0 {
		return nil
	}
	o.Logger = logger
	if err := st.UseReplicas(o); err != nil {
		return err
	}
	logger.Info("lists read from replicas", "replicas", len(o.URLs), "maxLag", o.MaxLag.String(), "readAfterWrite", o.ReadAfterWrite.String())
	return nil
}

// open connects to the database, retrying while it is unreachable, checks the API key
// secrets against it, and loads the demo into a first-run embedded database.
func (a *app) open(ctx context.Context, c config, logger *slog.Logger, keys keySecrets, opts ...store.OpenOption) (*store.Store, demo, error) {
	st, err := connect(ctx, c, logger, startBackoff, opts...)
	if err != nil {
		return nil, demo{}, err
	}
	if err := checkKeySecrets(ctx, st, keys, logger); err != nil {
		_ = st.Close()
		return nil, demo{}, err
	}
	var d demo
	if c.defaultDB && c.development() {
		if d, err = ensureDemo(ctx, st, c.databaseURL); err != nil {
			_ = st.Close()
			return nil, demo{}, fmt.Errorf("load demo data: %w", err)
		}
		counts, err := st.CountStates(ctx, demoEnvironmentID, nil, nil)
		if err != nil {
			_ = st.Close()
			return nil, demo{}, err
		}
		logger.Info("demo data", "environment", demoEnvironmentID, "messages", counts.Count(models.StateFilter{}),
			"subscribers", "user-1-00000 to user-1-00005", "apiKeyFile", filepath.Join(filepath.Dir(strings.TrimPrefix(c.databaseURL, "sqlite:")), demoKeyFile))
	}
	return st, d, nil
}

// announce prints, in development, where to start: plain lines, not log records, so they
// paste as they are.
func (a *app) announce(c config, addr net.Addr, d demo) {
	if c.development() {
		base := "http://" + displayAddr(addr)
		fmt.Fprintf(a.stderr, "\nGraphQL playground: %s/\n", base)
		if d.key != "" {
			fmt.Fprintf(a.stderr, "Live inbox: %s/inbox\n", base)
			fmt.Fprintf(a.stderr, "Inbox component: applicationIdentifier %s, backendUrl %s, socketUrl ws://%s/v1/inbox/socket\n",
				d.applicationIdentifier, base, displayAddr(addr))
			fmt.Fprintf(a.stderr, "Try: curl -H \"Authorization: ApiKey %s\" %s/v1/messages\n\n", d.key, base)
		}
	}
	if a.ready != nil {
		a.ready(addr.String())
	}
}

// displayAddr turns a wildcard listen address into one a person can paste into curl.
func displayAddr(addr net.Addr) string {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok || tcp.IP.IsUnspecified() {
		if ok {
			return fmt.Sprintf("localhost:%d", tcp.Port)
		}
	}
	return addr.String()
}

// pingInterval is --websocket-ping as SocketOptions takes it: 0 there would mean the
// default, so the flag's 0 (never) is negative.
func pingInterval(d time.Duration) time.Duration {
	if d <= 0 {
		return -1
	}
	return d
}
