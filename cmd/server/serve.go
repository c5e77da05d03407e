package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/urfave/cli/v3"

	"messages/cmd/server/edge"
	"messages/graph"
	"messages/graph/playground"
	"messages/models"
	"messages/models/changefeed"
	"messages/models/session"
	"messages/models/store"
	"messages/rest"
)

// shutdownGrace is how long in-flight requests get to finish after SIGTERM.
const shutdownGrace = 20 * time.Second

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
			&cli.FloatFlag{Name: "session-rate-limit", Usage: "requests per second allowed to each subscriber session, on top of its environment's limit", Value: edge.DefaultSessionRateLimit, Sources: cli.EnvVars("SESSION_RATE_LIMIT")},
			&cli.IntFlag{Name: "session-rate-burst", Usage: "requests a subscriber session may send at once", Value: edge.DefaultSessionRateBurst, Sources: cli.EnvVars("SESSION_RATE_BURST")},
			&cli.StringFlag{Name: "cors-allowed-origins", Usage: "comma-separated browser origins allowed to call /graphql and /v1 (https://app.example.com; * for any); in development any http://localhost:* and http://127.0.0.1:* origin is allowed too", Sources: cli.EnvVars("CORS_ALLOWED_ORIGINS")},
			&cli.DurationFlag{Name: "events-poll-interval", Usage: "how often each instance reads the messages changed since its last read, for messageEvents subscriptions", Value: changefeed.DefaultInterval, Sources: cli.EnvVars("EVENTS_POLL_INTERVAL")},
			&cli.DurationFlag{Name: "events-lookback", Usage: "how far back each read of changes looks again, for transactions that commit after rows written later (longer writers register a hold, as import does)", Value: changefeed.DefaultLookback, Sources: cli.EnvVars("EVENTS_LOOKBACK")},
			&cli.IntFlag{Name: "events-buffer", Usage: "changes queued for a subscription whose client reads more slowly than they come; past it they are read again from the database when the client catches up", Value: changefeed.DefaultBuffer, Sources: cli.EnvVars("EVENTS_BUFFER")},
			&cli.DurationFlag{Name: "events-slow-timeout", Usage: "how long a subscription's client may read nothing while events wait before it is closed (SLOW_CONSUMER)", Value: changefeed.DefaultSlowTimeout, Sources: cli.EnvVars("EVENTS_SLOW_TIMEOUT")},
			&cli.DurationFlag{Name: "websocket-ping", Usage: "how often the server pings each GraphQL WebSocket, closing those that do not answer (0: never; clients keep sockets alive with their own pings, as graphql-ws's keepAlive does)", Sources: cli.EnvVars("WEBSOCKET_PING_INTERVAL")},
			&cli.DurationFlag{Name: "read-timeout", Usage: "how long a request's headers and body may take to arrive; a stream's transport lifts it only once the stream is authenticated and its request read", Value: defaultReadTimeout, Sources: cli.EnvVars("READ_TIMEOUT")},
			&cli.DurationFlag{Name: "websocket-init-timeout", Usage: "how long a GraphQL WebSocket may stay open without connection_init before it is closed with 4408", Value: graph.DefaultSocketOptions.InitTimeout, Sources: cli.EnvVars("WEBSOCKET_INIT_TIMEOUT")},
			&cli.IntFlag{Name: "websocket-max-subscriptions", Usage: "subscriptions one GraphQL WebSocket may hold at once; one more closes it with 4429", Value: graph.DefaultSocketOptions.MaxSubscriptions, Sources: cli.EnvVars("WEBSOCKET_MAX_SUBSCRIPTIONS")},
			&cli.IntFlag{Name: "websocket-max-in-flight", Usage: "queries and mutations one GraphQL WebSocket may run at once; one more closes it with 4429", Value: graph.DefaultSocketOptions.MaxInFlight, Sources: cli.EnvVars("WEBSOCKET_MAX_IN_FLIGHT")},
			&cli.IntFlag{Name: "max-connections-per-address", Usage: "connections one client address may hold at once; more are answered 429 and closed (0: unbounded; behind a load balancer every client has its address)", Value: edge.DefaultMaxConnectionsPerAddress, Sources: cli.EnvVars("MAX_CONNECTIONS_PER_ADDRESS")},
			&cli.IntFlag{Name: "max-unauthenticated-connections", Usage: "connections, all addresses together, on which nothing was authenticated yet; more are answered 503 and closed (0: unbounded)", Value: edge.DefaultMaxUnauthenticatedConnections, Sources: cli.EnvVars("MAX_UNAUTHENTICATED_CONNECTIONS")},
			&cli.IntFlag{Name: "response-budget", Usage: "bytes one request or GraphQL operation may hold in the records it reads and the response it writes; past it the client is told to ask for less (422, RESPONSE_TOO_LARGE)", Value: models.DefaultRequestBudget, Sources: cli.EnvVars("RESPONSE_BUDGET")},
			&cli.IntFlag{Name: "response-budget-total", Usage: "bytes every request in flight may hold together; past it requests are refused with 503 until others finish (0: unbounded)", Value: models.DefaultBudgetPool, Sources: cli.EnvVars("RESPONSE_BUDGET_TOTAL")},
			&cli.DurationFlag{Name: "events-retention", Usage: "how old a messageEvents cursor may be to resume from", Value: graph.DefaultEventRetention, Sources: cli.EnvVars("EVENTS_RETENTION")},
			&cli.DurationFlag{Name: "idempotency-ttl", Usage: "how long idempotency keys and their responses are kept", Value: edge.DefaultIdempotencyOptions.TTL, Sources: cli.EnvVars("IDEMPOTENCY_TTL")},
			&cli.StringFlag{Name: "database-read-urls", Usage: "comma-separated mysql:// URLs of read replicas of DATABASE_URL; lists, cursors and counts read from one that is up and within --database-read-max-lag, everything else from the primary (unset: all from the primary)", Sources: cli.EnvVars("DATABASE_READ_URLS")},
			&cli.DurationFlag{Name: "database-read-max-lag", Usage: "how far behind the primary a read replica may be (Seconds_Behind_Master, checked every second) and still serve lists; one further behind, stopped or down is skipped for the primary", Value: store.DefaultReplicaMaxLag, Sources: cli.EnvVars("DATABASE_READ_MAX_LAG")},
			&cli.DurationFlag{Name: "database-read-after-write", Usage: "how long a caller's lists read from the primary after it wrote through this instance, so it sees its own writes (unset: twice --database-read-max-lag; 0: never)", Value: 2 * store.DefaultReplicaMaxLag, Sources: cli.EnvVars("DATABASE_READ_AFTER_WRITE")},
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
				events:         changefeed.Options{Interval: cmd.Duration("events-poll-interval"), Lookback: cmd.Duration("events-lookback"), Buffer: cmd.Int("events-buffer"), SlowTimeout: cmd.Duration("events-slow-timeout")},
				eventRetention: cmd.Duration("events-retention"),
				socket: graph.SocketOptions{Ping: cmd.Duration("websocket-ping"), InitTimeout: cmd.Duration("websocket-init-timeout"),
					MaxSubscriptions: cmd.Int("websocket-max-subscriptions"), MaxInFlight: cmd.Int("websocket-max-in-flight")},
				connections: edge.ConnectionOptions{PerAddress: cmd.Int("max-connections-per-address"), Unauthenticated: cmd.Int("max-unauthenticated-connections")},
				readTimeout: cmd.Duration("read-timeout"),
				budget:      int64(cmd.Int("response-budget")),
				budgetTotal: int64(cmd.Int("response-budget-total")),
				authTTL:     cmd.Duration("auth-cache-ttl"),
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
	// events tune the change feed behind messageEvents.
	events         changefeed.Options
	eventRetention time.Duration
	// readTimeout bounds the arrival of a request's headers and body.
	readTimeout time.Duration
	// socket bounds each GraphQL WebSocket.
	socket graph.SocketOptions
	// connections bound the connections held per client address and unauthenticated.
	connections edge.ConnectionOptions
	// budget and budgetTotal bound the bytes one request and all requests in flight hold.
	budget, budgetTotal int64
	// authTTL is how long a checked credential is trusted (store.Store.AuthTTL).
	authTTL time.Duration
	// replicas are the read replicas lists read from (none: the primary).
	replicas store.ReplicaOptions
}

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
	logConfig(logger, c)
	// The program's one clock, for the store, the resolvers and the edge's guards.
	now := a.now
	if now == nil {
		now = time.Now
	}
	o.rateLimit.Now = now
	limiter, err := edge.NewRateLimiter(o.rateLimit, logger)
	if err != nil {
		return usageError{err}
	}
	defer limiter.Close()
	o.sessionLimit.Now = now
	o.sessionLimit.RedisKeyPrefix = edge.DefaultRedisKeyPrefix + "session:"
	sessionLimiter, err := edge.NewRateLimiter(o.sessionLimit, logger)
	if err != nil {
		return usageError{err}
	}
	defer sessionLimiter.Close()
	if len(o.sessionSecrets) == 0 || len(o.sessionSecrets[0]) == 0 {
		o.sessionSecrets = [][]byte{session.RandomSecret()}
		if !c.development() {
			logger.Warn("SESSION_SECRET is not set: session tokens are signed with a random secret, die with this process and work on no other instance")
		}
	}
	sessions, err := session.NewSigner(now, o.sessionSecrets...)
	if err != nil {
		return usageError{fmt.Errorf("--session-secret: %w", err)}
	}
	tracer, err := newTracing(ctx, logger)
	if err != nil {
		return usageError{err}
	}
	defer shutdownTracing(tracer, logger)
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return err
	}
	conns := edge.NewConnections(o.connections, rest.NewErrorWriter(logger, now))
	ln = conns.Listen(ln)
	handler := &switchHandler{}
	handler.set(startingRoutes(logger, now))
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       o.readTimeout,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    128 << 10, // a URI up to edge.MaxURIBytes (longer is 414) and the usual headers; past this net/http answers 431
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
		ConnContext:       conns.ConnContext,
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	logger.Info("listening", "addr", ln.Addr().String(), "env", c.appEnv, "database", store.RedactURL(c.databaseURL))

	st, demoKey, err := a.open(ctx, c, logger)
	if err != nil {
		if serr := shutdown(srv, errc, logger); serr != nil {
			return serr
		}
		if ctx.Err() != nil {
			// Stopped while waiting for the database: a clean exit, not a failure.
			return nil
		}
		return err
	}
	defer st.Close()
	st.Now = now
	st.AuthTTL = o.authTTL
	if len(o.replicas.URLs) > 0 {
		o.replicas.Logger = logger
		if err := st.UseReplicas(o.replicas); err != nil {
			return errors.Join(err, shutdown(srv, errc, logger))
		}
		logger.Info("lists read from replicas", "replicas", len(o.replicas.URLs), "maxLag", o.replicas.MaxLag.String(), "readAfterWrite", o.replicas.ReadAfterWrite.String())
	}

	o.events.Logger = logger
	feed := changefeed.New(st, o.events)
	go func() { _ = feed.Run(ctx) }()
	// Serve once the feed knows where it starts, so a change made right after a client
	// subscribed is never taken for one made before the feed began.
	select {
	case <-feed.Started():
	case <-ctx.Done():
		return shutdown(srv, errc, logger)
	}
	// Streams are not requests Shutdown can wait for: end them, and their clients
	// reconnect to another instance.
	srv.RegisterOnShutdown(feed.Shutdown)
	resolver := &graph.Resolver{Store: st, Logger: logger, Now: now, CursorSecret: []byte(o.cursorSecret), Sessions: sessions,
		Feed: feed, EventRetention: o.eventRetention}
	idempotency := edge.NewIdempotency(resolver, logger, now, o.idempotency)
	go idempotency.PurgeExpired(ctx)
	pool := models.NewBudgetPool(o.budgetTotal)
	obs, err := newObservability(st, limiter, idempotency, feed, tracer, conns, pool)
	if err != nil {
		return errors.Join(err, shutdown(srv, errc, logger))
	}
	handler.set(routes(resolver, c, demoKey, guards{limiter: limiter, sessionLimiter: sessionLimiter, cors: edge.CORS(o.cors), origins: o.cors.Allows(),
		idempotency: idempotency, timeout: o.requestTimeout, socket: o.socket, budget: o.budget, pool: pool, obs: obs}))
	logger.Info("ready", "requestTimeout", o.requestTimeout.String())
	if c.development() {
		// Plain lines, not log records, so they paste as they are.
		base := "http://" + displayAddr(ln.Addr())
		fmt.Fprintf(a.stderr, "\nGraphQL playground: %s/\n", base)
		if demoKey != "" {
			fmt.Fprintf(a.stderr, "Live inbox: %s/inbox\n", base)
			fmt.Fprintf(a.stderr, "Try: curl -H \"Authorization: ApiKey %s\" %s/v1/messages\n\n", demoKey, base)
		}
	}
	if a.ready != nil {
		a.ready(ln.Addr().String())
	}

	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	return shutdown(srv, errc, logger)
}

