package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"messages/models/migrate"
)

// The store's schema is the migrate package's; these run it on the store's database.

// migrator is the store's migrator, over its pool and, on Vitess, the shards'
// (WithShardURLs), which done closes.
func (s *Store) migrator() (m *migrate.Migrator, done func(), err error) {
	sqlDB, err := s.db.DB()
	if err != nil {
		return nil, nil, err
	}
	shards := migrate.Shards{}
	done = func() {
		for _, db := range shards {
			_ = db.Close()
		}
	}
	for name, u := range s.o.shardURLs {
		dsn, err := MySQLDSN(u)
		if err != nil {
			done()
			return nil, nil, fmt.Errorf("DATABASE_SHARD_URLS, shard %s: %w", name, err)
		}
		db, err := sql.Open("mysql", dsn)
		if err != nil {
			done()
			return nil, nil, err
		}
		db.SetMaxOpenConns(4)
		shards[name] = db
	}
	return migrate.New(sqlDB, s.dialect == DialectMySQL, s.o.migrationLease, migrate.WithShards(shards)), done, nil
}

// ParseShardURLs reads DATABASE_SHARD_URLS: keyspace/shard=mysql://… pairs separated by
// commas or spaces, each naming one shard's database on its MySQL-protocol server.
func ParseShardURLs(s string) (map[string]string, error) {
	out := map[string]string{}
	for _, pair := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' }) {
		name, u, ok := strings.Cut(pair, "=")
		if !ok || !strings.Contains(name, "/") || !strings.HasPrefix(u, "mysql://") {
			return nil, errors.New("DATABASE_SHARD_URLS: write each shard as keyspace/shard=mysql://user:password@host:port/database, separated by commas")
		}
		if _, err := url.Parse(u); err != nil {
			return nil, fmt.Errorf("DATABASE_SHARD_URLS: shard %s: not a valid URL", name)
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("DATABASE_SHARD_URLS names shard %s twice", name)
		}
		out[name] = u
	}
	return out, nil
}

// Migrate applies every pending migration (migrate.Migrator.Up).
func (s *Store) Migrate(ctx context.Context) error {
	_, err := s.MigrateUp(ctx)
	return err
}

// MigrateUp applies every pending migration and returns those it applied.
func (s *Store) MigrateUp(ctx context.Context) ([]migrate.Migration, error) {
	m, done, err := s.migrator()
	if err != nil {
		return nil, err
	}
	defer done()
	applied, err := m.Up(ctx)
	if err == nil {
		s.reloadListIndexes(ctx)
	}
	return applied, err
}

// MigrateDown rolls back the most recently applied migration and returns it.
func (s *Store) MigrateDown(ctx context.Context) (migrate.Migration, error) {
	m, done, err := s.migrator()
	if err != nil {
		return migrate.Migration{}, err
	}
	defer done()
	down, err := m.Down(ctx)
	if err == nil {
		s.reloadListIndexes(ctx)
	}
	return down, err
}

// MigrationStatus lists every migration, applied or pending, and those the database
// records that this binary does not know.
func (s *Store) MigrationStatus(ctx context.Context) ([]migrate.MigrationState, error) {
	m, done, err := s.migrator()
	if err != nil {
		return nil, err
	}
	defer done()
	return m.Status(ctx)
}

// MigrationsApplied reports whether the database is at this binary's schema, for
// readiness probes.
// It reads through the pool only (on Vitess, vtgate), never opening the shards.
func (s *Store) MigrationsApplied(ctx context.Context) (bool, error) {
	sqlDB, err := s.db.DB()
	if err != nil {
		return false, err
	}
	return migrate.New(sqlDB, s.dialect == DialectMySQL, s.o.migrationLease).Applied(ctx)
}
