package migrate

import (
	"context"
	"database/sql"
	"database/sql/driver"
	_ "embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strings"
)

// The schema's place on a sharded Vitess deployment: which keyspace holds each table,
// and by which column a sharded table's rows are placed (docs/scaling.md, "Vitess").
// Every table a tenant's request touches is in the sharded keyspace with the
// environment id as its shard key; the few looked up by something else (environments and
// API keys, found by id, hash or application identifier) and the migrations' own
// bookkeeping are in one unsharded keyspace beside it.
//
//go:embed vschema.json
var vschemaJSON []byte

// Keyspace is one keyspace of the VSchema, in Vitess's own JSON form (the part of it
// this schema uses).
type Keyspace struct {
	Sharded  bool                             `json:"sharded"`
	Vindexes map[string]struct{ Type string } `json:"vindexes,omitempty"`
	Tables   map[string]struct {
		ColumnVindexes []struct{ Column, Name string } `json:"column_vindexes,omitempty"`
	} `json:"tables"`
}

// VSchema is the schema's VSchema: keyspaces by name.
type VSchema map[string]Keyspace

// LoadVSchema returns the embedded VSchema.
func LoadVSchema() (VSchema, error) {
	var v VSchema
	if err := json.Unmarshal(vschemaJSON, &v); err != nil {
		return nil, fmt.Errorf("vschema.json: %w", err)
	}
	return v, nil
}

// KeyspaceOf returns the keyspace that holds table, or "" when no keyspace names it.
func (v VSchema) KeyspaceOf(table string) string {
	for name, ks := range v {
		if _, ok := ks.Tables[table]; ok {
			return name
		}
	}
	return ""
}

// Keyspaces lists the keyspaces by name.
func (v VSchema) Keyspaces() []string { return slices.Sorted(maps.Keys(v)) }

// IsVitess reports whether db is Vitess's vtgate, which answers @@version with its own
// suffix.
func IsVitess(ctx context.Context, db *sql.DB) (bool, error) {
	var version string
	if err := db.QueryRowContext(ctx, "SELECT @@version").Scan(&version); err != nil {
		return false, fmt.Errorf("ask the database's version: %w", err)
	}
	return strings.HasSuffix(version, "-Vitess"), nil
}

// applyVSchema adds to vtgate's VSchema what the embedded one has and it lacks (the
// VSchema DDL only adds, so a running deployment's own additions stay): the vindexes,
// then each keyspace's tables. It runs through vtgate, on one connection per keyspace
// (SHOW VSCHEMA answers for the connection's keyspace), before any migration, so every
// table a migration creates is already routed.
func applyVSchema(ctx context.Context, db *sql.DB, v VSchema) error {
	for _, name := range v.Keyspaces() {
		if err := applyKeyspace(ctx, db, name, v[name]); err != nil {
			return fmt.Errorf("apply the VSchema of keyspace %s: %w", name, err)
		}
	}
	return nil
}

func applyKeyspace(ctx context.Context, db *sql.DB, name string, ks Keyspace) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	// The connection is left in the keyspace: it goes back to the pool as a bad one,
	// which closes it, never to be handed out there.
	defer func() {
		_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		_ = conn.Close()
	}()
	if _, err := conn.ExecContext(ctx, "USE "+quoteName(name)); err != nil {
		return err
	}
	tables, err := column(ctx, conn, "SHOW VSCHEMA TABLES", 0)
	if err != nil {
		return err
	}
	vindexes := map[string]bool{}
	if ks.Sharded {
		// Keyspace, Name, Type, Params, Owner.
		names, err := column(ctx, conn, "SHOW VSCHEMA VINDEXES", 1)
		if err != nil {
			return err
		}
		for _, n := range names {
			vindexes[n] = true
		}
	}
	for _, vindex := range slices.Sorted(maps.Keys(ks.Vindexes)) {
		if vindexes[vindex] {
			continue
		}
		stmt := fmt.Sprintf("ALTER VSCHEMA CREATE VINDEX %s.%s USING %s", quoteName(name), quoteName(vindex), ks.Vindexes[vindex].Type)
		if _, err := conn.ExecContext(ctx, stmt); err != nil {
			return err
		}
	}
	for _, table := range slices.Sorted(maps.Keys(ks.Tables)) {
		if slices.Contains(tables, table) {
			continue
		}
		stmt := fmt.Sprintf("ALTER VSCHEMA ADD TABLE %s.%s", quoteName(name), quoteName(table))
		if cv := ks.Tables[table].ColumnVindexes; len(cv) > 0 {
			// The first column vindex is the primary one: it places the rows.
			stmt = fmt.Sprintf("ALTER VSCHEMA ON %s.%s ADD VINDEX %s(%s)", quoteName(name), quoteName(table), quoteName(cv[0].Name), quoteName(cv[0].Column))
		}
		if _, err := conn.ExecContext(ctx, stmt); err != nil {
			return err
		}
	}
	return nil
}

// column returns the i-th column of every row a statement answers.
func column(ctx context.Context, conn *sql.Conn, query string, i int) ([]string, error) {
	rows, err := conn.QueryContext(ctx, query)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var out []string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for j := range vals {
			ptrs[j] = &vals[j]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		out = append(out, vals[i].String)
	}
	return out, rows.Err()
}

func quoteName(name string) string { return "`" + strings.ReplaceAll(name, "`", "``") + "`" }

// Latest is the highest version of the embedded migrations.
func Latest() int64 {
	var latest int64
	files, _ := fs.Glob(migrations, "migrations/mysql/*.sql")
	for _, f := range files {
		var v int64
		if _, err := fmt.Sscanf(path.Base(f), "%d_", &v); err == nil {
			latest = max(latest, v)
		}
	}
	return latest
}
