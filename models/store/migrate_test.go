package store_test

import (
	"context"
	"errors"
	"fmt"
	"messages/models/migrate"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"gorm.io/gorm"

	"messages/models"
	"messages/models/dbtest"
	"messages/models/store"
)

// mappedModels are the records the store reads and writes, one per table.
var mappedModels = []any{
	&models.Environment{}, &models.APIKey{}, &models.Subscriber{},
	&models.Template{}, &models.Message{}, &models.IdempotencyKey{}, &store.ChangeHold{},
	&store.MessageCounter{}, &store.WorkflowCounter{}, &store.StateJob{}, &store.MessageDeletion{}, &models.TrustedDocument{},
}

// versionTable is goose's bookkeeping table, the one table no model maps.
const versionTable = "goose_db_version"

// tableShape is what a model and a table must agree on: the columns and the primary key.
type tableShape struct {
	Columns    []string
	PrimaryKey []string
}

// modelShape is the table a model expects, from its GORM fields.
func modelShape(t *testing.T, db *gorm.DB, model any) (string, tableShape) {
	t.Helper()
	stmt := &gorm.Statement{DB: db}
	if err := stmt.Parse(model); err != nil {
		t.Fatal(err)
	}
	shape := tableShape{Columns: slices.Clone(stmt.Schema.DBNames), PrimaryKey: slices.Clone(stmt.Schema.PrimaryFieldDBNames)}
	slices.Sort(shape.Columns)
	slices.Sort(shape.PrimaryKey)
	return stmt.Schema.Table, shape
}

// column is one column as the database describes it.
type column struct {
	Name, Type string
	Nullable   bool
	Default    *string
	PrimaryKey bool
}

// index is one index as the database describes it, columns in index order.
type index struct {
	Name    string
	Unique  bool
	Primary bool
	Columns []string
}

// tableNames lists the tables of s's database, without SQLite's own (sqlite_sequence) and
// the migration lock's, which is not part of the schema.
func tableNames(t *testing.T, s *store.Store) []string {
	t.Helper()
	schemas := []string{"DATABASE()"}
	if s.Vitess() {
		schemas = nil
		for _, ks := range vschema(t).Keyspaces() {
			schemas = append(schemas, "'"+ks+"'")
		}
	}
	var names []string
	for _, schema := range schemas {
		q := "SELECT table_name FROM information_schema.tables WHERE table_schema = " + schema + " AND table_type = 'BASE TABLE' AND table_name <> '" + migrate.LockTable + "'"
		if s.Dialect() == store.DialectSQLite {
			q = "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'"
		}
		var some []string
		if err := s.DB().Raw(q).Scan(&some).Error; err != nil {
			t.Fatal(err)
		}
		names = append(names, some...)
	}
	slices.Sort(names)
	return names
}

// vschema is the schema's VSchema.
func vschema(t testing.TB) migrate.VSchema {
	t.Helper()
	v, err := migrate.LoadVSchema()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// schemaOf is SQL naming the database that holds table in information_schema: the
// connection's, or on Vitess the table's keyspace (vtgate answers DATABASE() with its
// target, and routes a question about a keyspace named by a literal to one of its shards).
func schemaOf(t testing.TB, s *store.Store, table string) string {
	t.Helper()
	if !s.Vitess() {
		return "DATABASE()"
	}
	return "'" + vschema(t).KeyspaceOf(table) + "'"
}

// tableColumns describes a table's columns in their order, from information_schema on
// MySQL and PRAGMA table_info on SQLite.
func tableColumns(t *testing.T, s *store.Store, table string) []column {
	t.Helper()
	var cols []column
	if s.Dialect() == store.DialectSQLite {
		var rows []struct {
			Name, Type string
			NotNull    bool
			Dflt       *string
			PK         int
		}
		if err := s.DB().Raw(`SELECT name, type, "notnull" AS not_null, dflt_value AS dflt, pk FROM pragma_table_info(?) ORDER BY cid`, table).Scan(&rows).Error; err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			cols = append(cols, column{Name: r.Name, Type: r.Type, Nullable: !r.NotNull, Default: r.Dflt, PrimaryKey: r.PK > 0})
		}
		return cols
	}
	var rows []struct {
		Name, Type, Nullable, Key string
		Dflt                      *string
	}
	if err := s.DB().Raw(`SELECT column_name AS name, column_type AS type, is_nullable AS nullable, column_key AS `+"`key`"+`, column_default AS dflt
FROM information_schema.columns WHERE table_schema = `+schemaOf(t, s, table)+` AND table_name = ? ORDER BY ordinal_position`, table).Scan(&rows).Error; err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		cols = append(cols, column{Name: r.Name, Type: r.Type, Nullable: r.Nullable == "YES", Default: r.Dflt, PrimaryKey: r.Key == "PRI"})
	}
	return cols
}

