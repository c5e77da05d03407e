// Package migrate applies the schema's versioned migrations (embedded SQL, one folder
// per dialect with the same versions in each) to a database, and takes turns with other
// migrators: on MySQL, instances starting together on one server or on several nodes of
// a cluster migrate under a lock and a lease every node sees (lock.go), so each
// migration runs once.
package migrate

import (
	"cmp"
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/pressly/goose/v3"
)

// migrations holds the versioned SQL, one folder per dialect with the same versions in
// each: migrations/mysql and migrations/sqlite.
//
//go:embed migrations
var migrations embed.FS

// Migration names one embedded migration: its version and the rest of its file name
// (00003_action_columns.sql is version 3, "action_columns").
type Migration struct {
	Version int64
	Name    string
}

// DefaultLease is how long the migration lease lasts without renewal.
const DefaultLease = 30 * time.Second

// Migrator migrates one database. It shares its pool: closing the database is the
// caller's.
type Migrator struct {
	db     *sql.DB
	mysql  bool
	lease  time.Duration
	shards Shards
}

// Option configures a Migrator.
type Option func(*Migrator)

// WithShards gives the migrator each shard's database, which it needs to migrate when db
// is Vitess's vtgate (shards.go).
func WithShards(shards Shards) Option { return func(m *Migrator) { m.shards = shards } }

// New returns the migrator of db, a MySQL database when mysql is set and an SQLite one
// otherwise, whose lease lasts lease (DefaultLease when 0 or less).
func New(db *sql.DB, mysql bool, lease time.Duration, opts ...Option) *Migrator {
	if lease <= 0 {
		lease = DefaultLease
	}
	m := &Migrator{db: db, mysql: mysql, lease: lease}
	for _, opt := range opts {
		opt(m)
	}
	return m
}

// ErrShardsNeeded refuses to migrate Vitess through vtgate alone.
var ErrShardsNeeded = errors.New("DATABASE_URL is Vitess's vtgate, whose parser refuses the migrations' triggers: " +
	"migrations run on each shard's database, named in DATABASE_SHARD_URLS as keyspace/shard=mysql://… (docs/scaling.md, Vitess)")

// target is the database the migrations and their bookkeeping are on: db itself, or on
// Vitess the shards through the router, after the VSchema is applied when change is set.
// Without shards, Vitess's bookkeeping is read through vtgate (the version table is in
// the VSchema); schema then names the keyspace holding it, which DATABASE() does not.
func (s *Migrator) target(ctx context.Context, change bool) (db *sql.DB, schema string, done func(), err error) {
	done = func() {}
	if !s.mysql {
		return s.db, "", done, nil
	}
	vitess, err := IsVitess(ctx, s.db)
	if err != nil || !vitess {
		return s.db, "DATABASE()", done, err
	}
	v, err := LoadVSchema()
	if err != nil {
		return nil, "", done, err
	}
	if len(s.shards) == 0 {
		schema := "'" + v.KeyspaceOf(goose.DefaultTablename) + "'"
		if change {
			// An instance started with vtgate alone serves a schema that is up to date,
			// and refuses only to change one.
			if pending, err := s.pending(ctx, s.db, schema); err != nil || pending {
				return nil, "", done, errors.Join(err, ErrShardsNeeded)
			}
		}
		return s.db, schema, done, nil
	}
	if change {
		if err := applyVSchema(ctx, s.db, v); err != nil {
			return nil, "", done, err
		}
	}
	router, err := newShardRouter(ctx, s.db, v, s.shards)
	if err != nil {
		return nil, "", done, err
	}
	rdb := sql.OpenDB(router)
	return rdb, "DATABASE()", func() { _ = rdb.Close() }, nil
}

// MigrationState is one migration as `migrate status` shows it.
type MigrationState struct {
	Migration
	Applied   bool
	AppliedAt time.Time // zero when pending
	// Unknown marks a version the database records but this binary does not embed: a
	// newer binary applied it, and Name is empty.
	Unknown bool
}

// SchemaTooNewError refuses to work on a database a newer binary has migrated: this
// binary would not know its tables, and rolling back needs SQL only the newer one has.
type SchemaTooNewError struct {
	Database int64 // the highest version applied to the database
	Binary   int64 // the highest version this binary embeds
}

func (e *SchemaTooNewError) Error() string {
	return fmt.Sprintf("database schema version %d is newer than this binary's %d: upgrade this binary to a release that includes migration %d "+
		"(or, to go back to this one, run `migrate down` with the newer binary until the database is at version %d)",
		e.Database, e.Binary, e.Database, e.Binary)
}

