// Package service is what both APIs call: the rules of reading and marking a tenant's
// messages, whichever API asked. It takes typed inputs (a list query, a mark, a session
// request), checks them and applies their defaults, scopes them to the caller (an API
// key's environment, a session's subscriber), signs and verifies cursors, and answers in
// records and coded errors (models.Error). graph/ resolvers and rest/ handlers translate
// their wire into these inputs and the results back, and nothing more.
package service

import (
	"context"
	"crypto/rand"
	"log/slog"
	"time"

	"messages/models"
	"messages/models/changefeed"
	"messages/models/session"
	"messages/models/store"
)

// DefaultEventRetention is how old a messageEvents cursor may be by default. Resuming
// reads the changes from the messages table itself, so the window bounds the work of
// one resumption, not what is kept.
const DefaultEventRetention = 7 * 24 * time.Hour

// Options are the service's dependencies and settings, fixed at construction.
type Options struct {
	Store *store.Store
	// Sessions issues and verifies subscriber session tokens; nil means the service
	// issues and accepts none.
	Sessions *session.Signer
	// Feed serves live events; nil means the service serves none.
	Feed *changefeed.Feed
	// CursorSecret signs list and event cursors; empty means a random secret of this
	// service's own, whose cursors do not survive a restart or work on another instance.
	CursorSecret []byte
	// EventRetention is how old an event cursor may be; 0 means DefaultEventRetention.
	EventRetention time.Duration
	// Now is the service's clock; nil means time.Now.
	Now func() time.Time
	// Logger records what a client is refused for a fault of the server's configuration;
	// nil means slog.Default().
	Logger *slog.Logger
	// StateJobs say how changes of all a subscriber's messages run past their request.
	StateJobs StateJobOptions
}

// Service holds the rules; its methods are safe for concurrent use.
type Service struct {
	store     *store.Store
	sessions  *session.Signer
	feed      *changefeed.Feed
	cursors   cursorKey
	retention time.Duration
	now       func() time.Time
	logger    *slog.Logger
	counts    countWatches // the live counts followed, shared by key
	jobs      *stateJobs
	scans     countScans // the turns of counts that scan rows, by environment
}

// New returns the service of o.
func New(o Options) *Service {
	if len(o.CursorSecret) == 0 {
		o.CursorSecret = make([]byte, 32)
		_, _ = rand.Read(o.CursorSecret) // never fails (crypto/rand panics instead)
	}
	if o.EventRetention <= 0 {
		o.EventRetention = DefaultEventRetention
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return &Service{store: o.Store, sessions: o.Sessions, feed: o.Feed, cursors: cursorKey(o.CursorSecret),
		retention: o.EventRetention, now: o.Now, logger: o.Logger,
		jobs: newStateJobs(o.Store, o.StateJobs, o.Logger, o.Now())}
}

// Authenticate resolves an API key to its caller; an unknown or revoked key is
// unauthorized.
func (s *Service) Authenticate(ctx context.Context, apiKey string) (models.Caller, error) {
	return s.store.Authenticate(ctx, apiKey)
}

// RevokedKeys returns those of the API key ids that are no longer valid, for the watch
// that ends the streams of a revoked key.
func (s *Service) RevokedKeys(ctx context.Context, keyIDs []string) ([]string, error) {
	return s.store.RevokedKeys(ctx, keyIDs)
}