// tableIndexes describes a table's indexes, primary key included, sorted by name.
func tableIndexes(t *testing.T, s *store.Store, table string) []index {
	t.Helper()
	var out []index
	if s.Dialect() == store.DialectSQLite {
		var list []struct {
			Name   string
			Unique bool
			Origin string
		}
		if err := s.DB().Raw(`SELECT name, "unique", origin FROM pragma_index_list(?)`, table).Scan(&list).Error; err != nil {
			t.Fatal(err)
		}
		for _, ix := range list {
			var cols []string
			if err := s.DB().Raw(`SELECT name FROM pragma_index_info(?) ORDER BY seqno`, ix.Name).Scan(&cols).Error; err != nil {
				t.Fatal(err)
			}
			out = append(out, index{Name: ix.Name, Unique: ix.Unique, Primary: ix.Origin == "pk", Columns: cols})
		}
	} else {
		var rows []struct {
			Name      string
			NonUnique bool
			Column    string
		}
		if err := s.DB().Raw(`SELECT index_name AS name, non_unique, column_name AS `+"`column`"+`
FROM information_schema.statistics WHERE table_schema = `+schemaOf(t, s, table)+` AND table_name = ? ORDER BY index_name, seq_in_index`, table).Scan(&rows).Error; err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			if n := len(out); n > 0 && out[n-1].Name == r.Name {
				out[n-1].Columns = append(out[n-1].Columns, r.Column)
				continue
			}
			out = append(out, index{Name: r.Name, Unique: !r.NonUnique, Primary: r.Name == "PRIMARY", Columns: []string{r.Column}})
		}
	}
	slices.SortFunc(out, func(a, b index) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// migratedShape is the columns and primary key a table has.
func migratedShape(t *testing.T, s *store.Store, table string) tableShape {
	t.Helper()
	var shape tableShape
	for _, c := range tableColumns(t, s, table) {
		shape.Columns = append(shape.Columns, c.Name)
		if c.PrimaryKey {
			shape.PrimaryKey = append(shape.PrimaryKey, c.Name)
		}
	}
	slices.Sort(shape.Columns)
	slices.Sort(shape.PrimaryKey)
	return shape
}

// checkSchemaMatchesModels fails when a migration and a model disagree: every field a
// model maps has its column, every column is mapped by a field, the primary keys agree,
// and every table but goose's has a model.
func checkSchemaMatchesModels(t *testing.T, s *store.Store) {
	t.Helper()
	unmapped := map[string]bool{}
	for _, table := range tableNames(t, s) {
		if table != versionTable {
			unmapped[table] = true
		}
	}
	for _, model := range mappedModels {
		table, want := modelShape(t, s.DB(), model)
		if !unmapped[table] {
			t.Errorf("%T maps table %s, which the migrations do not create", model, table)
			continue
		}
		delete(unmapped, table)
		if diff := cmp.Diff(want, migratedShape(t, s, table), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("table %s differs from %T (-model +migrated):\n%s", table, model, diff)
		}
	}
	for table := range unmapped {
		t.Errorf("table %s has no model", table)
	}
}

func TestMigratedSchemaMatchesModels(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		checkSchemaMatchesModels(t, s)
	})
}

// schemaSnapshot describes every table but goose's (columns with their types, nullability
// and defaults, and indexes) so two schemas can be compared.
func schemaSnapshot(t *testing.T, s *store.Store) map[string]any {
	t.Helper()
	out := map[string]any{}
	for _, table := range tableNames(t, s) {
		if table != versionTable {
			out[table] = struct {
				Columns []column
				Indexes []index
			}{tableColumns(t, s, table), tableIndexes(t, s, table)}
		}
	}
	return out
}

// Every migration rolls back and applies again to the very same schema, one step at a
// time, and status tells what is applied at each step.
func TestMigrateDownUpRoundTrip(t *testing.T) {
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

			applied, err := s.MigrateUp(ctx)
			if err != nil {
				t.Fatal(err)
			}
			want := []migrate.Migration{{Version: 1, Name: "initial"}, {Version: 2, Name: "idempotency"}, {Version: 3, Name: "action_columns"}}
			if len(applied) < len(want) {
				t.Fatalf("a fresh database applied %v, want at least %v", applied, want)
			}
			if diff := cmp.Diff(want, applied[:len(want)]); diff != "" {
				t.Errorf("applied (-want +got):\n%s", diff)
			}
			first := schemaSnapshot(t, s)
			if again, err := s.MigrateUp(ctx); err != nil || len(again) != 0 {
				t.Fatalf("second up applied %v (%v), want nothing", again, err)
			}

			for i := len(applied) - 1; i >= 0; i-- {
				got, err := s.MigrateDown(ctx)
				if err != nil {
					t.Fatalf("down from %d: %v", applied[i].Version, err)
				}
				if got != applied[i] {
					t.Fatalf("down rolled back %v, want %v", got, applied[i])
				}
				status, err := s.MigrationStatus(ctx)
				if err != nil {
					t.Fatal(err)
				}
				for j, st := range status {
					if st.Applied != (j < i) || st.Unknown || st.Applied == st.AppliedAt.IsZero() {
						t.Fatalf("after rolling back %d, status has %+v", applied[i].Version, st)
					}
				}
			}
			if tables := tableNames(t, s); !slices.Equal(tables, []string{versionTable}) {
				t.Fatalf("after rolling everything back the database has tables %v, want only %s", tables, versionTable)
			}
			if _, err := s.MigrateDown(ctx); !errors.Is(err, migrate.ErrNothingToRollBack) {
				t.Fatalf("down with nothing applied: %v, want ErrNothingToRollBack", err)
			}

			if again, err := s.MigrateUp(ctx); err != nil || !slices.Equal(again, applied) {
				t.Fatalf("up after down applied %v (%v), want %v", again, err, applied)
			}
			if diff := cmp.Diff(first, schemaSnapshot(t, s)); diff != "" {
				t.Errorf("schema after down and up differs (-first +again):\n%s", diff)
			}
			checkSchemaMatchesModels(t, s)
		})
	}
}

