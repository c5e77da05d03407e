package store

import (
	"context"
	"errors"
	"messages/models"
	"messages/models/migrate"
	"slices"
	"sync"
	"time"

	mysqldriver "github.com/go-sql-driver/mysql"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// On MySQL a list page names the index it reads, as the database has it: the index whose
// columns before (created_at, id) are all held equal by the filter, the most of them.
//
// Before it picks an index MariaDB estimates the rows of each one the condition could
// use, and for a range of one value (environment_id = ?) it dives into that index's
// B-tree at both ends. Eight indexes of messages begin with environment_id: a page whose
// ids are picked first paid for eight indexes' dives in the query of ids and eight more
// in the statement that joins the rows, 0.21 of 0.54 ms of MariaDB's time for a cursor
// page 500,000 deep at 1,000,000 messages (BENCHMARKS.md, Against PostGraphile). Named,
// the query of ids estimates one index, and the join reads by primary key (readMessages),
// which it does anyway. The plans are those MariaDB chose itself
// (TestMessagesAfterSeededList and TestListPlansAmongManyTenants assert them); the index
// comes from the database's own list, so an index a migration adds or drops is taken as
// it is, and a name the database no longer knows drops the hint and reloads the list
// (readWindow).
//
// Skipping the dives with statistics instead (eq_range_index_dive_limit) is not a way:
// statistics give every environment the average environment's rows, and for the largest
// one MariaDB then read a deep page by whichever index of the environment it liked,
// sorting all of the environment's rows.
//
// SQLite plans without estimates of this cost, and its pages name no index.

// listIndex is an index of messages that holds the list order: its columns before
// (created_at, id), which the filter must hold equal for the index to give the order.
type listIndex struct {
	name   string
	equals []string
}

// schemaOf is SQL naming the database that holds table, for information_schema: the
// connection's own, or on Vitess the table's keyspace (vtgate answers DATABASE() with its
// target, @primary, and routes a question about a keyspace named by a literal to one of
// its shards).
func (s *Store) schemaOf(table string) string {
	if !s.vitess {
		return "DATABASE()"
	}
	v, err := migrate.LoadVSchema()
	if err != nil {
		return "DATABASE()"
	}
	return "'" + v.KeyspaceOf(table) + "'"
}

// listIndexes is the store's list of them, loaded from the database on first use.
type listIndexes struct {
	mu      sync.Mutex
	loaded  bool
	indexes []listIndex
	// failed is when the list could not be read: pages name no index until a minute
	// later, when it is read again.
	failed time.Time
}

// load returns the indexes of messages, read from the database once. A database that
// cannot list them (an engine whose information_schema differs, a connection lost) leaves
// pages unnamed, as they were before names.
func (l *listIndexes) load(ctx context.Context, db *gorm.DB, schema string) []listIndex {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.loaded || time.Since(l.failed) < time.Minute {
		return l.indexes
	}
	var rows []struct{ IndexName, ColumnName string }
	err := db.WithContext(ctx).Raw(`SELECT index_name, column_name FROM information_schema.statistics
WHERE table_schema = ` + schema + ` AND table_name = 'messages' ORDER BY index_name, seq_in_index`).Scan(&rows).Error
	if err != nil || len(rows) == 0 { // no list, or no table yet
		l.failed = time.Now()
		return nil
	}
	columns := map[string][]string{}
	var names []string
	for _, r := range rows {
		if _, ok := columns[r.IndexName]; !ok {
			names = append(names, r.IndexName)
		}
		columns[r.IndexName] = append(columns[r.IndexName], r.ColumnName)
	}
	l.indexes = nil
	for _, name := range names {
		cols := columns[name]
		at := slices.Index(cols, "created_at")
		if at < 1 || at+1 >= len(cols) || cols[at+1] != "id" {
			continue
		}
		l.indexes = append(l.indexes, listIndex{name: name, equals: cols[:at]})
	}
	l.loaded = true
	return l.indexes
}

// forget drops the loaded list, so the next page reads it again.
func (l *listIndexes) forget() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.loaded, l.indexes, l.failed = false, nil, time.Time{}
}

// reloadListIndexes reads the list of indexes again, after a migration changed them: on
// a store that migrates before it serves, the pages find it read.
func (s *Store) reloadListIndexes(ctx context.Context) {
	if s.dialect != DialectMySQL {
		return
	}
	s.listIndexes.forget()
	s.listIndexes.load(ctx, s.db, s.schemaOf("messages"))
}

// equalColumns are the columns f holds to one value or a list of values.
func equalColumns(f models.ListFilter) []string {
	cols := []string{"environment_id"}
	if f.SubscriberID != nil {
		cols = append(cols, "subscriber_id")
	}
	if f.Channel != nil {
		cols = append(cols, "channel")
	}
	if len(f.TransactionIDs) > 0 {
		cols = append(cols, "transaction_id")
	}
	if len(f.TemplateIDs) > 0 {
		cols = append(cols, "template_id")
	}
	if f.Read != nil {
		cols = append(cols, "read")
	}
	if f.Seen != nil {
		cols = append(cols, "seen")
	}
	if f.Archived != nil {
		cols = append(cols, "archived")
	}
	return cols
}

// indexFor is the name of the index of indexes that a page with filter f reads, "" when
// none gives its order: the one with the most columns before (created_at, id), all held
// equal by f; of those, the first by name.
func indexFor(indexes []listIndex, f models.ListFilter) string {
	equal := equalColumns(f)
	best := -1
	for i, ix := range indexes {
		ok := true
		for _, c := range ix.equals {
			if !slices.Contains(equal, c) {
				ok = false
				break
			}
		}
		if ok && (best < 0 || len(ix.equals) > len(indexes[best].equals)) {
			best = i
		}
	}
	if best < 0 {
		return ""
	}
	return indexes[best].name
}

// listIndexHint is the FROM clause that names the index a page with filter f reads, nil
// when there is none to name, or on SQLite.
func (s *Store) listIndexHint(ctx context.Context, f models.ListFilter) clause.Interface {
	if s.dialect != DialectMySQL {
		return nil
	}
	name := indexFor(s.listIndexes.load(ctx, s.db, s.schemaOf("messages")), f)
	if name == "" {
		return nil
	}
	return fromMessages("USE INDEX (" + quoteName(name) + ")")
}

// fromMessages is the FROM clause of a query on messages with an index hint after the
// table's name.
func fromMessages(hint string) clause.From {
	return clause.From{Tables: []clause.Table{{Name: "`messages` " + hint, Raw: true}}}
}

// quoteName quotes a MySQL identifier.
func quoteName(name string) string {
	out := []byte{'`'}
	for i := 0; i < len(name); i++ {
		if name[i] == '`' {
			out = append(out, '`')
		}
		out = append(out, name[i])
	}
	return string(append(out, '`'))
}

// isUnknownIndex reports whether err is MySQL's answer to a hint naming an index the
// table does not have (ER_KEY_DOES_NOT_EXITS).
func isUnknownIndex(err error) bool {
	var myErr *mysqldriver.MySQLError
	return errors.As(err, &myErr) && myErr.Number == 1176
}
