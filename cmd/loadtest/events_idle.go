package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"messages/graph/gqlclient"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/PID/stat: 100 on Linux.
const clockTicks = 100

// parseCPUTicks reads utime + stime (fields 14 and 15) of a /proc/PID/stat line. The
// command name (field 2) is in parentheses and may hold spaces, so fields are counted
// after its closing parenthesis.
func parseCPUTicks(stat string) (int64, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, errors.New("no command name in the process stat")
	}
	f := strings.Fields(stat[i+1:]) // f[0] is field 3, the state
	if len(f) < 13 {
		return 0, errors.New("short process stat")
	}
	utime, err := strconv.ParseInt(f[11], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("utime: %w", err)
	}
	stime, err := strconv.ParseInt(f[12], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("stime: %w", err)
	}
	return utime + stime, nil
}

func readCPUTicks(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	return parseCPUTicks(string(b))
}

// cpuPercent is CPU time over wall time, in percent of one core.
func cpuPercent(ticks int64, wall time.Duration) float64 {
	if wall <= 0 {
		return 0
	}
	return round2(float64(ticks) / clockTicks / wall.Seconds() * 100)
}

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
	var p0 proxySnapshot
	if b.c.proxyStats != "" {
		if p0, err = b.proxyStats(ctx); err != nil {
			return q, err
		}
	}
	t0, err := readCPUTicks(b.c.serverPID)
	if err != nil {
		return q, err
	}
	start := time.Now()
	select {
	case <-ctx.Done():
		return q, ctx.Err()
	case <-time.After(d):
	}
	t1, err := readCPUTicks(b.c.serverPID)
	if err != nil {
		return q, err
	}
	wall := time.Since(start)
	if b.c.proxyStats != "" {
		p1, err := b.proxyStats(ctx)
		if err != nil {
			return q, err
		}
		q.statements = round2(float64(p1.statements()-p0.statements()) / wall.Seconds())
		q.kbFromDB = round2(float64(p1.BytesFromDatabase-p0.BytesFromDatabase) / 1024 / wall.Seconds())
	}
	s1, err := b.dbStatus(ctx, dbCounters...)
	if err != nil {
		return q, err
	}
	other1, err := b.otherClients(ctx)
	if err != nil {
		return q, err
	}
	m, err := readMemoryStatus(b.c.serverPID)
	if err != nil {
		return q, err
	}
	perSecond := func(name string) float64 { return round2(float64(s1[name]-s0[name]) / wall.Seconds()) }
	q.cpu = cpuPercent(t1-t0, wall)
	q.questions, q.selects, q.readNext = perSecond("Questions"), perSecond("Com_select"), perSecond("Handler_read_next")
	q.rssMB = round2(float64(m.rssKB) / 1024)
	q.otherClients = max(other0, other1)
	fmt.Fprintf(b.log, "quiet %s: cpu %.2f%%, server statements %.1f/s (%.1f KB/s back), questions %.1f/s, com_select %.1f/s, handler_read_next %.0f/s, rss %.1f MB, window rows %d, other busy clients %d\n",
		wall.Round(time.Millisecond), q.cpu, q.statements, q.kbFromDB, q.questions, q.selects, q.readNext, q.rssMB, q.windowRows, q.otherClients)
	return q, nil
}

// lookback is the servers' EVENTS_LOOKBACK, which the benchmark assumes is the default.
func (c eventsConfig) lookback() time.Duration { return 2 * time.Second }

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

// listener counts the events of one subscription and keeps the time of the last.
type listener struct {
	events atomic.Int64
	wrong  atomic.Int64 // events of another subscriber
	last   atomic.Int64 // unix nanoseconds
	ended  atomic.Value // the error code that ended the stream, if any
}

// listen reads s until it ends; want is the subscriber the events must be for ("" any).
func (l *listener) listen(s *gqlclient.Subscription, want string, arrivals chan<- time.Time) {
	for r := range s.Results() {
		at := time.Now()
		ev, err := decodeEvent(r)
		if err != nil {
			continue
		}
		if ev.code != "" {
			l.ended.Store(ev.code)
			continue
		}
		if want != "" && ev.subscriber != want {
			l.wrong.Add(1)
		}
		l.events.Add(1)
		l.last.Store(at.UnixNano())
		if arrivals != nil {
			arrivals <- at
		}
	}
}

