package store

import (
	"context"

	"messages/models/migrate"
)

// The store's schema is the migrate package's; these run it on the store's database.

// migrator is the store's migrator, over its pool.
func (s *Store) migrator() (*migrate.Migrator, error) {
	sqlDB, err := s.db.DB()
	if err != nil {
		return nil, err
	}
	return migrate.New(sqlDB, s.dialect == DialectMySQL, s.o.migrationLease), nil
}

// Migrate applies every pending migration (migrate.Migrator.Up).
func (s *Store) Migrate(ctx context.Context) error {
	_, err := s.MigrateUp(ctx)
	return err
}

// MigrateUp applies every pending migration and returns those it applied.
func (s *Store) MigrateUp(ctx context.Context) ([]migrate.Migration, error) {
	m, err := s.migrator()
	if err != nil {
		return nil, err
	}
	applied, err := m.Up(ctx)
	if err == nil {
		s.reloadListIndexes(ctx)
	}
	return applied, err
}

// MigrateDown rolls back the most recently applied migration and returns it.
func (s *Store) MigrateDown(ctx context.Context) (migrate.Migration, error) {
	m, err := s.migrator()
	if err != nil {
		return migrate.Migration{}, err
	}
	down, err := m.Down(ctx)
	if err == nil {
		s.reloadListIndexes(ctx)
	}
	return down, err
}

// MigrationStatus lists every migration, applied or pending, and those the database
// records that this binary does not know.
func (s *Store) MigrationStatus(ctx context.Context) ([]migrate.MigrationState, error) {
	m, err := s.migrator()
	if err != nil {
		return nil, err
	}
	return m.Status(ctx)
}

// MigrationsApplied reports whether the database is at this binary's schema, for
// readiness probes.
func (s *Store) MigrationsApplied(ctx context.Context) (bool, error) {
	m, err := s.migrator()
	if err != nil {
		return false, err
	}
	return m.Applied(ctx)
}
