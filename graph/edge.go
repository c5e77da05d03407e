package graph

import (
	"context"
	"time"

	"messages/models"
)

// What the HTTP edge asks of the resolver layer: who an API key belongs to, and where
// idempotency keys are kept. The edge reaches the store only through these.

// Authenticate resolves an API key to its caller; an unknown or revoked key is
// unauthorized.
func (r *Resolver) Authenticate(ctx context.Context, apiKey string) (models.Caller, error) {
	return r.Store.Authenticate(ctx, apiKey)
}

// RevokedKeys returns those of the API key ids that are no longer valid, for the watch
// that ends streams whose key is revoked.
func (r *Resolver) RevokedKeys(ctx context.Context, keyIDs []string) ([]string, error) {
	return r.Store.RevokedKeys(ctx, keyIDs)
}

// Transaction runs fn in one database transaction; every resolver and store call made
// with fn's context joins it. When the transaction loses a conflict with a concurrent one
// it runs fn again (store.Store.RetryTransaction), so fn must be safe to run again.
func (r *Resolver) Transaction(ctx context.Context, fn func(ctx context.Context) error) error {
	return r.Store.RetryTransaction(ctx, fn)
}

// ClaimIdempotencyKey claims k for the running request, or returns the record already
// stored under its key.
func (r *Resolver) ClaimIdempotencyKey(ctx context.Context, k *models.IdempotencyKey, lockWait time.Duration) (*models.IdempotencyKey, error) {
	return r.Store.ClaimIdempotencyKey(ctx, k, lockWait)
}

// CompleteIdempotencyKey stores the response of the request that claimed k.
func (r *Resolver) CompleteIdempotencyKey(ctx context.Context, k *models.IdempotencyKey) error {
	return r.Store.CompleteIdempotencyKey(ctx, k)
}

// PurgeIdempotencyKeys deletes the keys expired at now and returns how many.
func (r *Resolver) PurgeIdempotencyKeys(ctx context.Context, now time.Time) (int64, error) {
	return r.Store.PurgeIdempotencyKeys(ctx, now)
}
