package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"messages/graph/gqlclient"
	"messages/models"
)

// latencyTarget is the bound on a latency scenario.
type latencyTarget struct{ p50, p99 time.Duration }

// writeFunc makes one change and says which message changed, when the write began and
// when it returned (the commit had happened by then).
type writeFunc func(ctx context.Context) (id string, started, committed time.Time, err error)

// changeWriter is one way of changing messages: setup prepares writer w, whose
// subscriber is sub, before its subscription opens; kind is the event kind a change makes.
type changeWriter struct {
	kind  string
	setup func(ctx context.Context, w int, sub subscriberRef) (writeFunc, error)
}

// latencySample is one change: from the write's return (and start) to its receipt.
type latencySample struct{ fromCommit, fromStart time.Duration }

// latencyRunResult is one run of a latency scenario.
type latencyRunResult struct {
	samples []latencySample
	lost    int // changes whose event did not come within --wait
	failed  int // writes that failed
	err     string
}

// latencyRuns runs a latency scenario --runs times and reports the median of the runs'
// p50 and p99, with the target ratios.
func (b *eventsBench) latencyRuns(ctx context.Context, name string, cw changeWriter, t latencyTarget) ([]eventsRow, error) {
	var p50s, p99s, maxes, startP50s, startP99s []float64
	n, lost, failed := 0, 0, 0
	firstErr := ""
	for run := 1; run <= b.c.runs; run++ {
		res, err := b.latencyRun(ctx, cw)
		if err != nil {
			return nil, err
		}
		commit := make(latencies, len(res.samples))
		start := make(latencies, len(res.samples))
		for i, s := range res.samples {
			commit[i], start[i] = s.fromCommit, s.fromStart
		}
		sc, ss := summarize(commit), summarize(start)
		fmt.Fprintf(b.log, "%s run %d: %d samples, p50 %s, p99 %s, max %s, lost %d, failed writes %d\n",
			name, run, sc.n, sc.p50, sc.p99, sc.max, res.lost, res.failed)
		if sc.n > 0 {
			p50s, p99s, maxes = append(p50s, ms(sc.p50)), append(p99s, ms(sc.p99)), append(maxes, ms(sc.max))
			startP50s, startP99s = append(startP50s, ms(ss.p50)), append(startP99s, ms(ss.p99))
		}
		n, lost, failed = n+sc.n, lost+res.lost, failed+res.failed
		if firstErr == "" {
			firstErr = res.err
		}
	}
	if len(p50s) == 0 {
		return nil, fmt.Errorf("no event arrived (lost %d, failed writes %d): %s", lost, failed, firstErr)
	}
	runs := fmt.Sprintf("%d samples in %d runs, %d writers", n, b.c.runs, b.c.writers)
	rows := []eventsRow{
		{Scenario: name, Measure: "p50 commit to client", Value: median(p50s), Unit: "ms", Target: msOf(t.p50),
			Note: runs + "; p50 of each run " + joinMS(p50s)},
		{Scenario: name, Measure: "p99 commit to client", Value: median(p99s), Unit: "ms", Target: msOf(t.p99),
			Note: "p99 of each run " + joinMS(p99s) + "; max " + joinMS(maxes)},
	}
	if cw.kind == "created" && name == "import" {
		rows = append(rows, eventsRow{Scenario: name, Measure: "p50 / p99 from the command's start", Value: median(startP50s), Unit: "ms",
			Note: fmt.Sprintf("p99 %s: includes starting the process and opening the database", fmtEventValue(median(startP99s), "ms"))})
	}
	ok := lost == 0 && failed == 0
	note := ""
	if !ok {
		note = clipText(firstErr, 120)
	}
	rows = append(rows, eventsRow{Scenario: name, Measure: "changes lost / writes failed", Value: float64(lost + failed),
		Expect: "0", OK: boolPtr(ok), Note: strings.TrimSpace(fmt.Sprintf("%d lost, %d failed %s", lost, failed, note))})
	return rows, nil
}

// joinMS renders values as "a / b / c ms".
func joinMS(v []float64) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = fmtEventValue(x, "ms")
	}
	return strings.Join(parts, " / ")
}

// arrival is an event and when it was read off the subscription.
type arrival struct {
	ev receivedEvent
	at time.Time
}

