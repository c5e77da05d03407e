package events

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"messages/cmd/loadtest/measure"
	"messages/cmd/loadtest/report"
	"messages/graph/gqlclient"
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
		commit := make(measure.Latencies, len(res.samples))
		start := make(measure.Latencies, len(res.samples))
		for i, s := range res.samples {
			commit[i], start[i] = s.fromCommit, s.fromStart
		}
		sc, ss := measure.Summarize(commit), measure.Summarize(start)
		fmt.Fprintf(b.log, "%s run %d: %d samples, p50 %s, p99 %s, max %s, lost %d, failed writes %d\n",
			name, run, sc.N, sc.P50, sc.P99, sc.Max, res.lost, res.failed)
		if sc.N > 0 {
			p50s, p99s, maxes = append(p50s, measure.MS(sc.P50)), append(p99s, measure.MS(sc.P99)), append(maxes, measure.MS(sc.Max))
			startP50s, startP99s = append(startP50s, measure.MS(ss.P50)), append(startP99s, measure.MS(ss.P99))
		}
		n, lost, failed = n+sc.N, lost+res.lost, failed+res.failed
		if firstErr == "" {
			firstErr = res.err
		}
	}
	if len(p50s) == 0 {
		return nil, fmt.Errorf("no event arrived (lost %d, failed writes %d): %s", lost, failed, firstErr)
	}
	runs := fmt.Sprintf("%d samples in %d runs, %d writers", n, b.c.runs, b.c.writers)
	rows := []eventsRow{
		{Scenario: name, Measure: "p50 commit to client", Value: measure.Median(p50s), Unit: "ms", Target: measure.MS(t.p50),
			Note: runs + "; p50 of each run " + joinMS(p50s)},
		{Scenario: name, Measure: "p99 commit to client", Value: measure.Median(p99s), Unit: "ms", Target: measure.MS(t.p99),
			Note: "p99 of each run " + joinMS(p99s) + "; max " + joinMS(maxes)},
	}
	if cw.kind == "created" && name == "import" {
		rows = append(rows, eventsRow{Scenario: name, Measure: "p50 / p99 from the command's start", Value: measure.Median(startP50s), Unit: "ms",
			Note: fmt.Sprintf("p99 %s: includes starting the process and opening the database", fmtEventValue(measure.Median(startP99s), "ms"))})
	}
	ok := lost == 0 && failed == 0
	note := ""
	if !ok {
		note = report.Clip(firstErr, 120)
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

// latencyWriter is one writer of a latency run: how it changes a message, its own
// socket, and the events its subscription receives.
type latencyWriter struct {
	write writeFunc
	conn  *gqlclient.Conn
	in    chan arrival
}

// latencyTally collects the samples of a run's writers.
type latencyTally struct {
	mu  sync.Mutex
	res latencyRunResult
}

// latencyRun is one run: --writers writers, each with its own subscriber and socket to
// the base URL, make --samples changes between them, one at a time each, a random pause
// of up to --gap between, and wait for each change's event.
func (b *eventsBench) latencyRun(ctx context.Context, cw changeWriter) (latencyRunResult, error) {
	writers := make([]*latencyWriter, b.c.writers)
	defer func() {
		for _, w := range writers {
			if w != nil && w.conn != nil {
				_ = w.conn.Close()
			}
		}
	}()
	for i := range writers {
		w, err := b.openWriter(ctx, cw, i)
		writers[i] = w
		if err != nil {
			return latencyRunResult{}, err
		}
	}
	tally := &latencyTally{}
	var wg sync.WaitGroup
	for i, w := range writers {
		share := b.c.samples / len(writers)
		if i < b.c.samples%len(writers) {
			share++
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			b.writeAndAwait(ctx, w, share, cw.kind, tally)
		}()
	}
	wg.Wait()
	return tally.res, ctx.Err()
}

// openWriter prepares writer i of cw for subscriber i and subscribes to that subscriber
// on a socket of its own. The writer comes back with its socket, to close, even when
// subscribing failed.
func (b *eventsBench) openWriter(ctx context.Context, cw changeWriter, i int) (*latencyWriter, error) {
	sub := b.subscribers[i]
	write, err := cw.setup(ctx, i, sub)
	if err != nil {
		return nil, fmt.Errorf("setup: %w", err)
	}
	conn, err := b.dial(ctx, b.c.baseURL, b.ws)
	if err != nil {
		return nil, fmt.Errorf("dial: %w", err)
	}
	w := &latencyWriter{write: write, conn: conn, in: make(chan arrival, 4096)}
	s, err := subscribe(ctx, conn, eventsQuery, map[string]any{"s": sub.external}, 1024)
	if err != nil {
		return w, fmt.Errorf("subscribe: %w", err)
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
	return w, nil
}

// writeAndAwait makes w's share of the changes, each after a random pause, waits for
// each change's event of kind and adds the sample to tally. It gives up after ten failed
// writes.
func (b *eventsBench) writeAndAwait(ctx context.Context, w *latencyWriter, share int, kind string, tally *latencyTally) {
	for range share {
		if b.c.gap > 0 {
			time.Sleep(rand.N(b.c.gap))
		}
		if ctx.Err() != nil {
			return
		}
		id, started, committed, err := w.write(ctx)
		if err != nil {
			tally.mu.Lock()
			tally.res.failed++
			if tally.res.err == "" {
				tally.res.err = err.Error()
			}
			tooMany := tally.res.failed > 10
			tally.mu.Unlock()
			if tooMany {
				return
			}
			continue
		}
		at, ok := awaitEvent(w.in, id, kind, b.c.wait)
		tally.mu.Lock()
		if ok {
			tally.res.samples = append(tally.res.samples, latencySample{fromCommit: at.Sub(committed), fromStart: at.Sub(started)})
		} else {
			tally.res.lost++
			if tally.res.err == "" {
				tally.res.err = fmt.Sprintf("no %s event for %s within %s", kind, id, b.c.wait)
			}
		}
		tally.mu.Unlock()
	}
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
