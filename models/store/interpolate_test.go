package store_test

import (
	"testing"
	"time"

	"messages/models/dbtest"
	"messages/models/store"
)

// On MySQL, arguments are escaped into the statement: a time argument must keep the
// column's precision, or MariaDB compares the TIMESTAMP(6) with text and the change
// feed's poll scans its whole index instead of a range.
func TestTimeArgumentsKeepTheIndexRange(t *testing.T) {
	s := dbtest.Open(t, store.DialectMySQL)
	at := time.Date(2026, 1, 2, 3, 4, 5, 123456789, time.UTC) // nanoseconds, as time.Now has
	var plans []struct {
		Type string `gorm:"column:type"`
		Key  string `gorm:"column:key"`
	}
	if err := s.DB().Raw("EXPLAIN SELECT id, changed_at FROM messages WHERE changed_at >= ? ORDER BY changed_at, id LIMIT 1000", at).
		Scan(&plans).Error; err != nil {
		t.Fatal(err)
	}
	if len(plans) != 1 || plans[0].Type != "range" || plans[0].Key != "messages_changed" {
		t.Errorf("plan %+v, want a range of messages_changed", plans)
	}
}