// A database migrated by a newer binary is refused with both versions named, for up and
// down alike, and it is not an outage that retrying would fix.
func TestMigrateRefusesNewerSchema(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		status, err := s.MigrationStatus(ctx)
		if err != nil {
			t.Fatal(err)
		}
		binary := status[len(status)-1].Version
		if err := s.DB().Exec("INSERT INTO "+versionTable+" (version_id, is_applied) VALUES (?, ?)", binary+96, true).Error; err != nil {
			t.Fatal(err)
		}

		want := &migrate.SchemaTooNewError{Database: binary + 96, Binary: binary}
		for name, run := range map[string]func() error{
			"Migrate":     func() error { return s.Migrate(ctx) },
			"MigrateDown": func() error { _, err := s.MigrateDown(ctx); return err },
		} {
			err := run()
			var tooNew *migrate.SchemaTooNewError
			if !errors.As(err, &tooNew) || *tooNew != *want {
				t.Fatalf("%s = %v, want %v", name, err, want)
			}
			msg := err.Error()
			if !strings.Contains(msg, fmt.Sprint(binary+96)) || !strings.Contains(msg, fmt.Sprint(binary)) || !strings.Contains(msg, "upgrade") {
				t.Errorf("%s: %q must name both versions and say to upgrade the binary", name, msg)
			}
			if models.IsUnavailable(err) {
				t.Errorf("%s: a newer schema must not look like an outage", name)
			}
		}

		status, err = s.MigrationStatus(ctx)
		if err != nil {
			t.Fatal(err)
		}
		last := status[len(status)-1]
		if last.Version != binary+96 || !last.Unknown || !last.Applied || last.Name != "" {
			t.Errorf("status must end with the unknown version, got %+v", last)
		}
	})
}

// Asking a fresh database for its status neither creates goose's table nor anything else.
func TestMigrationStatusOnlyReads(t *testing.T) {
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
			status, err := s.MigrationStatus(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(status) == 0 || slices.ContainsFunc(status, func(st migrate.MigrationState) bool { return st.Applied || st.Unknown || st.Name == "" }) {
				t.Errorf("fresh database status: %+v, want every migration pending and named", status)
			}
			if tables := tableNames(t, s); len(tables) != 0 {
				t.Errorf("status created tables %v", tables)
			}
		})
	}
}

// Instances starting together on a fresh MySQL database take turns through the
// migration lock: every one succeeds and each migration is applied once.
func TestConcurrentMigrateOnMySQL(t *testing.T) {
	t.Parallel()
	url := dbtest.URL(t, store.DialectMySQL)
	ctx := context.Background()
	const instances = 4
	stores := make([]*store.Store, instances)
	for i := range stores {
		s, err := store.Open(ctx, url, store.DefaultPool)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		stores[i] = s
	}
	var wg sync.WaitGroup
	applied := make([][]migrate.Migration, instances)
	errs := make([]error, instances)
	for i, s := range stores {
		wg.Go(func() { applied[i], errs[i] = s.MigrateUp(ctx) })
	}
	wg.Wait()
	var total []migrate.Migration
	for i, err := range errs {
		if err != nil {
			t.Errorf("instance %d: %v", i, err)
		}
		total = append(total, applied[i]...)
	}
	status, err := stores[0].MigrationStatus(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(total) != len(status) {
		t.Errorf("instances applied %v between them, want each of %d migrations once", total, len(status))
	}
	var rows int64
	if err := stores[0].DB().Raw("SELECT COUNT(*) FROM " + versionTable + " WHERE version_id > 0").Scan(&rows).Error; err != nil || int(rows) != len(status) {
		t.Errorf("%s has %d applied rows (%v), want %d", versionTable, rows, err, len(status))
	}
}
