package store_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"messages/models"
	"messages/models/dbtest"
	"messages/models/store"
)

// logLines is a JSON log written by the store's goroutines and read by the test.
type logLines struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// records parses every line as a JSON object, failing on one that is not.
func (l *logLines) records(t *testing.T) []map[string]any {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(l.buf.String()), "\n") {
		if line == "" {
			continue
		}
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line is not a JSON record (%v): %.300s", err, line)
		}
		out = append(out, rec)
	}
	return out
}

// openLogged opens a migrated store of dialect logging GORM to a JSON log.
func openLogged(t *testing.T, dialect string, opts ...store.OpenOption) (*store.Store, *logLines) {
	t.Helper()
	log := &logLines{}
	opts = append([]store.OpenOption{store.WithLogger(slog.New(slog.NewJSONHandler(log, nil)))}, opts...)
	s, err := store.Open(context.Background(), dbtest.URL(t, dialect), store.DefaultPool, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if err := s.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s, log
}

// GORM's slow statements and failures reach the logger given to Open as JSON records,
// the statement cut to 1 KiB and without its values; a record not found is no failure.
func TestGormLogStructured(t *testing.T) {
	t.Parallel()
	for _, dialect := range dbtest.Dialects {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			t.Run("slowSQLIsWarnRecord", func(t *testing.T) {
				s, log := openLogged(t, dialect, store.WithSlowThreshold(time.Nanosecond))
				cols := make([]string, 300)
				for i := range cols {
					cols[i] = fmt.Sprintf("? AS a%d", i)
				}
				args := make([]any, len(cols))
				for i := range args {
					args[i] = "secret-value"
				}
				if err := s.DB().WithContext(ctx).Exec("SELECT "+strings.Join(cols, ", "), args...).Error; err != nil {
					t.Fatal(err)
				}
				var slow map[string]any
				for _, rec := range log.records(t) {
					if sql, _ := rec["sql"].(string); rec["msg"] == "slow sql" && strings.HasPrefix(sql, "SELECT ? AS a0") {
						slow = rec
					}
				}
				if slow == nil {
					t.Fatalf("no slow sql record for the statement:\n%s", log.buf.String())
				}
				sql := slow["sql"].(string)
				if slow["level"] != "WARN" || slow["duration"] == "" || slow["rows"] == nil ||
					len(sql) > 1<<10+40 || !strings.Contains(sql, "bytes cut]") || strings.Contains(log.buf.String(), "secret-value") {
					t.Errorf("slow sql record %v: want WARN, a duration, rows, the text cut to 1 KiB and no values", slow)
				}
			})
			t.Run("failedSQLIsErrorRecord", func(t *testing.T) {
				s, log := openLogged(t, dialect)
				if err := s.DB().WithContext(ctx).Exec("SELECT * FROM no_such_table").Error; err == nil {
					t.Fatal("a query of a missing table succeeded")
				}
				var failed []map[string]any
				for _, rec := range log.records(t) {
					if rec["msg"] == "sql failed" {
						failed = append(failed, rec)
					}
				}
				if len(failed) != 1 || failed[0]["level"] != "ERROR" || failed[0]["error"] == "" || failed[0]["sql"] != "SELECT * FROM no_such_table" {
					t.Errorf("want one ERROR record with the statement and its error, got %v", failed)
				}
			})
			t.Run("recordNotFoundIsSilent", func(t *testing.T) {
				s, log := openLogged(t, dialect)
				var m models.Message
				if err := s.DB().WithContext(ctx).Where("id = ?", "none").First(&m).Error; err == nil {
					t.Fatal("found a message that does not exist")
				}
				if recs := log.records(t); len(recs) != 0 {
					t.Errorf("a record not found was logged: %v", recs)
				}
			})
		})
	}
}