// openSubscriptions opens n sockets to the base URL, each with one subscription to
// subscriber subs[i % len(subs)], counted by listeners[i]. It returns how many opened.
func (b *eventsBench) openSubscriptions(ctx context.Context, set *socketSet, n int, subs []subscriberRef, arrivals chan<- time.Time) ([]*listener, int, error) {
	listeners := make([]*listener, n)
	var opened atomic.Int64
	var mu sync.Mutex
	var firstErr error
	forEach(n, b.c.dialers, func(i int) {
		if ctx.Err() != nil {
			return
		}
		conn, err := b.dial(ctx, b.c.baseURL, b.ws)
		var s *gqlclient.Subscription
		if err == nil {
			set.add(conn)
			s, err = subscribe(ctx, conn, eventsQuery, map[string]any{"s": subs[i%len(subs)].external}, 64)
		}
		if err != nil {
			mu.Lock()
			if firstErr == nil {
				firstErr = err
			}
			mu.Unlock()
			return
		}
		l := &listener{}
		listeners[i] = l
		go l.listen(s, subs[i%len(subs)].external, arrivals)
		if k := opened.Add(1); k%2000 == 0 {
			fmt.Fprintf(b.log, "%d subscriptions open\n", k)
		}
	})
	if firstErr != nil {
		fmt.Fprintf(b.log, "%d of %d subscriptions failed to open; the first: %v\n", int64(n)-opened.Load(), n, firstErr)
	}
	return listeners, int(opened.Load()), ctx.Err()
}

