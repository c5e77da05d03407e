package idle

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"time"

	"messages/cmd/loadtest/measure"
	"messages/cmd/loadtest/report"
)

// run measures every socket count on every side and writes the report.
func run(ctx context.Context, c config, stdout, log io.Writer) error {
	most, err := raiseFileLimit(slices.Max(c.counts))
	if err != nil {
		return err
	}
	if most < slices.Max(c.counts) {
		fmt.Fprintf(log, "the file limit allows at most %d sockets a process here (its hard limit could not be raised); larger counts are not measured\n", most)
	}
	dir, err := os.MkdirTemp("", "loadtest-idle-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	clients := sourceClients(c.sources)
	rep := &idleReport{StartedAt: time.Now().UTC(), Ping: c.ping.String(), Settle: c.settle.String(), Window: c.window.String()}
	for _, n := range c.counts {
		for _, side := range c.sides {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			fmt.Fprintf(log, "--- %s, %d sockets\n", side, n)
			if n > most {
				rep.Rows = append(rep.Rows, idleRow{Side: side, Sockets: n,
					Note: fmt.Sprintf("the file limit allows %d sockets a process here; raise its hard limit (ulimit -Hn, or run as root with CAP_SYS_RESOURCE)", most)})
				continue
			}
			row, err := measureSide(ctx, c, side, n, dir, clients, log)
			if err != nil {
				fmt.Fprintf(log, "%s, %d sockets: %v\n", side, n, err)
				row.Note = report.Clip(err.Error(), 300)
			}
			fmt.Fprintf(log, "%s\n", row.summary())
			rep.Rows = append(rep.Rows, row)
		}
	}
	rep.writeTable(stdout)
	if c.jsonPath != "" {
		return report.WriteJSON(c.jsonPath, rep)
	}
	return nil
}

// measureSide starts side's server, measures it without sockets over --settle, opens n
// sockets, waits --settle, measures its CPU over --window and its memory at the end,
// then closes the sockets and stops it.
func measureSide(ctx context.Context, c config, side string, n int, dir string, clients []*http.Client, log io.Writer) (idleRow, error) {
	row := idleRow{Side: side, Sockets: n}
	p, err := start(ctx, c, side, dir)
	if err != nil {
		return row, err
	}
	defer p.stop()
	before, err := p.idleFor(ctx, c.settle)
	if err != nil {
		return row, err
	}
	row.RSSBeforeMB, row.CPUBefore, row.GoroutinesBefore = before.rssMB, before.cpu, before.goroutines
	started := time.Now()
	open := openSocket
	if side == sideServerSSE {
		open = openStream
	}
	sockets, openErr := openSockets(ctx, p.base, c.apiKey, n, c.dialers, clients, open, log)
	row.Opened, row.OpenSeconds = len(sockets), measure.Round2(time.Since(started).Seconds())
	defer func() {
		closeSockets(sockets, 500)
		fmt.Fprintf(log, "  %d sockets closed\n", len(sockets))
	}()
	if openErr != nil {
		fmt.Fprintf(log, "  %v\n", openErr)
	}
	fmt.Fprintf(log, "  %d sockets open in %.1fs\n", len(sockets), row.OpenSeconds)
	if err := sleep(ctx, c.settle); err != nil {
		return row, err
	}
	after, err := p.idleFor(ctx, c.window)
	if err != nil {
		return row, err
	}
	row.RSSMB, row.CPU, row.Goroutines, row.Threads = after.rssMB, after.cpu, after.goroutines, after.threads
	row.OpenAtEnd, row.Received = countOpen(sockets)
	if len(sockets) > 0 {
		row.KBPerSocket = measure.Round2((after.rssMB - before.rssMB) * 1024 / float64(len(sockets)))
		if side != sideReference {
			row.GoroutinesPerSocket = measure.Round2(float64(after.goroutines-before.goroutines) / float64(len(sockets)))
		}
	}
	if openErr != nil {
		row.Note = report.Clip(openErr.Error(), 300)
	}
	return row, nil
}

// idleReading is a server's costs over a window of no traffic, and its memory at the end.
type idleReading struct {
	rssMB      float64
	cpu        float64 // percent of one core over the window
	goroutines int     // this server's, from /metrics; 0 for the reference
	threads    int
}

// idleFor measures the process's CPU over window, then reads its memory.
func (p *process) idleFor(ctx context.Context, window time.Duration) (idleReading, error) {
	var r idleReading
	t0, err := measure.ReadCPUTicks(p.pid())
	if err != nil {
		return r, err
	}
	start := time.Now()
	if err := sleep(ctx, window); err != nil {
		return r, err
	}
	t1, err := measure.ReadCPUTicks(p.pid())
	if err != nil || !p.alive() {
		return r, fmt.Errorf("%w:\n%s", errExited, p.logTail())
	}
	r.cpu = measure.CPUPercent(t1-t0, time.Since(start))
	mem, err := measure.ReadMemoryStatus(p.pid())
	if err != nil {
		return r, err
	}
	r.rssMB = measure.Round2(float64(mem.RSSKB) / 1024)
	if r.threads, err = measure.ReadThreads(p.pid()); err != nil {
		return r, err
	}
	if p.side != sideReference {
		if r.goroutines, err = goroutines(ctx, p.base); err != nil {
			return r, fmt.Errorf("reading /metrics: %w", err)
		}
	}
	return r, nil
}

// goroutines reads go_goroutines from the server's /metrics.
func goroutines(ctx context.Context, base string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/metrics", nil)
	if err != nil {
		return 0, err
	}
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return 0, err
	}
	v, ok := measure.ParseGauges(string(body), "go_goroutines")["go_goroutines"]
	if !ok {
		return 0, fmt.Errorf("/metrics has no go_goroutines (status %d)", resp.StatusCode)
	}
	return int(v), nil
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
