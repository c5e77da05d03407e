package migrate

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"
)

// The migrations change the shards' schema on the shards themselves (shards.go), which
// vtgate does not see: it learns a table's columns when the tablets next reread their
// schema (vttablet's --queryserver-config-schema-reload-time) and, until then, plans with
// the columns it knew. It refuses a column it has not seen ("column … not found in
// table"), expands SELECT * to columns a migration dropped, and cannot order a scatter of
// SELECT * over a table it has never seen (VT09015). A migration is done, for the
// instances about to serve the new schema, once vtgate plans with it.

// VTGateSchemaWait bounds how long Up and Down wait for vtgate to plan with the schema
// they left, before they answer with ErrVTGateSchemaStale.
var VTGateSchemaWait = 3 * time.Minute

// ErrVTGateSchemaStale says the migrations are applied but vtgate still plans with the
// schema before them.
var ErrVTGateSchemaStale = errors.New("the migrations are applied on the shards, but vtgate still plans with the schema before them: " +
	"the tablets reread their schema every --queryserver-config-schema-reload-time (set it to seconds, docs/scaling.md); " +
	"`vtctldclient ReloadSchemaKeyspace` rereads it at once")

// awaitVTGate waits until vtgate plans every sharded table of v with
// the columns its shards hold, as one shard of its keyspace lists them.
func (s *Migrator) awaitVTGate(ctx context.Context) error {
	if len(s.shards) == 0 {
		return nil
	}
	if vitess, err := IsVitess(ctx, s.db); err != nil || !vitess {
		return err
	}
	v, err := LoadVSchema()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, VTGateSchemaWait)
	defer cancel()
	start := time.Now()
	told := false
	for _, ks := range v.Keyspaces() {
		if !v[ks].Sharded {
			continue
		}
		shard := s.firstShard(ks)
		if shard == nil {
			continue
		}
		for _, table := range slices.Sorted(maps.Keys(v[ks].Tables)) {
			columns, err := shardColumns(ctx, shard, table)
			if err != nil {
				return fmt.Errorf("list the columns of %s on a shard of %s: %w", table, ks, err)
			}
			if len(columns) == 0 {
				// Not created yet, or rolled back: nothing plans with it.
				continue
			}
			probes := []string{
				// A column vtgate has not seen is refused.
				fmt.Sprintf("SELECT %s FROM %s WHERE environment_id = '' LIMIT 1", strings.Join(columns, ", "), quoteName(table)),
				// A column it still knows is expanded into the query; a table it has
				// never seen is refused (VT09015).
				fmt.Sprintf("SELECT * FROM %s ORDER BY environment_id LIMIT 1", quoteName(table)),
			}
			for _, probe := range probes {
				for {
					err := exhaust(ctx, s.db, probe)
					if err == nil {
						break
					}
					if !staleSchema(err) {
						return fmt.Errorf("ask vtgate about %s: %w", table, err)
					}
					if !told && time.Since(start) > 5*time.Second {
						told = true
						slog.Info("waiting for vtgate to plan with the migrated schema", "table", table, "refused", err.Error())
					}
					select {
					case <-ctx.Done():
						return fmt.Errorf("%w (%s: %v)", ErrVTGateSchemaStale, table, err)
					case <-time.After(250 * time.Millisecond):
					}
				}
			}
		}
	}
	return nil
}

// firstShard returns the handle of keyspace ks's shard whose name sorts first.
func (s *Migrator) firstShard(ks string) *sql.DB {
	for _, name := range slices.Sorted(maps.Keys(s.shards)) {
		if strings.HasPrefix(name, ks+"/") {
			return s.shards[name]
		}
	}
	return nil
}

// shardColumns lists table's columns, quoted, in the shard database's own order; none
// when the shard has no such table.
func shardColumns(ctx context.Context, shard *sql.DB, table string) ([]string, error) {
	rows, err := shard.QueryContext(ctx, "SELECT column_name FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = ? ORDER BY ordinal_position", table)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var columns []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			return nil, err
		}
		columns = append(columns, quoteName(c))
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return columns, nil
}

// exhaust runs a query and reads its rows, so an error while streaming them counts.
func exhaust(ctx context.Context, db *sql.DB, query string) error {
	rows, err := db.QueryContext(ctx, query)
	if err != nil {
		return err
	}
	for rows.Next() {
	}
	return errors.Join(rows.Err(), rows.Close())
}

// staleSchema reports whether vtgate refused a statement for planning with a schema older
// than the shards': a column it has not seen, one the shards no longer have, a table it
// cannot order.
func staleSchema(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "VT09015") || strings.Contains(msg, "not found in table") ||
		strings.Contains(msg, "Error 1054") || strings.Contains(msg, "Unknown column")
}
