// Package graph is the GraphQL API and the resolver layer both APIs end in: the
// resolvers hold every rule (validation, defaults, tenancy, error codes), /v1 calls the
// same methods; the gqlgen handler with its limits, error presenter and extensions
// (idempotency of mutations, observability) lives here too.
package graph

//go:generate go tool gqlgen generate

import (
	"log/slog"
	"time"

	"messages/models/changefeed"
	"messages/models/session"
	"messages/models/store"
)

// Resolver holds every dependency of the resolvers, built once by main and shared by the
// GraphQL handler, the REST shim and the HTTP edge (which authenticates and keeps
// idempotency keys through it: see edge.go).
type Resolver struct {
	Store  *store.Store
	Logger *slog.Logger
	Now    func() time.Time
	// CursorSecret signs messagesConnection cursors; empty means a random per-process
	// secret, whose cursors do not survive a restart or work on another instance.
	CursorSecret []byte
	// Sessions issues and verifies subscriber session tokens.
	Sessions *session.Signer
	// Feed serves messageEvents subscriptions; nil means the server serves none.
	Feed *changefeed.Feed
	// EventRetention is how old a messageEvents cursor may be; 0 means
	// DefaultEventRetention.
	EventRetention time.Duration
}
