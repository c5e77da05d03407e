package models

import (
	"context"
	"time"
)

// Caller is the authenticated tenant of a request: the environment its API key is bound
// to. Every read and write is filtered by it. A subscriber session (the credential a
// browser holds) narrows it further to one subscriber of that environment.
type Caller struct {
	KeyID          string
	EnvironmentID  string
	OrganizationID string
	// SubscriberID is the external id of the subscriber a session token is scoped to, ""
	// for an API key. With it, the caller reads and marks that subscriber's messages only.
	SubscriberID string
	// ExpiresAt is when a session token stops being valid; zero for an API key. A
	// long-lived stream authenticated by the token ends then.
	ExpiresAt time.Time
}

// Scoped reports whether the caller holds a subscriber session rather than an API key.
func (c Caller) Scoped() bool { return c.SubscriberID != "" }

type callerKey struct{}

// WithCaller returns a context carrying the authenticated caller.
func WithCaller(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// CallerFrom returns the authenticated caller, or an unauthorized error when the request
// did not pass authentication (so a wiring mistake fails closed).
func CallerFrom(ctx context.Context) (Caller, error) {
	c, ok := ctx.Value(callerKey{}).(Caller)
	if !ok || c.EnvironmentID == "" {
		return Caller{}, Errorf(EUNAUTHORIZED, "API key required")
	}
	return c, nil
}
