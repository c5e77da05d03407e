package main

import (
	"context"
	"net/http"

	"github.com/99designs/gqlgen/graphql"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"messages/cmd/server/edge"
	"messages/graph/extension"
	"messages/models"
	"messages/models/changefeed"
	"messages/models/store"
)

// observability is what serve offers the people who run it: Prometheus metrics at
// /metrics, always, and OpenTelemetry traces when a tracer provider is configured.
type observability struct {
	registry *prometheus.Registry
	http     *edge.Metrics
	graphql  *extension.Metrics
	// tracer is nil when tracing is off; nothing is traced then.
	tracer *sdktrace.TracerProvider
	// watched is the number of open streams whose credential is watched, once the edge
	// that watches them is built.
	watched func() int
}

// newObservability registers the metrics on a registry of its own: requests per route,
// GraphQL operations, the store's connection pool, rate-limit refusals, idempotent
// replays, write transactions retried after a conflict, reads served by replicas, the
// change feed behind subscriptions, the connections held and refused, the bytes requests
// hold, and the Go runtime and process. With tp, it also traces the store's queries.
func newObservability(st *store.Store, limiter *edge.RateLimiter, idempotency *edge.Idempotency, feed *changefeed.Feed, tp *sdktrace.TracerProvider,
	conns *edge.Connections, pool *models.BudgetPool) (*observability, error) {
	reg := prometheus.NewRegistry()
	o := &observability{registry: reg, tracer: tp}
	var err error
	if o.http, err = edge.NewMetrics(reg); err != nil {
		return nil, err
	}
	sqlDB, err := st.DB().DB()
	if err != nil {
		return nil, err
	}
	cs := []prometheus.Collector{
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		collectors.NewDBStatsCollector(sqlDB, "messages"),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "db_statements_total",
			Help: "SQL statements the store sent to the database (BEGIN and COMMIT aside).",
		}, func() float64 { return float64(st.Statements()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "db_statement_seconds_total",
			Help: "Time the store's statements took, each from its sending until the database's answer arrived (BEGIN and COMMIT aside).",
		}, func() float64 { return st.StatementTime().Seconds() }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "idempotency_replays_total",
			Help: "Stored responses sent again to a request retried with the same Idempotency-Key.",
		}, func() float64 { return float64(idempotency.Replays()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "db_transaction_retries_total",
			Help: "Write transactions run again after losing a conflict (deadlock, lock wait timeout, Galera certification failure).",
		}, func() float64 { return float64(st.Retries().Retries.Load()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "db_transaction_retries_exhausted_total",
			Help: "Write transactions that lost a conflict on every attempt (or reached their deadline) and were answered 503.",
		}, func() float64 { return float64(st.Retries().Exhausted.Load()) }),
	}
	if feed != nil {
		stats := feed.Stats()
		counter := func(name, help string, v func() int64) prometheus.Collector {
			return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, func() float64 { return float64(v()) })
		}
		cs = append(cs,
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{
				Name: "events_subscriptions",
				Help: "messageEvents subscriptions open on this instance.",
			}, func() float64 { return float64(feed.Subscriptions()) }),
			counter("events_polls_total", "Polls of the change feed (one indexed query each, whatever the subscriptions).", stats.Polls.Load),
			counter("events_poll_errors_total", "Polls that failed (the database was unreachable); the next resumes where the last ended.", stats.PollErrors.Load),
			counter("events_positions_read_total", "Index entries the polls read, the re-read lookback window included.", stats.Positions.Load),
			counter("events_changes_total", "Changes the feed published to this instance's subscriptions.", stats.Changes.Load),
			counter("events_delivered_total", "Events sent to clients.", stats.Delivered.Load),
			counter("events_refills_total", "Bursts a subscription's queue could not hold, read again from the database.", stats.Refills.Load),
			counter("events_slow_consumers_total", "Subscriptions closed because their client read nothing for EVENTS_SLOW_TIMEOUT.", stats.SlowConsumers.Load),
		)
	}
	cs = append(cs, replicaMetrics(st)...)
	cs = append(cs, o.guardMetrics(conns, pool)...)
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
	if o.graphql, err = extension.NewMetrics(reg, extension.MetricsOptions{}); err != nil {
		return nil, err
	}
	if tp != nil {
		if err := st.Trace(tp); err != nil {
			return nil, err
		}
	}
	return o, nil
}