// ErrNothingToRollBack is Down's answer when no migration is applied.
var ErrNothingToRollBack = errors.New("nothing to roll back: the database has no migration applied")

// Up applies every pending migration, in version order, and returns those it
// applied (none when the database is up to date). On MySQL, instances starting together,
// on one server or on several nodes of a cluster, take turns through the migration lock
// (migrationLock), so each migration runs once.
// It refuses, with a *SchemaTooNewError, to run against a database whose schema is
// newer than this binary knows.
func (s *Migrator) Up(ctx context.Context) ([]Migration, error) {
	ctx, lost := context.WithCancelCause(ctx)
	defer lost(nil)
	db, schema, done, err := s.target(ctx, true)
	if err != nil {
		return nil, err
	}
	defer done()
	if schema != "DATABASE()" && schema != "" {
		// Vitess through vtgate alone, with nothing pending (target).
		return nil, nil
	}
	p, err := s.migrator(db, lost)
	if err != nil {
		return nil, err
	}
	if err := s.refuseNewer(ctx, db, schema, p); err != nil {
		return nil, err
	}
	// Goose's Up first looks for pending migrations without the lock, creating its
	// version table if missing; asking for the version takes the lock, so instances
	// starting together do not race to create that table.
	if _, err := p.GetDBVersion(ctx); err != nil {
		return nil, fmt.Errorf("migrate up: %w", err)
	}
	results, err := p.Up(ctx)
	if err != nil {
		return nil, fmt.Errorf("migrate up: %w", leaseLost(ctx, err))
	}
	applied := make([]Migration, 0, len(results))
	for _, r := range results {
		applied = append(applied, migrationOf(r.Source))
	}
	if len(applied) > 0 {
		if err := s.awaitVTGate(ctx); err != nil {
			return applied, err
		}
	}
	return applied, nil
}

// Down rolls back the most recently applied migration, one step, and returns it.
// With nothing applied it returns ErrNothingToRollBack and leaves the database untouched.
func (s *Migrator) Down(ctx context.Context) (Migration, error) {
	ctx, lost := context.WithCancelCause(ctx)
	defer lost(nil)
	if s.mysql && len(s.shards) == 0 {
		if vitess, err := IsVitess(ctx, s.db); err != nil || vitess {
			return Migration{}, errors.Join(err, ErrShardsNeeded)
		}
	}
	db, schema, done, err := s.target(ctx, true)
	if err != nil {
		return Migration{}, err
	}
	defer done()
	p, err := s.migrator(db, lost)
	if err != nil {
		return Migration{}, err
	}
	if err := s.refuseNewer(ctx, db, schema, p); err != nil {
		return Migration{}, err
	}
	applied, err := s.appliedMigrations(ctx, db, schema)
	if err != nil {
		return Migration{}, err
	}
	if len(applied) == 0 {
		return Migration{}, ErrNothingToRollBack
	}
	r, err := p.Down(ctx)
	if errors.Is(err, goose.ErrNoNextVersion) {
		return Migration{}, ErrNothingToRollBack
	}
	if err != nil {
		return Migration{}, fmt.Errorf("migrate down: %w", leaseLost(ctx, err))
	}
	return migrationOf(r.Source), s.awaitVTGate(ctx)
}

// Status lists every migration this binary embeds, applied or pending, and any
// the database records that this binary does not know, in version order. It only reads:
// asking about a fresh database leaves it untouched.
func (s *Migrator) Status(ctx context.Context) ([]MigrationState, error) {
	db, schema, done, err := s.target(ctx, false)
	if err != nil {
		return nil, err
	}
	defer done()
	p, err := s.migrator(db, nil)
	if err != nil {
		return nil, err
	}
	applied, err := s.appliedMigrations(ctx, db, schema)
	if err != nil {
		return nil, err
	}
	var out []MigrationState
	for _, src := range p.ListSources() {
		at, ok := applied[src.Version]
		out = append(out, MigrationState{Migration: migrationOf(src), Applied: ok, AppliedAt: at})
		delete(applied, src.Version)
	}
	for v, at := range applied {
		out = append(out, MigrationState{Migration: Migration{Version: v}, Applied: true, AppliedAt: at, Unknown: true})
	}
	slices.SortFunc(out, func(a, b MigrationState) int { return cmp.Compare(a.Version, b.Version) })
	return out, nil
}