// open connects to the database, retrying while it is unreachable, and loads the demo
// into a first-run embedded database.
func (a *app) open(ctx context.Context, c config, logger *slog.Logger) (*store.Store, string, error) {
	st, err := connect(ctx, c, logger, startBackoff)
	if err != nil {
		return nil, "", err
	}
	var demoKey string
	if c.defaultDB && c.development() {
		if demoKey, err = ensureDemo(ctx, st, c.databaseURL); err != nil {
			_ = st.Close()
			return nil, "", fmt.Errorf("load demo data: %w", err)
		}
	}
	return st, demoKey, nil
}

// shutdown stops accepting, gives in-flight requests shutdownGrace to finish, and
// returns once the server has stopped.
func shutdown(srv *http.Server, errc <-chan error, logger *slog.Logger) error {
	logger.Info("shutting down", "grace", shutdownGrace.String())
	ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// guards are the edge's shared state and settings, built once by serve.
type guards struct {
	limiter        *edge.RateLimiter
	sessionLimiter *edge.RateLimiter
	cors           edge.Middleware
	origins        func(origin string) bool
	idempotency    *edge.Idempotency
	timeout        time.Duration
	socket         graph.SocketOptions
	budget         int64
	pool           *models.BudgetPool
	obs            *observability
}

// routes wires every endpoint. /v1 and /graphql sit behind the API guards of the edge,
// each mount with its own error shape; everything answers with a request id, in gzip
// when asked, and a panic anywhere becomes a 500 with an errorId.
func routes(r *graph.Resolver, c config, demoKey string, g guards) http.Handler {
	rs := rest.NewServer(r)
	v1Errors := rs.Errors()
	gqlErrors := v1Errors.WithErrors(graph.ErrorsArray)
	e := edge.New(edge.Options{
		Logger: r.Logger, Now: r.Now, Auth: r,
		Limiter: g.limiter, SessionLimiter: g.sessionLimiter, CORS: g.cors, Origins: g.origins, Idempotency: g.idempotency, Timeout: g.timeout,
		Budget: g.budget, BudgetPool: g.pool,
		Metrics: g.obs.httpMetrics(), Trace: g.obs.traceMiddleware(),
		Errors: v1Errors,
	})
	g.obs.watched = e.Watched
	gql := graph.NewHandler(r, graph.HandlerOptions{Introspection: c.introspection, Suggestions: c.development(), Limits: graph.DefaultLimits,
		Extensions: g.obs.graphqlExtensions(), Gate: e.Gate(), Socket: g.socket})
	v1 := rs.Routes()
	mux := http.NewServeMux()
	mux.Handle("/v1/", e.API(edge.Mount{Errors: v1Errors, Idempotency: rest.NewIdempotencyPolicy()}, v1))
	mux.Handle("/graphql", e.API(edge.Mount{Errors: gqlErrors, DeferredIdempotency: graph.IdempotencyPolicy{}, WebSockets: true, JSONBodies: true},
		edge.Methods(http.MethodGet, http.MethodPost)(gql)))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeStatus(w, http.StatusOK, "ok")
	})
	mux.HandleFunc("GET /readyz", readyz(r.Store))
	mux.Handle("GET /metrics", g.obs.metricsHandler())
	mux.Handle("GET /openapi.json", rest.OpenAPIHandler())
	if c.development() {
		headers := map[string]string{}
		if demoKey != "" {
			headers["Authorization"] = "ApiKey " + demoKey
		}
		// Only by a loopback name: the page holds the demo key.
		pg := edge.LoopbackHost(v1Errors)(playground.Handler(playground.Options{Title: "Messages GraphQL", Endpoint: "/graphql", Headers: headers}))
		mux.Handle("GET /{$}", pg)
		mux.Handle("GET "+playground.AssetPath, pg)
		mountInbox(mux, r, demoKey, v1Errors)
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, req *http.Request) {
		v1Errors.WriteError(w, req, rest.RouteNotFound(req))
	})
	return e.Around(mux, mux, v1)
}

func writeStatus(w http.ResponseWriter, status int, text string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, "{\"status\":%q}\n", text)
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
