package dbtest

import (
	"messages/models/store"
	"strings"
	"sync"
	"testing"

	"gorm.io/gorm"
)

// Statement is one SQL statement a store ran: the table GORM resolved and the SQL text.
type Statement struct {
	Table string
	SQL   string
}

// StatementLog records every statement a store runs, through GORM callbacks, so tests can
// count queries and see which tables and clauses they touch.
type StatementLog struct {
	mu   sync.Mutex
	list []Statement
}

// RecordStatements starts recording the statements of s. Call it before the store is
// used concurrently (before serving): GORM's callback registry is not safe to change
// under load.
func RecordStatements(t testing.TB, s *store.Store) *StatementLog {
	t.Helper()
	l := &StatementLog{}
	record := func(db *gorm.DB) {
		if db.DryRun {
			return // a subquery GORM renders into the statement that holds it: never sent
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		l.list = append(l.list, Statement{Table: db.Statement.Table, SQL: db.Statement.SQL.String()})
	}
	cb := s.DB().Callback()
	for _, err := range []error{
		cb.Query().After("gorm:query").Register("test:record", record),
		cb.Row().After("gorm:row").Register("test:record", record),
		cb.Raw().After("gorm:raw").Register("test:record", record),
		cb.Create().After("gorm:create").Register("test:record", record),
		cb.Update().After("gorm:update").Register("test:record", record),
		cb.Delete().After("gorm:delete").Register("test:record", record),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	return l
}

// Take returns the statements recorded since the last Take and forgets them.
func (l *StatementLog) Take() []Statement {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.list
	l.list = nil
	return out
}

// StatementCounts summarises statements: how many in all, how many count rows, and how
// many read the embedded records' tables.
type StatementCounts struct {
	All, Count, Subscribers, Templates int
}

// CountStatements summarises list.
func CountStatements(list []Statement) StatementCounts {
	var c StatementCounts
	for _, st := range list {
		c.All++
		// A list's totalCount is a COUNT, or a sum of the counter rows (message_counts).
		if sql := strings.ToLower(st.SQL); strings.Contains(sql, "count(") || strings.Contains(sql, "message_counts") {
			c.Count++
		}
		switch st.Table {
		case "subscribers":
			c.Subscribers++
		case "templates":
			c.Templates++
		}
	}
	return c
}