// migrator is goose's view of the embedded migrations for the database's dialect. It
// shares the pool: never Close it. On MySQL it migrates under the migration lock, which
// calls lost should another migrator take its lease over.
func (s *Migrator) migrator(db *sql.DB, lost context.CancelCauseFunc) (*goose.Provider, error) {
	dir, dialect := "migrations/sqlite", goose.DialectSQLite3
	var opts []goose.ProviderOption
	if s.mysql {
		dir, dialect = "migrations/mysql", goose.DialectMySQL
		opts = append(opts, goose.WithSessionLocker(&migrationLock{db: db, lost: lost, lease: s.lease}))
	}
	sub, err := fs.Sub(migrations, dir)
	if err != nil {
		return nil, err
	}
	return goose.NewProvider(dialect, db, sub, opts...)
}

// refuseNewer returns a *SchemaTooNewError when the database has a version applied that
// is higher than any this binary embeds.
func (s *Migrator) refuseNewer(ctx context.Context, db *sql.DB, schema string, p *goose.Provider) error {
	applied, err := s.appliedMigrations(ctx, db, schema)
	if err != nil {
		return err
	}
	sources := p.ListSources()
	if len(sources) == 0 {
		return nil
	}
	newest := sources[len(sources)-1].Version
	var highest int64
	for v := range applied {
		highest = max(highest, v)
	}
	if highest > newest {
		return &SchemaTooNewError{Database: highest, Binary: newest}
	}
	return nil
}

// appliedMigrations returns the versions the database records as applied, with when.
// Unlike goose's own calls it never creates the version table: a fresh database simply
// has none. Goose's bookkeeping row, version 0, is left out. On MySQL schema is the SQL
// naming the database that holds the version table (target).
func (s *Migrator) appliedMigrations(ctx context.Context, db *sql.DB, schema string) (map[int64]time.Time, error) {
	var tables int64
	q := "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?"
	if s.mysql {
		q = "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = " + schema + " AND table_name = ?"
	}
	if err := db.QueryRowContext(ctx, q, goose.DefaultTablename).Scan(&tables); err != nil {
		return nil, fmt.Errorf("read schema version: %w", err)
	}
	applied := map[int64]time.Time{}
	if tables == 0 {
		return applied, nil
	}
	// One statement, so the versions and their times are of one snapshot: in two (goose's
	// list, then each version's row), a Galera node applying another node's migrations
	// between them answered a version the list held as not found.
	rows, err := db.QueryContext(ctx, "SELECT version_id, is_applied, tstamp FROM "+goose.DefaultTablename+" ORDER BY id DESC")
	if err != nil {
		return nil, fmt.Errorf("read schema version: %w", err)
	}
	defer rows.Close()
	// Rows come newest first, so the first row of a version is its current state.
	seen := map[int64]bool{}
	for rows.Next() {
		var version int64
		var isApplied bool
		var at time.Time
		if err := rows.Scan(&version, &isApplied, &at); err != nil {
			return nil, fmt.Errorf("read schema version: %w", err)
		}
		if seen[version] || version == 0 {
			continue
		}
		seen[version] = true
		if isApplied {
			applied[version] = at.UTC()
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read schema version: %w", err)
	}
	return applied, nil
}

// pending reports whether a migration this binary embeds is not applied to db.
func (s *Migrator) pending(ctx context.Context, db *sql.DB, schema string) (bool, error) {
	p, err := s.migrator(db, nil)
	if err != nil {
		return false, err
	}
	applied, err := s.appliedMigrations(ctx, db, schema)
	if err != nil {
		return false, err
	}
	for _, src := range p.ListSources() {
		if _, ok := applied[src.Version]; !ok {
			return true, nil
		}
	}
	return false, nil
}

// migrationOf names a goose source: 00003_action_columns.sql is {3, "action_columns"}.
func migrationOf(src *goose.Source) Migration {
	name := strings.TrimSuffix(path.Base(src.Path), path.Ext(src.Path))
	if _, rest, ok := strings.Cut(name, "_"); ok {
		name = rest
	}
	return Migration{Version: src.Version, Name: name}
}

// leaseLost names the cause when a migration failed because its lease was taken over.
func leaseLost(ctx context.Context, err error) error {
	if cause := context.Cause(ctx); errors.Is(cause, ErrMigrationLeaseLost) {
		return fmt.Errorf("%w: %w", cause, err)
	}
	return err
}

// Applied reports whether the database is at this binary's schema, for readiness probes:
// every migration of Status applied, none unknown (a newer binary's schema is not one
// this binary can serve). Like Status it only reads, so probing a fresh database leaves
// it untouched. An error means the database could not be asked.
func (s *Migrator) Applied(ctx context.Context) (bool, error) {
	status, err := s.Status(ctx)
	if err != nil {
		return false, err
	}
	for _, m := range status {
		if !m.Applied || m.Unknown {
			return false, nil
		}
	}
	return true, nil
}
