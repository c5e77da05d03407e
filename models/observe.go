package models

import (
	"go.opentelemetry.io/otel/trace"
	"gorm.io/plugin/opentelemetry/tracing"
)

// Trace makes every query of the store a span of tp (the GORM OpenTelemetry plugin), a
// child of the span in the query's context. The spans carry the SQL text with its
// placeholders, never the values bound to them, so no message data or key hash leaves in
// a trace. Call it once, before serving.
func (s *Store) Trace(tp trace.TracerProvider) error {
	return s.db.Use(tracing.NewPlugin(
		tracing.WithTracerProvider(tp),
		tracing.WithoutQueryVariables(),
		// The pool's statistics reach Prometheus through SQLDB, not OpenTelemetry metrics.
		tracing.WithoutMetrics(),
	))
}
