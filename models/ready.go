package models

import (
	"context"

	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/database"
)

// MigrationsApplied reports whether every migration this binary embeds is recorded as
// applied, for readiness probes. Unlike goose's own status calls it only reads: it never
// creates the version table, so probing a fresh database leaves it untouched. An error
// means the database could not be asked.
func (s *Store) MigrationsApplied(ctx context.Context) (bool, error) {
	p, err := s.migrator()
	if err != nil {
		return false, err
	}
	var tables int64
	q := "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = ?"
	if s.dialect == DialectSQLite {
		q = "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?"
	}
	if err := s.db.WithContext(ctx).Raw(q, goose.DefaultTablename).Scan(&tables).Error; err != nil {
		return false, err
	}
	if tables == 0 {
		return false, nil
	}

	dialect := database.DialectSQLite3
	if s.dialect == DialectMySQL {
		dialect = database.DialectMySQL
	}
	versions, err := database.NewStore(dialect, goose.DefaultTablename)
	if err != nil {
		return false, err
	}
	sqlDB, err := s.db.DB()
	if err != nil {
		return false, err
	}
	rows, err := versions.ListMigrations(ctx, sqlDB)
	if err != nil {
		return false, err
	}
	// Rows come newest first, so the first row of a version is its current state.
	applied := map[int64]bool{}
	seen := map[int64]bool{}
	for _, r := range rows {
		if !seen[r.Version] {
			seen[r.Version], applied[r.Version] = true, r.IsApplied
		}
	}
	for _, src := range p.ListSources() {
		if !applied[src.Version] {
			return false, nil
		}
	}
	return true, nil
}
