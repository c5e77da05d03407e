package jsonl

import (
	"context"
	"io"

	"messages/models/store"
)

// ImportChunked is Import as it runs on a Galera node, for tests on any database.
func ImportChunked(ctx context.Context, s *store.Store, r io.Reader, o ImportOptions, limit store.WriteSetLimit) (ImportStats, error) {
	return importChunked(ctx, s, r, o, limit, false)
}

// ImportSharded is Import as it runs on a sharded (Vitess) database, for tests on any.
func ImportSharded(ctx context.Context, s *store.Store, r io.Reader, o ImportOptions) (ImportStats, error) {
	return importChunked(ctx, s, r, o, store.WriteSetLimit{}, true)
}
