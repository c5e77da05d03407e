package main

import (
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"messages/cmd/server/edge"
	"messages/graph"
	"messages/graph/extension"
	"messages/graph/playground"
	"messages/graph/transport"
	"messages/models"
	"messages/models/service"
	"messages/models/store"
	"messages/rest"
	"messages/rest/inboxsocket"
)

// guards are the edge's shared state and settings, built once by serve.
type guards struct {
	limiter        *edge.RateLimiter
	sessionLimiter *edge.RateLimiter
	addressLimiter *edge.RateLimiter
	cors           edge.Middleware
	origins        func(origin string) bool
	idempotency    *edge.Idempotency
	timeout        time.Duration
	socket         transport.SocketOptions
	inboxSocket    inboxsocket.Options
	budget         int64
	pool           *models.BudgetPool
	obs            *observability
	documents      *extension.TrustedSet
	trusted        extension.TrustedMode
}

// routes wires every endpoint. /v1 and /graphql sit behind the API guards of the edge,
// each mount with its own error shape, both over the one service; everything answers with
// a request id, in gzip when asked, and a panic anywhere becomes a 500 with an errorId.
func routes(svc *service.Service, st *store.Store, logger *slog.Logger, now func() time.Time, c config, demoKey string, g guards) http.Handler {
	rs := rest.NewServer(svc, logger, now)
	v1Errors := rs.Errors()
	gqlErrors := v1Errors.WithErrors(graph.ErrorsArray)
	e := edge.New(edge.Options{
		Logger: logger, Now: now, Auth: svc,
		Limiter: g.limiter, SessionLimiter: g.sessionLimiter, AddressLimiter: g.addressLimiter, CORS: g.cors, Origins: g.origins, Idempotency: g.idempotency, Timeout: g.timeout, Shards: st,
		Budget: g.budget, BudgetPool: g.pool,
		Metrics: g.obs.httpMetrics(), Trace: g.obs.traceMiddleware(),
		Errors: v1Errors,
	})
	g.obs.watched = e.Watched
	gql := graph.NewHandler(&graph.Resolver{Service: svc, Logger: logger, Now: now}, graph.HandlerOptions{Introspection: c.introspection,
		Suggestions: c.development(), Limits: graph.DefaultLimits, Extensions: g.obs.graphqlExtensions(), Gate: e.Gate(), Socket: g.socket,
		TrustedDocuments: g.documents, Trusted: g.trusted})
	v1 := rs.Routes()
	mux := http.NewServeMux()
	mux.Handle("/v1/", e.API(edge.Mount{Errors: v1Errors, Idempotency: rest.NewIdempotencyPolicy(), Keyless: rest.Keyless}, v1))
	// The platform's inbox client opens its socket with the session token in the query.
	mux.Handle("/v1/inbox/socket", e.API(edge.Mount{Errors: v1Errors, TokenQuery: "token"},
		inboxsocket.New(svc, e.Gate(), v1Errors, logger, g.inboxSocket)))
	mux.Handle("/graphql", e.API(edge.Mount{Errors: gqlErrors, DeferredIdempotency: graph.IdempotencyPolicy{}, WebSockets: true, JSONBodies: true},
		edge.Methods(http.MethodGet, http.MethodPost)(gql)))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeStatus(w, http.StatusOK, "ok")
	})
	mux.HandleFunc("GET /readyz", readyz(st))
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
		mountInbox(mux, svc, demoKey, v1Errors)
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
