package main

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"messages/graph"
	"messages/models"
	"messages/rest"
)

// observability is what serve offers the people who run it: Prometheus metrics at
// /metrics, always, and OpenTelemetry traces when a tracer provider is configured.
type observability struct {
	registry *prometheus.Registry
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	graphql  *graph.Metrics
	// tracer is nil when tracing is off; nothing is traced then.
	tracer *sdktrace.TracerProvider
	// routers name the route of a request for labels and span names; the last one that
	// matches wins, so the /v1 routes inside the /v1/ subtree are told apart.
	routers []router
}

// router is what http.ServeMux offers to find a request's pattern without serving it.
type router interface {
	Handler(r *http.Request) (h http.Handler, pattern string)
}

// newObservability registers the metrics on a registry of its own: requests per route,
// GraphQL operations, the store's connection pool, rate-limit refusals, idempotent
// replays and the Go runtime and process. With tp, it also traces the store's queries.
func newObservability(store *models.Store, limiter *rest.RateLimiter, rs *rest.Server, tp *sdktrace.TracerProvider) (*observability, error) {
	reg := prometheus.NewRegistry()
	o := &observability{
		registry: reg,
		tracer:   tp,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "http_requests_total",
			Help: "HTTP requests by route (the matched pattern, or \"other\"), method and status class.",
		}, []string{"route", "method", "status_class"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "http_request_duration_seconds",
			Help:    "Time to answer an HTTP request, by route and method.",
			Buckets: prometheus.DefBuckets,
		}, []string{"route", "method"}),
	}
	sqlDB, err := store.DB().DB()
	if err != nil {
		return nil, err
	}
	cs := []prometheus.Collector{
		o.requests, o.duration,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		collectors.NewDBStatsCollector(sqlDB, "messages"),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "idempotency_replays_total",
			Help: "Stored responses sent again to a request retried with the same Idempotency-Key.",
		}, func() float64 { return float64(rs.Idempotency().Replays()) }),
	}
	if limiter != nil {
		cs = append(cs,
			prometheus.NewCounterFunc(prometheus.CounterOpts{
				Name: "ratelimit_refused_total",
				Help: "Requests refused with 429 because their environment was over its rate limit.",
			}, func() float64 { return float64(limiter.Refused()) }),
			prometheus.NewCounterFunc(prometheus.CounterOpts{
				Name: "ratelimit_failed_open_total",
				Help: "Requests let through unlimited because Redis did not answer in time.",
			}, func() float64 { return float64(limiter.FailedOpen()) }),
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{
				Name: "ratelimit_environments",
				Help: "Rate-limit buckets held in process (0 when they live in Redis).",
			}, func() float64 { return float64(limiter.Environments()) }),
		)
	}
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	if o.graphql, err = graph.NewMetrics(reg, graph.MetricsOptions{}); err != nil {
		return nil, err
	}
	if tp != nil {
		if err := store.Trace(tp); err != nil {
			return nil, err
		}
	}
	return o, nil
}

// graphqlExtensions are the gqlgen extensions that measure and trace operations.
func (o *observability) graphqlExtensions() []graphql.HandlerExtension {
	if o == nil {
		return nil
	}
	exts := []graphql.HandlerExtension{o.graphql}
	if o.tracer != nil {
		exts = append(exts, graph.NewTracing(o.tracer))
	}
	return exts
}

// metricsHandler serves the registry in the Prometheus text format. Compression is left
// to the gzip middleware every route already has.
func (o *observability) metricsHandler() http.Handler {
	if o == nil {
		return http.NotFoundHandler()
	}
	return promhttp.HandlerFor(o.registry, promhttp.HandlerOpts{
		Registry:           o.registry,
		ErrorHandling:      promhttp.ContinueOnError,
		DisableCompression: true,
	})
}

// instrument counts and times every request and, with tracing on, spans it. routers are
// the ServeMuxes under next, outermost first, that name a request's route.
func (o *observability) instrument(next http.Handler, routers ...http.Handler) http.Handler {
	if o == nil {
		return next
	}
	for _, h := range routers {
		if r, ok := h.(router); ok {
			o.routers = append(o.routers, r)
		}
	}
	if o.tracer != nil {
		next = o.trace(next)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		route, method := o.route(r), methodLabel(r.Method)
		rec := &statusRecorder{ResponseWriter: w}
		next.ServeHTTP(rec, r.WithContext(context.WithValue(r.Context(), routeKey{}, route)))
		o.requests.WithLabelValues(route, method, statusClass(rec.status)).Inc()
		o.duration.WithLabelValues(route, method).Observe(time.Since(start).Seconds())
	})
}

// routeKey carries the request's route label from instrument to the tracing layer.
type routeKey struct{}

// otherRoute labels requests that match no route of their own: unknown paths.
const otherRoute = "other"

// route is the pattern the request matches, without its method ("/v1/messages"), or
// "other" for the catch-all. Patterns come from the code, never from the request, so the
// label stays bounded whatever paths clients send.
func (o *observability) route(r *http.Request) string {
	if r.Method == http.MethodConnect {
		// The mux names a CONNECT redirect by the request's own path: not a bounded label.
		return otherRoute
	}
	var pattern string
	for _, m := range o.routers {
		if _, p := m.Handler(r); p != "" {
			pattern = p
		}
	}
	if i := strings.IndexByte(pattern, ' '); i >= 0 {
		pattern = pattern[i+1:]
	}
	if pattern == "" || pattern == "/" {
		return otherRoute
	}
	return pattern
}

// methodLabel keeps the method label to the standard methods.
func methodLabel(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return m
	}
	return "OTHER"
}

// statusClass is "2xx" for 200 to 299 and so on; a handler that wrote nothing sent 200.
func statusClass(status int) string {
	switch {
	case status == 0:
		return "2xx"
	case status >= 100 && status < 600:
		return string(rune('0'+status/100)) + "xx"
	}
	return "other"
}
