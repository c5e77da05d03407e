package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v3"

	"messages/cmd/loadtest/cmdline"
	"messages/graph/gqlclient"
)

// The hostile-client benchmark: the attacks of docs/reliability.md ("Every door") against
// a running server process, with what each costs the server in resident memory (sampled
// from /proc every 20 ms) and CPU, and what a one-socket flood does to another tenant's
// latency. .ci/bench-hostile builds, seeds and starts everything it needs.

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

func hostileCommand(getenv func(string) string, stdout, stderr io.Writer) *cli.Command {
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
					return cmdline.Usage(fmt.Errorf("--parts: unknown part %q (memory, flood)", part))
				}
			}
			switch {
			case cmd.Args().Present():
				return cmdline.Usage(fmt.Errorf("unexpected arguments: %v", cmd.Args().Slice()))
			case c.apiKey == "" || c.otherKey == "" || c.serverPID <= 0 || (c.memory && c.largeKey == ""):
				return cmdline.Usage(errors.New("--api-key, --other-key, --server-pid and (for memory) --large-key are required"))
			case c.floodWorkers < 1:
				return cmdline.Usage(errors.New("--flood-workers must be at least 1"))
			}
			if err := checkLoopback(c.baseURL); err != nil {
				return cmdline.Usage(err)
			}
			cmdline.PrintSettings(stderr, cmdline.Settings(cmd))
			return runHostile(ctx, c, stdout, stderr)
		},
	}
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
	sampler *rssSampler
	log     io.Writer
}

func runHostile(ctx context.Context, c hostileConfig, stdout, log io.Writer) error {
	sampler, err := startRSSSampler(c.serverPID, 20*time.Millisecond)
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
	m, err := readMemoryStatus(h.c.serverPID)
	if err != nil {
		return err
	}
	ticks, err := readCPUTicks(h.c.serverPID)
	if err != nil {
		return err
	}
	h.sampler.takePeak()
	r.rssBefore, r.startTicks = m.rssKB, ticks
	return nil
}

