// Package hostile is the hostile-client benchmark (`loadtest hostile`): the attacks of
// docs/reliability.md ("Every door") against a running server process, with what each
// costs the server in resident memory (sampled from /proc every 20 ms) and CPU, and what
// a one-socket flood does to another tenant's latency. .ci/bench-hostile builds, seeds
// and starts everything it needs.
package hostile

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v3"

	"messages/cmd/loadtest/cmdline"
	"messages/cmd/loadtest/loopback"
	"messages/cmd/loadtest/measure"
)

// hostileConfig is what `loadtest hostile` runs against.
type hostileConfig struct {
	baseURL              string
	apiKey, otherKey     string
	largeKey             string
	serverPID            int
	quiet, floodFor      time.Duration
	floodWorkers         int
	persisted, documents int
	// memory and flood say which parts run: the attacks on memory and CPU (against a
	// server whose rate limit lets them through, the worst case), the flood (against one
	// with its default limits).
	memory, flood bool
}

// Command is `loadtest hostile`.
func Command(getenv func(string) string, stdout, stderr io.Writer) *cli.Command {
	return &cli.Command{
		Name:  "hostile",
		Usage: "attack a running server as a hostile client would and report its memory, CPU and another tenant's latency",
		Description: `Attacks, one after the other: persisted queries of 1 MB with their hashes; distinct documents of
20 KB; ten aliases of a 1,000-message page over large payloads (--large-key's tenant);
32 KiB documents built to make the validator work (8,000 repeated fields, 9,000 unknown
fields); 300 unauthenticated stream requests whose body never comes; and one WebSocket
flooding queries while another tenant lists (--other-key), first quiet, then during the
flood. For each: the server's RSS before, at its peak and after, and its CPU.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "base-url", Usage: "server to attack; loopback only", Value: "http://127.0.0.1:8080"},
			&cli.StringFlag{Name: "api-key", Usage: "API key of the attacking tenant (required)", Sources: cmdline.FromEnv("LOADTEST_API_KEY", getenv)},
			&cli.StringFlag{Name: "other-key", Usage: "API key of another tenant, whose latency is measured (required)"},
			&cli.StringFlag{Name: "large-key", Usage: "API key of a tenant whose messages hold large payloads (required)"},
			&cli.IntFlag{Name: "server-pid", Usage: "process id of the server on this machine (required)"},
			&cli.DurationFlag{Name: "quiet", Usage: "how long the other tenant is measured alone", Value: 10 * time.Second},
			&cli.DurationFlag{Name: "flood", Usage: "how long the socket floods", Value: 20 * time.Second},
			&cli.IntFlag{Name: "flood-workers", Usage: "operations the flooding socket keeps in flight", Value: 8},
			&cli.IntFlag{Name: "persisted", Usage: "1 MB persisted queries sent", Value: 200},
			&cli.IntFlag{Name: "documents", Usage: "distinct documents sent", Value: 400},
			&cli.StringFlag{Name: "parts", Usage: "comma-separated parts to run: memory (the attacks on memory and CPU), flood", Value: "memory,flood"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			c, err := hostileConfigFrom(cmd)
			if err != nil {
				return err
			}
			cmdline.PrintSettings(stderr, cmdline.Settings(cmd))
			return runHostile(ctx, c, stdout, stderr)
		},
	}
}

// hostileConfigFrom reads and checks the flags of `loadtest hostile`.
func hostileConfigFrom(cmd *cli.Command) (hostileConfig, error) {
	c := hostileConfig{baseURL: cmd.String("base-url"), apiKey: cmd.String("api-key"), otherKey: cmd.String("other-key"),
		largeKey: cmd.String("large-key"), serverPID: cmd.Int("server-pid"), quiet: cmd.Duration("quiet"), floodFor: cmd.Duration("flood"),
		floodWorkers: cmd.Int("flood-workers"), persisted: cmd.Int("persisted"), documents: cmd.Int("documents")}
	for _, part := range strings.Split(cmd.String("parts"), ",") {
		switch strings.TrimSpace(part) {
		case "memory":
			c.memory = true
		case "flood":
			c.flood = true
		default:
			return c, cmdline.Usage(fmt.Errorf("--parts: unknown part %q (memory, flood)", part))
		}
	}
	switch {
	case cmd.Args().Present():
		return c, cmdline.Usage(fmt.Errorf("unexpected arguments: %v", cmd.Args().Slice()))
	case c.apiKey == "" || c.otherKey == "" || c.serverPID <= 0 || (c.memory && c.largeKey == ""):
		return c, cmdline.Usage(errors.New("--api-key, --other-key, --server-pid and (for memory) --large-key are required"))
	case c.floodWorkers < 1:
		return c, cmdline.Usage(errors.New("--flood-workers must be at least 1"))
	}
	if err := loopback.CheckURL(c.baseURL); err != nil {
		return c, cmdline.Usage(err)
	}
	return c, nil
}

// attackRow is one attack's line of the report.
type attackRow struct {
	name                         string
	requests                     int
	answers                      string // what the server answered, counted
	rssBefore, rssPeak, rssAfter int64  // kB
	cpuPerRequest, cpuMS         float64
	notes                        string
	startTicks                   int64

	mu       sync.Mutex
	answered map[string]int
}

// count records one answer.
func (r *attackRow) count(answer string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.answered[answer]++
}

// hostileRun is one run of the benchmark.
type hostileRun struct {
	c       hostileConfig
	client  *http.Client
	sampler *measure.RSSSampler
	log     io.Writer
}

// runHostile runs the chosen parts against the server and prints the report.
func runHostile(ctx context.Context, c hostileConfig, stdout, log io.Writer) error {
	sampler, err := measure.StartRSSSampler(c.serverPID, 20*time.Millisecond)
	if err != nil {
		return err
	}
	defer func() { _, _ = sampler.Stop() }()
	h := &hostileRun{c: c, sampler: sampler, log: log,
		client: &http.Client{Timeout: 2 * time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: 16}}}
	var rows []*attackRow
	type attack struct {
		name string
		run  func(ctx context.Context, r *attackRow) error
	}
	var attacks []attack
	if c.memory {
		attacks = []attack{
			{"persisted queries of 1 MB with their hashes", h.persistedQueries},
			{"distinct documents of 5 KB, 170 KB of syntax tree each", h.distinctDocuments},
			{"ten aliases of messages(limit: 1000) over 900 KB payloads", h.aliasesOverLargePayloads},
			{"32 KiB documents of 8,000 repeated fields", h.hostileDocuments(repeatedFields)},
			{"32 KiB documents of 9,000 unknown fields", h.hostileDocuments(unknownFieldsDocument)},
			{"unauthenticated stream requests whose body never comes", h.slowBodies},
		}
	}
	for _, attack := range attacks {
		fmt.Fprintf(log, "--- %s\n", attack.name)
		r := &attackRow{name: attack.name, answered: map[string]int{}}
		if err := h.begin(r); err != nil {
			return err
		}
		if err := attack.run(ctx, r); err != nil {
			return fmt.Errorf("%s: %w", attack.name, err)
		}
		if err := h.end(r); err != nil {
			return err
		}
		rows = append(rows, r)
	}
	var flood *floodResult
	if c.flood {
		fmt.Fprintln(log, "--- one socket flooding while another tenant lists")
		f, err := h.socketFlood(ctx)
		if err != nil {
			return fmt.Errorf("socket flood: %w", err)
		}
		flood = &f
	}
	printHostile(stdout, rows, flood)
	return nil
}

// begin notes the server's RSS and CPU before an attack, after a pause that lets the
// previous one's garbage be collected.
func (h *hostileRun) begin(r *attackRow) error {
	time.Sleep(2 * time.Second)
	m, err := measure.ReadMemoryStatus(h.c.serverPID)
	if err != nil {
		return err
	}
	ticks, err := measure.ReadCPUTicks(h.c.serverPID)
	if err != nil {
		return err
	}
	h.sampler.TakePeak()
	r.rssBefore, r.startTicks = m.RSSKB, ticks
	return nil
}

// end notes the peak during the attack, the RSS a few seconds after, and the CPU used.
func (h *hostileRun) end(r *attackRow) error {
	ticks, err := measure.ReadCPUTicks(h.c.serverPID)
	if err != nil {
		return err
	}
	r.rssPeak = h.sampler.TakePeak()
	r.cpuMS = float64(ticks-r.startTicks) * 1000 / measure.ClockTicks
	if r.requests > 0 {
		r.cpuPerRequest = r.cpuMS / float64(r.requests)
	}
	time.Sleep(3 * time.Second)
	m, err := measure.ReadMemoryStatus(h.c.serverPID)
	if err != nil {
		return err
	}
	r.rssAfter = m.RSSKB
	var parts []string
	for answer, n := range r.answered {
		parts = append(parts, fmt.Sprintf("%d %s", n, answer))
	}
	slices.Sort(parts)
	r.answers = strings.Join(parts, ", ")
	return nil
}

// post sends a GraphQL request as key and reports the answer as "status CODE" (the first
// error's extensions.code, or "data").
func (h *hostileRun) post(ctx context.Context, key string, body any) (string, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.c.baseURL+"/graphql", bytes.NewReader(b))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "ApiKey "+key)
	res, err := h.client.Do(req)
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	var out struct {
		Errors []struct {
			Extensions struct{ Code string }
		}
	}
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		return "", err
	}
	_ = json.Unmarshal(raw, &out)
	what := "data"
	if len(out.Errors) > 0 {
		what = out.Errors[0].Extensions.Code
	}
	return fmt.Sprintf("%d %s", res.StatusCode, what), nil
}

// concurrently runs n calls of do on workers goroutines, counting each answer in r.
func concurrently(ctx context.Context, r *attackRow, n, workers int, do func(ctx context.Context, i int) (string, error)) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n || ctx.Err() != nil {
					return
				}
				answer, err := do(ctx, i)
				if err != nil {
					errs <- err
					return
				}
				r.count(answer)
			}
		}()
	}
	wg.Wait()
	close(errs)
	r.requests = n
	return <-errs
}

// printHostile writes one line an attack, then what the flood did.
func printHostile(w io.Writer, rows []*attackRow, f *floodResult) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "attack\trequests\tanswered\tRSS before\tpeak\tafter\tserver CPU\tper request\tnotes")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%.0f MB\t%.0f MB\t%.0f MB\t%.0f ms\t%.2f ms\t%s\n", r.name, r.requests, r.answers,
			float64(r.rssBefore)/1024, float64(r.rssPeak)/1024, float64(r.rssAfter)/1024, r.cpuMS, r.cpuPerRequest, r.notes)
	}
	if len(rows) > 0 {
		_ = tw.Flush()
		fmt.Fprintln(w)
	}
	if f == nil {
		return
	}
	fmt.Fprintf(w, "one socket flooding for %.0f s: %d queries ran (%.1f/s), %d refused RATE_LIMITED, %d other; sockets opened %d, closed or refused %d\n",
		f.seconds, f.ran, float64(f.ran)/f.seconds, f.refused, f.other, f.redials, f.closed)
	fmt.Fprintf(w, "another tenant's GET /v1/messages?limit=10: quiet p50 %.2f ms p99 %.2f ms (%d, %d failed); during the flood p50 %.2f ms p99 %.2f ms (%d, %d failed); p99 ratio %.2f\n",
		measure.MS(f.quiet.P50), measure.MS(f.quiet.P99), f.quiet.N, f.quietErrs, measure.MS(f.during.P50), measure.MS(f.during.P99), f.during.N, f.floodErrs,
		float64(f.during.P99)/float64(max(f.quiet.P99, 1)))
}