// guardMetrics count what the guards against hostile clients hold and refuse:
// connections (open, unauthenticated, refused per address or for being unauthenticated),
// the bytes requests in flight hold and the requests refused for it, and the streams
// whose credential is watched.
func (o *observability) guardMetrics(conns *edge.Connections, pool *models.BudgetPool) []prometheus.Collector {
	var cs []prometheus.Collector
	if conns != nil {
		refused := func(reason string, v func() uint64) prometheus.Collector {
			return prometheus.NewCounterFunc(prometheus.CounterOpts{
				Name:        "http_connections_refused_total",
				Help:        "Connections answered and closed before being read: their address held MAX_CONNECTIONS_PER_ADDRESS (per_address), or MAX_UNAUTHENTICATED_CONNECTIONS were open without a credential (unauthenticated).",
				ConstLabels: prometheus.Labels{"reason": reason},
			}, func() float64 { return float64(v()) })
		}
		cs = append(cs,
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "http_connections_open", Help: "Connections open, WebSockets included."},
				func() float64 { return float64(conns.Open()) }),
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "http_connections_unauthenticated", Help: "Open connections on which nothing was authenticated yet."},
				func() float64 { return float64(conns.Unauthenticated()) }),
			refused("per_address", func() uint64 { n, _ := conns.Refused(); return n }),
			refused("unauthenticated", func() uint64 { _, n := conns.Refused(); return n }),
		)
	}
	if pool != nil {
		cs = append(cs,
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "request_budget_bytes_in_use", Help: "Bytes of records and responses the requests in flight hold (RESPONSE_BUDGET_TOTAL bounds it)."},
				func() float64 { return float64(pool.InUse()) }),
			prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "request_budget_refused_total", Help: "Requests answered 503 because the requests in flight held RESPONSE_BUDGET_TOTAL."},
				func() float64 { return float64(pool.Refused()) }),
		)
	}
	cs = append(cs, prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "streams_watched", Help: "Open WebSockets and event streams whose credential is checked again every second."},
		func() float64 {
			if o.watched == nil {
				return 0
			}
			return float64(o.watched())
		}))
	return cs
}

// replicaMetrics say where lists were read and what each read replica's last check
// found; none without replicas.
func replicaMetrics(st *store.Store) []prometheus.Collector {
	reads := st.ReplicaReads()
	if reads == nil {
		return nil
	}
	served := func(by, reason string, v func() uint64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name:        "db_list_reads_total",
			Help:        "Lists, cursor pages and counts read, by where: a replica, or the primary because the caller wrote within DATABASE_READ_AFTER_WRITE, no replica was ready, or the read failed on a replica.",
			ConstLabels: prometheus.Labels{"served_by": by, "reason": reason},
		}, func() float64 { return float64(v()) })
	}
	cs := []prometheus.Collector{
		served("replica", "ready", reads.Replica.Load),
		served("primary", "after_write", reads.AfterWrite.Load),
		served("primary", "no_replica_ready", reads.NoReplica.Load),
		served("primary", "replica_failed", reads.Failed.Load),
	}
	for addr, pool := range st.ReplicaPools() {
		cs = append(cs, collectors.NewDBStatsCollector(pool, "replica "+addr))
	}
	for i, r := range st.Replicas() {
		status := func() store.ReplicaStatus { return st.Replicas()[i] }
		cs = append(cs, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name:        "db_replica_lag_seconds",
			Help:        "How far behind the primary each read replica was at its last check (Seconds_Behind_Master); -1 when it was not replicating or did not answer.",
			ConstLabels: prometheus.Labels{"replica": r.Addr},
		}, func() float64 {
			if lag := status().Lag; lag >= 0 {
				return lag.Seconds()
			}
			return -1
		}))
		for _, state := range []string{store.ReplicaUnchecked, store.ReplicaReady, store.ReplicaLagging, store.ReplicaStopped, store.ReplicaDown} {
			cs = append(cs, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
				Name:        "db_replica_state",
				Help:        "1 for the state each read replica's last check found: ready (serving lists), lagging (beyond DATABASE_READ_MAX_LAG), stopped (not replicating), down (unreachable) or unchecked.",
				ConstLabels: prometheus.Labels{"replica": r.Addr, "state": state},
			}, func() float64 {
				if status().State == state {
					return 1
				}
				return 0
			}))
		}
	}
	return cs
}

// graphqlExtensions are the gqlgen extensions that measure and trace operations.
func (o *observability) graphqlExtensions() []graphql.HandlerExtension {
	if o == nil {
		return nil
	}
	exts := []graphql.HandlerExtension{o.graphql}
	if o.tracer != nil {
		exts = append(exts, extension.NewTracing(o.tracer))
	}
	return exts
}

// httpMetrics counts and times requests at the edge; nil without observability.
func (o *observability) httpMetrics() *edge.Metrics {
	if o == nil {
		return nil
	}
	return o.http
}

// traceMiddleware is the edge's tracing guard (see trace in tracing.go), or nil when
// tracing is off. It hands trace the route the edge's metrics named.
func (o *observability) traceMiddleware() edge.Middleware {
	if o == nil || o.tracer == nil {
		return nil
	}
	return func(next http.Handler) http.Handler {
		traced := o.trace(next)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			traced.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), routeKey{}, edge.RouteFrom(r))))
		})
	}
}

// metricsHandler serves the registry in the Prometheus text format. Compression is left
// to the edge's, which every route already has.
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

// routeKey carries the request's route label to the tracing wrapper (routeFrom).
type routeKey struct{}

// otherRoute labels requests that match no route of their own: unknown paths.
const otherRoute = edge.OtherRoute

// methodLabel keeps the method label to the standard methods.
func methodLabel(m string) string { return edge.MethodLabel(m) }