// idle measures the server and the database with no traffic, first without
// subscriptions and then with --idle-subscriptions, one socket each; then one message to
// each subscriber checks every subscription is live.
func (b *eventsBench) idle(ctx context.Context) ([]eventsRow, error) {
	const name = "idle"
	n := b.c.idleSubs
	if err := b.settleWindow(ctx); err != nil {
		return nil, err
	}
	q0, err := b.measureQuiet(ctx, b.c.idleWindow)
	if err != nil {
		return nil, err
	}
	sampler, err := startRSSSampler(b.c.serverPID, 100*time.Millisecond)
	if err != nil {
		return nil, err
	}
	defer sampler.Stop()
	set := &socketSet{}
	defer set.closeAll(200)
	subs := b.subscribers[:min(len(b.subscribers), 1000)]
	start := time.Now()
	arrivals := make(chan time.Time, 2*n)
	listeners, opened, err := b.openSubscriptions(ctx, set, n, subs, arrivals)
	if err != nil {
		return nil, err
	}
	openTime := time.Since(start)
	fmt.Fprintf(b.log, "%d subscriptions open in %s\n", opened, openTime.Round(100*time.Millisecond))
	if err := b.settleWindow(ctx); err != nil {
		return nil, err
	}
	q1, err := b.measureQuiet(ctx, b.c.idleWindow)
	if err != nil {
		return nil, err
	}
	peakMB := round2(float64(sampler.takePeak()) / 1024)
	runtime, err := b.goRuntime(ctx)
	if err != nil {
		fmt.Fprintf(b.log, "reading /metrics: %v\n", err)
	}

	// One message to every subscriber: each subscription gets exactly one event (the
	// counts start again here; settleWindow's message reached one subscriber).
	for _, l := range listeners {
		if l != nil {
			l.events.Store(0)
			l.wrong.Store(0)
		}
	}
	for len(arrivals) > 0 {
		<-arrivals
	}
	committed, err := b.insertRaw(ctx, newRawMessages(len(subs), subs, ""))
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(30 * time.Second)
	var got, complete, wrong int
	for {
		got, complete, wrong = 0, 0, 0
		for _, l := range listeners {
			if l == nil {
				continue
			}
			e := int(l.events.Load())
			got += e
			if e == 1 {
				complete++
			}
			wrong += int(l.wrong.Load())
		}
		if got >= opened || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond) // duplicates, if any, arrive now
	got = 0
	for _, l := range listeners {
		if l != nil {
			got += int(l.events.Load())
		}
	}
	var fanout latencies
	for len(arrivals) > 0 {
		fanout = append(fanout, (<-arrivals).Sub(committed))
	}
	f := summarize(fanout)

	// With the proxy, the base URL's server's own statements; without, the database
	// server's Questions (every client's).
	dbRate := func(q quietCosts) float64 { return q.questions }
	dbWhat := "Questions of the whole database server (both instances and any other client)"
	if b.c.proxyStats != "" {
		dbRate = func(q quietCosts) float64 { return q.statements }
		dbWhat = "statements of this instance, counted by the proxy"
	}
	growth := 0.0
	if dbRate(q0) > 0 {
		growth = round2(dbRate(q1) / dbRate(q0))
	}
	perSub := 0.0
	if opened > 0 {
		perSub = round2((q1.rssMB - q0.rssMB) * 1024 / float64(opened))
	}
	others := ""
	if q0.otherClients+q1.otherClients > 0 {
		others = fmt.Sprintf("; other databases' connections were busy (%d, %d) and are in the global counters", q0.otherClients, q1.otherClients)
	}
	dbNote := func(q quietCosts) string {
		return fmt.Sprintf("%.1f KB/s back; global: Questions %.1f/s, Com_select %.1f/s, index rows read %.0f/s; %d row(s) in the poll window",
			q.kbFromDB, q.questions, q.selects, q.readNext, q.windowRows)
	}
	window := fmt.Sprintf("%s each", b.c.idleWindow)
	return []eventsRow{
		{Scenario: name, Measure: "subscriptions open (one socket each)", Value: float64(opened), Expect: strconv.Itoa(n), OK: boolPtr(opened == n),
			Note: fmt.Sprintf("opened in %s, %d at a time", openTime.Round(100*time.Millisecond), b.c.dialers)},
		{Scenario: name, Measure: fmt.Sprintf("server RSS with %d subscriptions", opened), Value: q1.rssMB, Unit: "MB", Target: 300,
			Note: fmt.Sprintf("%.1f MB without; %.1f KB a subscription; peak while opening %.1f MB; %s", q0.rssMB, perSub, peakMB, runtime)},
		{Scenario: name, Measure: fmt.Sprintf("server CPU, no traffic, %d subscriptions", opened), Value: q1.cpu, Unit: "%", Target: 5,
			Note: fmt.Sprintf("%.2f%% without; %s, percent of one core", q0.cpu, window)},
		{Scenario: name, Measure: "database statements/s, no subscriptions", Value: dbRate(q0), Unit: "/s",
			Note: dbWhat + "; " + dbNote(q0) + others},
		{Scenario: name, Measure: fmt.Sprintf("database statements/s, %d subscriptions", opened), Value: dbRate(q1), Unit: "/s",
			Note: dbNote(q1)},
		{Scenario: name, Measure: "database statements, with / without subscriptions", Value: growth, Unit: "x",
			Expect: "no growth (< 1.25x)", OK: boolPtr(growth > 0 && growth < 1.25)},
		{Scenario: name, Measure: "one message to each subscriber: events received", Value: float64(got), Expect: strconv.Itoa(opened),
			OK: boolPtr(got == opened && complete == opened && wrong == 0),
			Note: fmt.Sprintf("%d messages in one INSERT; %d subscriptions got exactly one; %d for the wrong subscriber; after the commit: p50 %s, p99 %s, last %s",
				len(subs), complete, wrong, fmtEventValue(msOf(f.p50), "ms"), fmtEventValue(msOf(f.p99), "ms"), fmtEventValue(msOf(f.max), "ms"))},
	}, nil
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
	v := parseGauges(string(body), "go_goroutines", "go_memstats_stack_inuse_bytes", "go_memstats_heap_inuse_bytes")
	return fmt.Sprintf("%.0f goroutines, stacks %.0f MB, heap in use %.0f MB",
		v["go_goroutines"], v["go_memstats_stack_inuse_bytes"]/(1<<20), v["go_memstats_heap_inuse_bytes"]/(1<<20)), nil
}

// parseGauges reads the named unlabelled samples of a Prometheus text exposition.
func parseGauges(text string, names ...string) map[string]float64 {
	out := map[string]float64{}
	for _, line := range strings.Split(text, "\n") {
		name, value, ok := strings.Cut(line, " ")
		if !ok || !slices.Contains(names, name) {
			continue
		}
		if f, err := strconv.ParseFloat(strings.TrimSpace(value), 64); err == nil {
			out[name] = f
		}
	}
	return out
}