// end notes the peak during the attack, the RSS a few seconds after, and the CPU used.
func (h *hostileRun) end(r *attackRow) error {
	ticks, err := readCPUTicks(h.c.serverPID)
	if err != nil {
		return err
	}
	r.rssPeak = h.sampler.takePeak()
	r.cpuMS = float64(ticks-r.startTicks) * 1000 / clockTicks
	if r.requests > 0 {
		r.cpuPerRequest = r.cpuMS / float64(r.requests)
	}
	time.Sleep(3 * time.Second)
	m, err := readMemoryStatus(h.c.serverPID)
	if err != nil {
		return err
	}
	r.rssAfter = m.rssKB
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

func (h *hostileRun) persistedQueries(ctx context.Context, r *attackRow) error {
	return concurrently(ctx, r, h.c.persisted, 4, func(ctx context.Context, i int) (string, error) {
		query := fmt.Sprintf("# %d\n{ messages { totalCount } }", i) + strings.Repeat(" ", 1_000_000)
		sum := sha256.Sum256([]byte(query))
		return h.post(ctx, h.c.apiKey, map[string]any{"query": query,
			"extensions": map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": hex.EncodeToString(sum[:])}}})
	})
}

func (h *hostileRun) distinctDocuments(ctx context.Context, r *attackRow) error {
	return concurrently(ctx, r, h.c.documents, 4, func(ctx context.Context, i int) (string, error) {
		// The densest document within the limits: each is parsed, validated and cached.
		query := fmt.Sprintf("query Q%d { messages(limit: 1) { data { %s} } } fragment F on Message { _id }", i, strings.Repeat("...F ", 985))
		return h.post(ctx, h.c.apiKey, map[string]any{"query": query})
	})
}

func (h *hostileRun) aliasesOverLargePayloads(ctx context.Context, r *attackRow) error {
	var q strings.Builder
	q.WriteString("{")
	for i := range 10 {
		fmt.Fprintf(&q, " a%d: messages(limit: 1000) { data { _id payload content { content } } }", i)
	}
	q.WriteString(" }")
	return concurrently(ctx, r, 40, 4, func(ctx context.Context, _ int) (string, error) {
		return h.post(ctx, h.c.largeKey, map[string]any{"query": q.String()})
	})
}

// repeatedFields is gqlparser's quadratic case: one field repeated in one selection set.
// Each document is distinct, so no cache answers for it.
func repeatedFields(i int) string {
	return fmt.Sprintf("query Q%d { messages { data {", i) + strings.Repeat(" _id", 7_990) + " } } }"
}

// unknownFieldsDocument names thousands of fields no type has.
func unknownFieldsDocument(i int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "query Q%d {", i)
	for j := 0; b.Len() < 32_000; j++ {
		fmt.Fprintf(&b, " f%d", j)
	}
	return b.String()[:32_000] + " }"
}

func (h *hostileRun) hostileDocuments(document func(i int) string) func(ctx context.Context, r *attackRow) error {
	return func(ctx context.Context, r *attackRow) error {
		return concurrently(ctx, r, 100, 4, func(ctx context.Context, i int) (string, error) {
			return h.post(ctx, h.c.apiKey, map[string]any{"query": document(i)})
		})
	}
}

// slowBodies opens 300 connections that each send a stream request's headers without a
// credential and never its body, and counts how each was answered and when.
func (h *hostileRun) slowBodies(ctx context.Context, r *attackRow) error {
	u, err := url.Parse(h.c.baseURL)
	if err != nil {
		return err
	}
	var held atomic.Int64
	err = concurrently(ctx, r, 300, 300, func(ctx context.Context, _ int) (string, error) {
		conn, err := net.Dial("tcp", u.Host)
		if err != nil {
			return "dial failed", nil
		}
		defer conn.Close()
		start := time.Now()
		fmt.Fprintf(conn, "POST /graphql HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: text/event-stream\r\nContent-Length: 100\r\n\r\n", u.Host)
		_ = conn.SetReadDeadline(time.Now().Add(60 * time.Second))
		line, err := bufio.NewReader(conn).ReadString('\n')
		if time.Since(start) > 5*time.Second {
			held.Add(1)
		}
		if err != nil {
			return "no answer", nil
		}
		return strings.TrimPrefix(strings.TrimSpace(line), "HTTP/1.1 "), nil
	})
	r.notes = fmt.Sprintf("%d held past 5 s", held.Load())
	return err
}

// floodResult is what the one-socket flood did.
type floodResult struct {
	ran, refused, other  int64
	closed, redials      int64
	seconds              float64
	quiet, during        summary
	quietErrs, floodErrs int
}

// socketFlood measures the other tenant's latency alone, then while one socket of the
// attacking tenant runs queries as fast as the server answers them.
func (h *hostileRun) socketFlood(ctx context.Context) (floodResult, error) {
	var res floodResult
	measure := func(ctx context.Context) (latencies, int) {
		var l latencies
		errs := 0
		for ctx.Err() == nil {
			start := time.Now()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, h.c.baseURL+"/v1/messages?limit=10", nil)
			req.Header.Set("Authorization", "ApiKey "+h.c.otherKey)
			r, err := h.client.Do(req)
			if err != nil {
				if ctx.Err() == nil {
					errs++
				}
				continue
			}
			_, _ = io.Copy(io.Discard, r.Body)
			r.Body.Close()
			if r.StatusCode != http.StatusOK {
				errs++
				continue
			}
			l = append(l, time.Since(start))
			time.Sleep(50 * time.Millisecond) // about 15 requests a second: within its rate limit
		}
		return l, errs
	}
	quietCtx, cancel := context.WithTimeout(ctx, h.c.quiet)
	quiet, quietErrs := measure(quietCtx)
	cancel()
	res.quiet, res.quietErrs = summarize(quiet), quietErrs

	// The attacker keeps one socket open, sending queries from flood-workers loops as
	// fast as they are answered, and opens a new one whenever the server closes it.
	wsURL := "ws" + strings.TrimPrefix(h.c.baseURL, "http") + "/graphql"
	floodCtx, cancelFlood := context.WithTimeout(ctx, h.c.floodFor)
	defer cancelFlood()
	var wg sync.WaitGroup
	start := time.Now()
	wg.Add(1)
	go func() {
		defer wg.Done()
		for floodCtx.Err() == nil {
			atomic.AddInt64(&res.redials, 1)
			conn, err := gqlclient.Dial(floodCtx, wsURL, nil, map[string]any{"Authorization": "ApiKey " + h.c.apiKey})
			if err != nil {
				atomic.AddInt64(&res.closed, 1)
				continue
			}
			var workers sync.WaitGroup
			for range h.c.floodWorkers {
				workers.Add(1)
				go func() {
					defer workers.Done()
					for floodCtx.Err() == nil {
						s, err := conn.Subscribe(floodCtx, gqlclient.Request{Query: `{ messages(limit: 10) { totalCount data { _id } } }`}, 2)
						if err != nil {
							return
						}
						ok := false
						for r := range s.Results() {
							ok = len(r.Errors) == 0
						}
						var refused *gqlclient.OperationError
						var closed *gqlclient.CloseError
						switch {
						case ok:
							atomic.AddInt64(&res.ran, 1)
						case errors.As(s.Err(), &refused) && len(refused.Errors) > 0 && refused.Errors[0].Code() == "RATE_LIMITED":
							atomic.AddInt64(&res.refused, 1)
						case errors.As(s.Err(), &closed):
							return
						default:
							atomic.AddInt64(&res.other, 1)
						}
					}
				}()
			}
			workers.Wait()
			_ = conn.Close()
			atomic.AddInt64(&res.closed, 1)
		}
	}()
	during, floodErrs := measure(floodCtx)
	wg.Wait()
	res.seconds = time.Since(start).Seconds()
	res.during, res.floodErrs = summarize(during), floodErrs
	return res, nil
}

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
		ms(f.quiet.p50), ms(f.quiet.p99), f.quiet.n, f.quietErrs, ms(f.during.p50), ms(f.during.p99), f.during.n, f.floodErrs,
		float64(f.during.p99)/float64(max(f.quiet.p99, 1)))
}
