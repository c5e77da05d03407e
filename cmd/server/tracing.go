package main

import (
	"context"
	"fmt"
	"log/slog"
	"messages/models/store"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
)

// serviceName names the service in traces unless OTEL_SERVICE_NAME says otherwise.
const serviceName = "messages"

// tracingFlushTimeout bounds how long shutdown waits to send the last spans.
const tracingFlushTimeout = 5 * time.Second

// newTracing returns a tracer provider exporting over OTLP/HTTP when
// OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set, and nil
// otherwise: then nothing is traced and nothing costs more than before. The exporter
// reads the other standard OTEL_EXPORTER_OTLP_* variables (headers, timeout,
// compression, certificates) itself; OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES add
// to the resource, and OTEL_TRACES_SAMPLER picks the sampler (every span by default).
func newTracing(ctx context.Context, logger *slog.Logger) (*sdktrace.TracerProvider, error) {
	variable := "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	endpoint := os.Getenv(variable)
	if endpoint == "" {
		variable = "OTEL_EXPORTER_OTLP_ENDPOINT"
		endpoint = os.Getenv(variable)
	}
	if endpoint == "" || strings.EqualFold(os.Getenv("OTEL_SDK_DISABLED"), "true") || os.Getenv("OTEL_TRACES_EXPORTER") == "none" {
		return nil, nil
	}
	if u, err := url.Parse(endpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%s=%s: want the collector's OTLP/HTTP URL with its scheme, e.g. http://otel-collector:4318", variable, store.RedactURL(endpoint))
	}
	for _, name := range []string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		if p := os.Getenv(name); p != "" && !strings.HasPrefix(p, "http/") {
			return nil, fmt.Errorf("%s=%s: this server exports over OTLP/HTTP only; use http/protobuf and the collector's HTTP port (4318)", name, p)
		}
	}
	exporter, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, fmt.Errorf("OpenTelemetry exporter: %w", err)
	}
	tp, err := newTracerProvider(ctx, sdktrace.NewBatchSpanProcessor(exporter))
	if err != nil {
		_ = exporter.Shutdown(ctx)
		return nil, err
	}
	// Export failures (an unreachable collector) become log records, not plain stderr lines.
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		logger.Warn("tracing failed", "error", err)
	}))
	logger.Info("tracing", "endpoint", store.RedactURL(endpoint), "service", serviceName)
	return tp, nil
}

// newTracerProvider returns a provider sending every span to sp, describing this service.
func newTracerProvider(ctx context.Context, sp sdktrace.SpanProcessor) (*sdktrace.TracerProvider, error) {
	res, err := resource.New(ctx,
		resource.WithAttributes(semconv.ServiceName(serviceName)),
		resource.WithTelemetrySDK(),
		// Last, so OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES override the above.
		resource.WithFromEnv(),
	)
	if err != nil {
		return nil, fmt.Errorf("OpenTelemetry resource: %w", err)
	}
	return sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sp), sdktrace.WithResource(res)), nil
}

// shutdownTracing sends the spans still buffered and stops the exporter; nil is off.
func shutdownTracing(tp *sdktrace.TracerProvider, logger *slog.Logger) {
	if tp == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), tracingFlushTimeout)
	defer cancel()
	if err := tp.Shutdown(ctx); err != nil {
		logger.Warn("flushing traces failed", "error", err)
	}
}

// untracedPaths are polled by machines; tracing them would bury the requests of people.
var untracedPaths = map[string]bool{"/metrics": true, "/healthz": true, "/readyz": true}

// trace spans each request (otelhttp), named by its route ("GET /v1/messages"), joined to
// the caller's trace when it sends a W3C traceparent, and tagged with the request id the
// access log records, so a log line leads to its trace and back.
func (o *observability) trace(next http.Handler) http.Handler {
	tagged := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			// Read after the fact: the logging middleware inside sets the id on the response.
			trace.SpanFromContext(r.Context()).SetAttributes(
				semconv.HTTPRoute(routeFrom(r)),
				attribute.String("request.id", w.Header().Get("X-Request-Id")),
			)
		}()
		next.ServeHTTP(w, r)
	})
	return otelhttp.NewHandler(tagged, "http.server",
		otelhttp.WithTracerProvider(o.tracer),
		otelhttp.WithPropagators(propagation.TraceContext{}),
		otelhttp.WithMeterProvider(noop.NewMeterProvider()),
		otelhttp.WithFilter(func(r *http.Request) bool { return !untracedPaths[r.URL.Path] }),
		otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string {
			method := methodLabel(r.Method)
			if method == "OTHER" {
				method = "HTTP"
			}
			if route := routeFrom(r); route != otherRoute {
				return method + " " + route
			}
			return method
		}),
	)
}

// routeFrom is the route label instrument put in the request's context.
func routeFrom(r *http.Request) string {
	if route, ok := r.Context().Value(routeKey{}).(string); ok {
		return route
	}
	return otherRoute
}
