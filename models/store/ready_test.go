package store_test

import (
	"context"
	"testing"

	"messages/models/dbtest"
	"messages/models/store"
)

func TestMigrationsApplied(t *testing.T) {
	t.Parallel()
	for _, dialect := range dbtest.Dialects {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s, err := store.Open(ctx, dbtest.URL(t, dialect), store.DefaultPool)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = s.Close() })
			applied := func() bool {
				t.Helper()
				ok, err := s.MigrationsApplied(ctx)
				if err != nil {
					t.Fatal(err)
				}
				return ok
			}

			if applied() {
				t.Fatal("a fresh database reports its migrations applied")
			}
			if s.DB().Migrator().HasTable("goose_db_version") {
				t.Fatal("asking created the version table; a readiness probe must only read")
			}
			if err := s.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			if !applied() {
				t.Fatal("a migrated database reports migrations pending")
			}
			if err := s.DB().Exec("DELETE FROM goose_db_version WHERE version_id = (SELECT v FROM (SELECT MAX(version_id) AS v FROM goose_db_version) AS latest)").Error; err != nil {
				t.Fatal(err)
			}
			if applied() {
				t.Fatal("a database missing its latest migration reports them applied")
			}

			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := s.MigrationsApplied(ctx); err == nil {
				t.Fatal("a closed database answered; want an error")
			}
		})
	}
}
