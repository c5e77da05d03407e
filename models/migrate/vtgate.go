package migrate

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"
)

// The migrations change the shards' schema on the shards themselves (shards.go), which
// vtgate does not see: it learns a table's columns from the tablets' schema tracking,
// after a tablet rereads its schema, which it does after every DDL it runs itself and
// otherwise every --queryserver-config-schema-reload-time (30 minutes by default). Until
// then vtgate plans with the columns it knew: it refuses a column it has not seen
// ("column … not found in table"), expands SELECT * to columns a migration dropped, and
// cannot order a scatter of SELECT * over a table it has never seen (VT09015). A
// migration is done, for the instances about to serve the new schema, once vtgate plans
// with it, so Up and Down ask each tablet to reread (a DDL that changes nothing, through
// vtgate, one shard at a time) and wait for vtgate.

// VTGateSchemaWait bounds how long Up and Down wait for vtgate to plan with the schema
// they left, before they answer with ErrVTGateSchemaStale.
var VTGateSchemaWait = 3 * time.Minute

// rereadEvery is how long vtgate may refuse for a stale schema before the tablets are
// asked to reread it again.
const rereadEvery = 2 * time.Second

// rereadTable names the table of the DDL that asks a tablet to reread its schema: it is
// dropped if it exists, and nothing creates it.
const rereadTable = "migrate_schema_reread"

// ErrVTGateSchemaStale says the migrations are applied but vtgate still plans with the
// schema before them.
var ErrVTGateSchemaStale = errors.New("the migrations are applied on the shards, but vtgate still plans with the schema before them: " +
	"the tablets were asked to reread it (a DDL through vtgate) and did not signal it, or vtgate's schema tracking is off (vtgate --schema-change-signal); " +
	"`vtctldclient ReloadSchemaKeyspace` rereads it")

// awaitVTGate asks the tablets to reread their schema and waits until vtgate plans every
// sharded table of the VSchema with the columns its shards hold, as one shard of its
// keyspace lists them.
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
	w := &vtgateWait{m: s, start: time.Now()}
	w.reread(ctx)
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
				if err := w.until(ctx, table, probe); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// vtgateWait is one awaitVTGate: when it began, when it last asked the tablets to reread,
// and what it has logged.
type vtgateWait struct {
	m              *Migrator
	start, asked   time.Time
	waited, warned bool
}

// until runs probe through vtgate until vtgate no longer refuses it for a stale schema,
// asking the tablets to reread every rereadEvery meanwhile.
func (w *vtgateWait) until(ctx context.Context, table, probe string) error {
	for {
		err := exhaust(ctx, w.m.db, probe)
		if err == nil {
			return nil
		}
		if !staleSchema(err) {
			return fmt.Errorf("ask vtgate about %s: %w", table, err)
		}
		if !w.waited && time.Since(w.start) > 5*time.Second {
			w.waited = true
			slog.Info("waiting for vtgate to plan with the migrated schema", "table", table, "refused", err.Error())
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (%s: %v)", ErrVTGateSchemaStale, table, err)
		case <-time.After(250 * time.Millisecond):
		}
		if time.Since(w.asked) > rereadEvery {
			w.reread(ctx)
		}
	}
}

// reread asks the tablets to reread their schema, and says once if any could not be asked.
func (w *vtgateWait) reread(ctx context.Context) {
	if err := w.m.rereadSchema(ctx); err != nil && !w.warned && ctx.Err() == nil {
		w.warned = true
		slog.Warn("could not ask the tablets to reread their schema; waiting for their periodic reread", "error", err.Error())
	}
	w.asked = time.Now()
}

// rereadSchema asks every shard's tablet to reread its schema now, and returns when it
// asked: a tablet rereads it after each DDL it runs, then signals vtgate what changed.
// The DDL drops a table that does not exist, on one shard at a time (a connection of its
// own targeting the shard), so no two tablets reread at once: tablets sharing a mysqld
// (vttestserver) share its schema copy too, and rereading together can lose a table from
// it. Where a tablet refuses the DDL, migrate can only wait for its periodic reread.
func (s *Migrator) rereadSchema(ctx context.Context) error {
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(s.shards)) {
		keyspace, shard, _ := strings.Cut(name, "/")
		if err := s.onShard(ctx, keyspace+":"+shard,
			// A vtgate whose default DDL strategy is an online one would queue the DDL
			// as a migration, run later: this one must run now.
			"SET @@ddl_strategy = 'direct'",
			"DROP TABLE IF EXISTS "+quoteName(rereadTable)); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
		}
	}
	return errors.Join(errs...)
}

// onShard runs statements through vtgate on one shard only, target "keyspace:shard", on
// a connection that does not go back to the pool targeting it.
func (s *Migrator) onShard(ctx context.Context, target string, statements ...string) error {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer func() {
		_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		_ = conn.Close()
	}()
	for _, statement := range append([]string{"USE " + quoteName(target)}, statements...) {
		if _, err := conn.ExecContext(ctx, statement); err != nil {
			return err
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
