package models

import (
	"context"
	"errors"
)

// SeedOptions is seed.Options under its old name.
//
// Deprecated: use package messages/models/seed. SeedOptions, SeedStats and Store.Seed
// stay only until the tests of graph and cmd/loadtest call seed.Generate.
type SeedOptions struct {
	Seed                          int64
	EnvironmentID, OrganizationID string
	Messages, Subscribers         int
	Templates                     int
	Progress                      func(done int)
}

// SeedStats is seed.Stats under its old name.
//
// Deprecated: use package messages/models/seed.
type SeedStats struct {
	EnvironmentID, OrganizationID    string
	Messages, Subscribers, Templates int
}

// Seeder is the generator Store.Seed runs; package seed sets it when a program imports it
// (models/dbtest does). The generator cannot live here: it imports this package.
//
// Deprecated: use package messages/models/seed.
var Seeder func(ctx context.Context, s *Store, o SeedOptions) (SeedStats, error)

// Seed runs seed.Generate.
//
// Deprecated: call seed.Generate(ctx, s, seed.Options{...}).
func (s *Store) Seed(ctx context.Context, o SeedOptions) (SeedStats, error) {
	if Seeder == nil {
		return SeedStats{}, errors.New("Store.Seed needs package messages/models/seed imported; call seed.Generate instead")
	}
	return Seeder(ctx, s, o)
}
