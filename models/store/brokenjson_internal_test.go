package store

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// The warnings of broken rows do not flood: a row read again and again is logged once a
// brokenJSONLogEvery, and however many rows are broken, no more than brokenJSONLogBurst
// are logged in that time, the rest counted in the next warning.
func TestBrokenJSONWarningsRateLimited(t *testing.T) {
	var log bytes.Buffer
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f := newJSONFaults(openOptions{logger: slog.New(slog.NewTextHandler(&log, nil)), now: func() time.Time { return now }})
	lines := func() int { return strings.Count(log.String(), "\n") }

	for range 1000 {
		f.report("messages", "row-1", []string{"payload"})
	}
	if lines() != 1 || !strings.Contains(log.String(), "table=messages columns=[payload] id=row-1") {
		t.Fatalf("one row read 1,000 times logged %d lines, want 1:\n%s", lines(), log.String())
	}
	now = now.Add(brokenJSONLogEvery)
	f.report("messages", "row-1", []string{"payload"})
	if lines() != 2 {
		t.Fatalf("the row read again after %s logged %d lines in all, want 2", brokenJSONLogEvery, lines())
	}

	log.Reset()
	now = now.Add(brokenJSONLogEvery)
	for i := range 5 * brokenJSONLogBurst {
		f.report("subscribers", fmt.Sprint("row-", i), []string{"data"})
	}
	if lines() != brokenJSONLogBurst {
		t.Fatalf("%d broken rows logged %d lines, want %d", 5*brokenJSONLogBurst, lines(), brokenJSONLogBurst)
	}
	now = now.Add(brokenJSONLogEvery)
	f.report("templates", "row-x", []string{"tags"})
	if want := fmt.Sprintf("rows_not_logged=%d", 4*brokenJSONLogBurst); !strings.Contains(log.String(), want) {
		t.Fatalf("the next window's first warning does not count the rows left out (%s):\n%s", want, log.String())
	}
}
