package edge

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics counts and times HTTP requests for Prometheus, by route, method and status
// class.
type Metrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

// NewMetrics registers http_requests_total and http_request_duration_seconds on reg.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
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
	for _, c := range []prometheus.Collector{m.requests, m.duration} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// Router is what http.ServeMux offers to find a request's pattern without serving it.
type Router interface {
	Handler(r *http.Request) (h http.Handler, pattern string)
}

// Instrument counts and times every request, and puts its route in the context for the
// guards inside (RouteFrom). routers are the ServeMuxes under it, outermost first; the
// last one that matches names the route, so the /v1 routes inside the /v1/ subtree are
// told apart. A nil Metrics measures nothing.
func (m *Metrics) Instrument(now func() time.Time, routers ...Router) Middleware {
	if m == nil {
		return nil
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := now()
			route, method := routeOf(r, routers), MethodLabel(r.Method)
			var status int
			next.ServeHTTP(recordStatus(w, &status), r.WithContext(context.WithValue(r.Context(), routeKey{}, route)))
			m.requests.WithLabelValues(route, method, statusClass(status)).Inc()
			m.duration.WithLabelValues(route, method).Observe(now().Sub(start).Seconds())
		})
	}
}

// routeKey carries the request's route label from Instrument to the guards inside.
type routeKey struct{}

// OtherRoute labels requests that match no route of their own: unknown paths.
const OtherRoute = "other"

// RouteFrom is the route Instrument named for r, or OtherRoute.
func RouteFrom(r *http.Request) string {
	if route, ok := r.Context().Value(routeKey{}).(string); ok {
		return route
	}
	return OtherRoute
}

// routeOf is the pattern the request matches, without its method ("/v1/messages"), or
// "other" for the catch-all. Patterns come from the code, never from the request, so the
// label stays bounded whatever paths clients send.
func routeOf(r *http.Request, routers []Router) string {
	if r.Method == http.MethodConnect {
		// The mux names a CONNECT redirect by the request's own path: not a bounded label.
		return OtherRoute
	}
	var pattern string
	for _, m := range routers {
		if _, p := m.Handler(r); p != "" {
			pattern = p
		}
	}
	if i := strings.IndexByte(pattern, ' '); i >= 0 {
		pattern = pattern[i+1:]
	}
	if pattern == "" || pattern == "/" {
		return OtherRoute
	}
	return pattern
}

// MethodLabel keeps the method label to the standard methods, "OTHER" for the rest.
func MethodLabel(m string) string {
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