// latencyRun is one run: --writers writers, each with its own subscriber and socket to
// the base URL, make --samples changes between them, one at a time each, a random pause
// of up to --gap between, and wait for each change's event.
func (b *eventsBench) latencyRun(ctx context.Context, cw changeWriter) (latencyRunResult, error) {
	type writer struct {
		write writeFunc
		conn  *gqlclient.Conn
		in    chan arrival
	}
	writers := make([]*writer, b.c.writers)
	defer func() {
		for _, w := range writers {
			if w != nil && w.conn != nil {
				_ = w.conn.Close()
			}
		}
	}()
	for i := range writers {
		sub := b.subscribers[i]
		write, err := cw.setup(ctx, i, sub)
		if err != nil {
			return latencyRunResult{}, fmt.Errorf("setup: %w", err)
		}
		conn, err := b.dial(ctx, b.c.baseURL, b.ws)
		if err != nil {
			return latencyRunResult{}, fmt.Errorf("dial: %w", err)
		}
		w := &writer{write: write, conn: conn, in: make(chan arrival, 4096)}
		writers[i] = w
		s, err := subscribe(ctx, conn, eventsQuery, map[string]any{"s": sub.external}, 1024)
		if err != nil {
			return latencyRunResult{}, fmt.Errorf("subscribe: %w", err)
		}
		go func() {
			defer close(w.in)
			for r := range s.Results() {
				at := time.Now()
				ev, err := decodeEvent(r)
				if err != nil {
					continue
				}
				w.in <- arrival{ev: ev, at: at}
			}
		}()
	}
	var mu sync.Mutex
	var res latencyRunResult
	var wg sync.WaitGroup
	for i, w := range writers {
		share := b.c.samples / len(writers)
		if i < b.c.samples%len(writers) {
			share++
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range share {
				if b.c.gap > 0 {
					time.Sleep(rand.N(b.c.gap))
				}
				if ctx.Err() != nil {
					return
				}
				id, started, committed, err := w.write(ctx)
				if err != nil {
					mu.Lock()
					res.failed++
					if res.err == "" {
						res.err = err.Error()
					}
					tooMany := res.failed > 10
					mu.Unlock()
					if tooMany {
						return
					}
					continue
				}
				at, ok := awaitEvent(w.in, id, cw.kind, b.c.wait)
				mu.Lock()
				if ok {
					res.samples = append(res.samples, latencySample{fromCommit: at.Sub(committed), fromStart: at.Sub(started)})
				} else {
					res.lost++
					if res.err == "" {
						res.err = fmt.Sprintf("no %s event for %s within %s", cw.kind, id, b.c.wait)
					}
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return res, ctx.Err()
}

// awaitEvent reads in until the event of kind for message id, and returns when it was
// received; events of other messages are skipped. False when none comes within timeout
// or the stream ends.
func awaitEvent(in <-chan arrival, id, kind string, timeout time.Duration) (time.Time, bool) {
	t := time.NewTimer(timeout)
	defer t.Stop()
	for {
		select {
		case a, ok := <-in:
			if !ok {
				return time.Time{}, false
			}
			if a.ev.id == id && a.ev.kind == kind {
				return a.at, true
			}
		case <-t.C:
			return time.Time{}, false
		}
	}
}

// markMutation marks a message's primary action.
const markMutation = `mutation($s: String!, $m: ID!, $st: MessageActionStatus!) {
  markMessageAction(subscriberId: $s, messageId: $m, type: primary, status: $st) { _id }
}`

// markWriter marks, through base, four messages of the writer's subscriber in turn
// (inserted with plain SQL first, each with a primary button), done and pending
// alternately, so every mark changes its row.
func (b *eventsBench) markWriter(base string) changeWriter {
	return changeWriter{kind: "updated", setup: func(ctx context.Context, _ int, sub subscriberRef) (writeFunc, error) {
		rows := newRawMessages(4, []subscriberRef{sub}, "")
		if _, err := b.insertRaw(ctx, rows); err != nil {
			return nil, err
		}
		done := map[string]bool{}
		i := 0
		return func(ctx context.Context) (string, time.Time, time.Time, error) {
			id := rows[i%len(rows)].id
			i++
			status := "done"
			if done[id] {
				status = "pending"
			}
			started := time.Now()
			err := b.postGraphQL(ctx, base, markMutation, map[string]any{"s": sub.external, "m": id, "st": status})
			committed := time.Now()
			if err == nil {
				done[id] = !done[id]
			}
			return id, started, committed, err
		}, nil
	}}
}

// rawWriter inserts one message a change with plain SQL, committed on its own.
func (b *eventsBench) rawWriter() changeWriter {
	return changeWriter{kind: "created", setup: func(_ context.Context, _ int, sub subscriberRef) (writeFunc, error) {
		return func(ctx context.Context) (string, time.Time, time.Time, error) {
			rows := newRawMessages(1, []subscriberRef{sub}, "")
			started := time.Now()
			committed, err := b.insertRaw(ctx, rows)
			return rows[0].id, started, committed, err
		}, nil
	}}
}

// importWriter runs `server import` on a file of one message for the writer's
// subscriber: a copy of one of its messages (as the REST API lists it, the import
// format) with a new id, creation time and transaction id.
func (b *eventsBench) importWriter() changeWriter {
	return changeWriter{kind: "created", setup: func(ctx context.Context, w int, sub subscriberRef) (writeFunc, error) {
		var page struct {
			Data []map[string]any `json:"data"`
		}
		if err := b.getJSON(ctx, b.c.baseURL+"/v1/messages?limit=1&subscriberId="+sub.external, &page); err != nil {
			return nil, err
		}
		if len(page.Data) == 0 {
			return nil, fmt.Errorf("subscriber %s has no message to copy", sub.external)
		}
		record := page.Data[0]
		if record["status"] == "" || record["status"] == nil {
			record["status"] = "sent" // rows inserted with plain SQL have none; import wants one
		}
		dir, err := os.MkdirTemp("", "loadtest-events-import-")
		if err != nil {
			return nil, err
		}
		path := filepath.Join(dir, fmt.Sprintf("writer-%d.jsonl", w))
		return func(ctx context.Context) (string, time.Time, time.Time, error) {
			defer os.Remove(path)
			now := time.Now()
			id := models.NewID(now)
			record["_id"] = id
			record["createdAt"] = now.UTC().Format("2006-01-02T15:04:05.000Z")
			record["transactionId"] = "events-bench-import-" + id
			line, err := json.Marshal(record)
			if err != nil {
				return "", time.Time{}, time.Time{}, err
			}
			if err := os.WriteFile(path, append(line, '\n'), 0o600); err != nil {
				return "", time.Time{}, time.Time{}, err
			}
			cmd := exec.CommandContext(ctx, b.c.serverBin, "--database-url", b.c.databaseURL, "import", "--file", path)
			started := time.Now()
			out, err := cmd.CombinedOutput()
			committed := time.Now()
			if err != nil {
				err = errors.New("import: " + err.Error() + ": " + clipText(string(out), 200))
			}
			return id, started, committed, err
		}, nil
	}}
}
