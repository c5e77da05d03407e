// Package graph is the GraphQL API: the resolvers, which translate GraphQL's arguments
// and selections into the service's typed inputs (models/service) and its results back;
// the handler, which composes gqlgen's executor of the schema with the transports
// (graph/transport) and the extensions (graph/extension); the error presenter; and the
// encoders of list queries.
package graph

//go:generate go run ./internal/generate

import (
	"log/slog"
	"time"

	"messages/models/service"
)

// Resolver holds every dependency of the resolvers, built once by main: the service both
// APIs call, and the logger and clock errors are presented with.
type Resolver struct {
	Service *service.Service
	Logger  *slog.Logger
	Now     func() time.Time
}
