package dbtest

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"messages/models"
	"messages/models/jsonl"
	"messages/models/seed"
	"messages/models/store"
)

// Seed generates synthetic data into s, failing the test on error.
func Seed(t testing.TB, s *store.Store, o seed.Options) seed.Stats {
	t.Helper()
	stats, err := seed.Generate(context.Background(), s, o)
	if err != nil {
		t.Fatalf("seed: %v", err)
	}
	return stats
}

// Export returns an environment's JSON Lines export, failing the test on error or when
// the count it reports differs from the lines it wrote.
func Export(t testing.TB, s *store.Store, environmentID string) []byte {
	t.Helper()
	var buf bytes.Buffer
	n, err := jsonl.Export(context.Background(), s, environmentID, &buf, nil)
	if err != nil {
		t.Fatalf("export %s: %v", environmentID, err)
	}
	if lines := bytes.Count(buf.Bytes(), []byte("\n")); lines != n {
		t.Fatalf("export says %d messages but wrote %d lines", n, lines)
	}
	return buf.Bytes()
}

// ExportedMessages decodes an export.
func ExportedMessages(t testing.TB, b []byte) []models.Message {
	t.Helper()
	var out []models.Message
	for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var m models.Message
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

// RowCounts counts the rows of every table an import or a seed writes.
func RowCounts(t testing.TB, s *store.Store) map[string]int64 {
	t.Helper()
	counts := map[string]int64{}
	for _, table := range []string{"environments", "subscribers", "templates", "messages"} {
		var n int64
		if err := s.DB().Table(table).Count(&n).Error; err != nil {
			t.Fatal(err)
		}
		counts[table] = n
	}
	return counts
}

// TimeEqual makes cmp compare timestamps by instant; models.Time wraps time.Time, whose
// unexported fields cmp cannot read.
var TimeEqual = cmp.Comparer(func(a, b models.Time) bool { return a.Equal(b.Time) })

// IgnoreStamps leaves out of a comparison the change stamps the database writes on every
// message row (a fixture built in Go has none).
var IgnoreStamps = cmp.Options{
	cmpopts.IgnoreFields(models.Message{}, "InsertedAt", "ChangedAt"),
	cmpopts.IgnoreFields(models.Template{}, "ChangedAt"),
	cmpopts.IgnoreFields(models.Subscriber{}, "ChangedAt"),
}

// LoadMessage reads a message row as stored, failing the test when it is missing.
func LoadMessage(t testing.TB, s *store.Store, id string) *models.Message {
	t.Helper()
	var m models.Message
	if err := s.DB().Where("id = ?", id).Take(&m).Error; err != nil {
		t.Fatalf("load message %s: %v", id, err)
	}
	return &m
}
