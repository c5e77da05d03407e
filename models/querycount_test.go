package models_test

import (
	"strings"
	"sync"
	"testing"

	"gorm.io/gorm"

	"messages/models"
)

// statement is one SQL statement the store ran: the table GORM resolved and the SQL text.
type statement struct {
	Table string
	SQL   string
}

// statementLog records every statement a store runs, through GORM callbacks, so tests can
// count queries and see which tables and clauses they touch.
type statementLog struct {
	mu   sync.Mutex
	list []statement
}

// recordStatements starts recording the statements of s. Register it before the store is
// used concurrently: GORM's callback registry is not safe to change under load.
func recordStatements(t testing.TB, s *models.Store) *statementLog {
	t.Helper()
	l := &statementLog{}
	record := func(db *gorm.DB) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.list = append(l.list, statement{Table: db.Statement.Table, SQL: db.Statement.SQL.String()})
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

// take returns the statements recorded since the last take and forgets them.
func (l *statementLog) take() []statement {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.list
	l.list = nil
	return out
}

// statementCounts summarises statements: how many in all, how many count rows, and how
// many read the embedded records' tables.
type statementCounts struct {
	All, Count, Subscribers, Templates int
}

func countStatements(list []statement) statementCounts {
	var c statementCounts
	for _, st := range list {
		c.All++
		if strings.Contains(strings.ToLower(st.SQL), "count(") {
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
