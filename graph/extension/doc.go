// Package extension holds the gqlgen handler extensions of /graphql that need nothing of
// its schema, and so run for every operation on every transport: the limits that refuse
// abusive documents before they are parsed or run (QueryLimits), the idempotency of
// mutations (Idempotency), Prometheus metrics and OpenTelemetry tracing (Metrics,
// Tracing), and the caches gqlgen keeps documents and persisted queries in, bounded in
// bytes (NewDocumentCache, NewPersistedQueryCache, ByteLRU).
//
// It imports gqlgen's graphql package, gqlparser, models and errcode, never package
// graph, which composes these with its schema in NewHandler.
package extension
