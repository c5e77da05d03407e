package events

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"messages/cmd/loadtest/events/dbproxy"
	"messages/cmd/loadtest/measure"
)

// quietCosts is what the server and the database spend over a window without traffic.
type quietCosts struct {
	cpu          float64 // percent of one core, the server at --server-pid
	questions    float64 // per second, the whole database server
	selects      float64 // Com_select per second
	readNext     float64 // Handler_read_next per second: index entries read in order
	rssMB        float64 // VmRSS at the end
	otherClients int     // busy connections to other databases, at either end
	// Through the counting proxy, when there is one: the base URL's server alone.
	statements float64 // per second
	kbFromDB   float64 // per second
	windowRows int     // rows the feed's poll reads again each time
}

// dbCounters are the global status counters a quiet window reads.
var dbCounters = []string{"Questions", "Com_select", "Handler_read_next"}

// measureQuiet reads the server's CPU and the database's counters over d.
func (b *eventsBench) measureQuiet(ctx context.Context, d time.Duration) (quietCosts, error) {
	var q quietCosts
	var err error
	if q.windowRows, err = b.windowRows(ctx, b.c.lookback()); err != nil {
		return q, err
	}
	other0, err := b.otherClients(ctx)
	if err != nil {
		return q, err
	}
	s0, err := b.dbStatus(ctx, dbCounters...)
	if err != nil {
		return q, err
	}
	var p0 dbproxy.Snapshot
	if b.c.proxyStats != "" {
		if p0, err = b.proxyStats(ctx); err != nil {
			return q, err
		}
	}
	t0, err := measure.ReadCPUTicks(b.c.serverPID)
	if err != nil {
		return q, err
	}
	start := time.Now()
	select {
	case <-ctx.Done():
		return q, ctx.Err()
	case <-time.After(d):
	}
	t1, err := measure.ReadCPUTicks(b.c.serverPID)
	if err != nil {
		return q, err
	}
	wall := time.Since(start)
	if b.c.proxyStats != "" {
		p1, err := b.proxyStats(ctx)
		if err != nil {
			return q, err
		}
		q.statements = measure.Round2(float64(p1.Statements()-p0.Statements()) / wall.Seconds())
		q.kbFromDB = measure.Round2(float64(p1.BytesFromDatabase-p0.BytesFromDatabase) / 1024 / wall.Seconds())
	}
	s1, err := b.dbStatus(ctx, dbCounters...)
	if err != nil {
		return q, err
	}
	other1, err := b.otherClients(ctx)
	if err != nil {
		return q, err
	}
	m, err := measure.ReadMemoryStatus(b.c.serverPID)
	if err != nil {
		return q, err
	}
	perSecond := func(name string) float64 { return measure.Round2(float64(s1[name]-s0[name]) / wall.Seconds()) }
	q.cpu = measure.CPUPercent(t1-t0, wall)
	q.questions, q.selects, q.readNext = perSecond("Questions"), perSecond("Com_select"), perSecond("Handler_read_next")
	q.rssMB = measure.Round2(float64(m.RSSKB) / 1024)
	q.otherClients = max(other0, other1)
	fmt.Fprintf(b.log, "quiet %s: cpu %.2f%%, server statements %.1f/s (%.1f KB/s back), questions %.1f/s, com_select %.1f/s, handler_read_next %.0f/s, rss %.1f MB, window rows %d, other busy clients %d\n",
		wall.Round(time.Millisecond), q.cpu, q.statements, q.kbFromDB, q.questions, q.selects, q.readNext, q.rssMB, q.windowRows, q.otherClients)
	return q, nil
}

// settleWindow makes the feed's re-read window hold one row: it waits out the lookback
// after whatever was written last, then writes one message, so the poll reads one
// position each time, as on a quiet day.
func (b *eventsBench) settleWindow(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(b.c.lookback() + 500*time.Millisecond):
	}
	sub := b.subscribers[len(b.subscribers)-1]
	if _, err := b.insertRaw(ctx, newRawMessages(1, []subscriberRef{sub}, "")); err != nil {
		return err
	}
	time.Sleep(time.Second)
	return nil
}

// dbStatus reads global status counters of the database server.
func (b *eventsBench) dbStatus(ctx context.Context, names ...string) (map[string]int64, error) {
	q := "SHOW GLOBAL STATUS WHERE Variable_name IN (?" + strings.Repeat(", ?", len(names)-1) + ")"
	args := make([]any, len(names))
	for i, n := range names {
		args[i] = n
	}
	rows, err := b.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var name string
		var v int64
		if err := rows.Scan(&name, &v); err != nil {
			return nil, err
		}
		out[name] = v
	}
	return out, rows.Err()
}

// otherClients counts the database server's connections to other databases: their
// queries are in the global counters too.
func (b *eventsBench) otherClients(ctx context.Context) (int, error) {
	var n int
	err := b.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM information_schema.PROCESSLIST
		WHERE DB IS NOT NULL AND DB <> DATABASE() AND COMMAND <> 'Sleep'`).Scan(&n)
	return n, err
}

// windowRows is how many rows the feed's poll reads again each time: those stamped
// within lookback of the newest change.
func (b *eventsBench) windowRows(ctx context.Context, lookback time.Duration) (int, error) {
	var n int
	err := b.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM messages WHERE changed_at >=
		(SELECT MAX(changed_at) FROM messages) - INTERVAL ? MICROSECOND`, lookback.Microseconds()).Scan(&n)
	return n, err
}

// goRuntime reads the base URL's /metrics for the Go runtime's view of its memory:
// goroutines, their stacks, and the heap.
func (b *eventsBench) goRuntime(ctx context.Context) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.c.baseURL+"/metrics", nil)
	if err != nil {
		return "", err
	}
	resp, err := b.http.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return "", err
	}
	v := measure.ParseGauges(string(body), "go_goroutines", "go_memstats_stack_inuse_bytes", "go_memstats_heap_inuse_bytes")
	return fmt.Sprintf("%.0f goroutines, stacks %.0f MB, heap in use %.0f MB",
		v["go_goroutines"], v["go_memstats_stack_inuse_bytes"]/(1<<20), v["go_memstats_heap_inuse_bytes"]/(1<<20)), nil
}

// proxyStats reads the counting proxy's counts.
func (b *eventsBench) proxyStats(ctx context.Context) (dbproxy.Snapshot, error) {
	var s dbproxy.Snapshot
	if b.c.proxyStats == "" {
		return s, errors.New("no --db-proxy-stats")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.c.proxyStats, nil)
	if err != nil {
		return s, err
	}
	resp, err := b.http.Do(req)
	if err != nil {
		return s, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return s, fmt.Errorf("proxy stats: %d", resp.StatusCode)
	}
	return s, json.NewDecoder(resp.Body).Decode(&s)
}
