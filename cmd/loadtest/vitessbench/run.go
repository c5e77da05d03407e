package vitessbench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"time"

	"messages/cmd/loadtest/api"
	"messages/cmd/loadtest/loopback"
	"messages/cmd/loadtest/measure"
	"messages/cmd/loadtest/report"
)

// connections are the connection counts of every measurement: the latency of one
// request alone, and the throughput of a few at once.
var connections = []int{1, 4}

// sample is one measurement of one shape on one side.
type sample struct {
	Shape       string  `json:"shape"`
	Side        string  `json:"side"`
	Connections int     `json:"connections"`
	Round       int     `json:"round"`
	Requests    int     `json:"requests"`
	Errors      int     `json:"errors"`
	FirstError  string  `json:"firstError,omitempty"`
	PerSecond   float64 `json:"requestsPerSecond"`
	P50         float64 `json:"p50Ms"`
	P95         float64 `json:"p95Ms"`
	// Statements is the server's db_statements_total per request (its /metrics).
	Statements float64 `json:"statementsPerRequest"`
	// CPUMS is the CPU milliseconds per request of the deployment's processes (the
	// Vitess side with --vitess-pids only; -1 otherwise).
	CPUMS float64 `json:"deploymentCpuMsPerRequest"`
}

// run prepares both sides, counts each shape's statements per shard, measures, and
// writes the report.
func run(ctx context.Context, c config, stdout, log io.Writer) error {
	client := loopback.NewHTTPClient(slices.Max(connections), c.requestTimeout, false)
	sides := []*side{{name: "direct", url: c.directURL}, {name: "vitess", url: c.vitessURL}}
	for _, s := range sides {
		for _, e := range c.envs {
			key := e.directKey
			if s.name == "vitess" {
				key = e.vitessKey
			}
			s.envs = append(s.envs, &sideEnv{env: e, server: api.Server{BaseURL: s.url, APIKey: key}})
		}
	}
	fmt.Fprintf(log, "finding the cursors %d rows deep, the sessions and the targets on both sides\n", c.depth)
	if err := prepare(ctx, client, sides, c); err != nil {
		return err
	}
	rep := &vitessReport{StartedAt: time.Now().UTC(), Messages: c.messages, Depth: c.depth, PageSize: c.pageSize,
		Rounds: c.rounds, Duration: c.duration.String(), Warmup: c.warmup.String()}
	for _, e := range c.envs {
		rep.Environments = append(rep.Environments, e.ID)
	}
	var err error
	if rep.Shards, err = countShards(ctx, client, sides[1], c, log); err != nil {
		return err
	}
	for _, conns := range connections {
		for round := 1; round <= c.rounds; round++ {
			for _, name := range c.shapes {
				order := slices.Clone(sides)
				if round%2 == 0 {
					slices.Reverse(order)
				}
				for _, s := range order {
					m, err := measureSide(ctx, client, s, c, sample{Shape: name, Side: s.name, Connections: conns, Round: round})
					if err != nil {
						return err
					}
					rep.Samples = append(rep.Samples, m)
					fmt.Fprintf(log, "%d conn, round %d: %-10s %-6s p50 %s, %.1f req/s, %d errors, SQL %.2f/req, deployment CPU %.2f ms/req\n",
						conns, round, name, s.name, report.MS(m.P50), m.PerSecond, m.Errors, m.Statements, m.CPUMS)
				}
			}
		}
	}
	rep.Rows = rows(c.shapes, rep.Samples, rep.Shards)
	rep.writeTable(stdout)
	if c.jsonPath != "" {
		if err := report.WriteJSON(c.jsonPath, rep); err != nil {
			return err
		}
	}
	for _, r := range rep.Rows {
		if r.Errors > 0 {
			return fmt.Errorf("%s: %d requests failed", r.Shape, r.Errors)
		}
	}
	return nil
}

// operation is the shape's i-th request, on the environments in turn.
func operation(client *http.Client, s *side, sh shape, pageSize int) measure.Operation {
	return func(ctx context.Context, i int64) error {
		e := s.envs[int(i%int64(len(s.envs)))]
		req, err := sh.build(ctx, e, pageSize, i/int64(len(s.envs)))
		if err != nil {
			return err
		}
		_, err = api.Send(client, req, sh.want, sh.graphql)
		return err
	}
}

// measureSide measures one shape on one side at one connection count, as at names them,
// after a warmup, with the server's statement counter read around it.
func measureSide(ctx context.Context, client *http.Client, s *side, c config, at sample) (sample, error) {
	op := operation(client, s, shapeByName(at.Shape), c.pageSize)
	limits := measure.Limits{Concurrency: at.Connections, Duration: c.duration, MaxRequests: c.maxRequests, RequestTimeout: c.requestTimeout}
	if c.warmup > 0 {
		warm := limits
		warm.Duration = c.warmup
		measure.Run(ctx, op, warm)
	}
	pids := c.vitessPIDs
	if s.name != "vitess" {
		pids = nil
	}
	ticksBefore, err := cpuTicks(pids)
	if err != nil {
		return at, err
	}
	before, err := statements(ctx, client, s.url)
	if err != nil {
		return at, err
	}
	m := measure.Run(ctx, op, limits)
	if ctx.Err() != nil {
		return at, ctx.Err()
	}
	after, err := statements(ctx, client, s.url)
	if err != nil {
		return at, err
	}
	ticksAfter, err := cpuTicks(pids)
	if err != nil {
		return at, err
	}
	at.CPUMS = -1
	if m.Requests > 0 {
		at.Statements = measure.Round2((after - before) / float64(m.Requests))
		if len(pids) > 0 {
			at.CPUMS = measure.Round2(float64(ticksAfter-ticksBefore) * 1000 / measure.ClockTicks / float64(m.Requests))
		}
	}
	at.Requests, at.Errors, at.FirstError = m.Requests, m.Errors, m.FirstError
	at.PerSecond, at.P50, at.P95 = measure.Round2(m.PerSecond()), measure.MS(m.Latencies.P50), measure.MS(m.Latencies.P95)
	return at, nil
}

// cpuTicks sums the CPU time the processes pids have used so far.
func cpuTicks(pids []int) (int64, error) {
	var total int64
	for _, pid := range pids {
		t, err := measure.ReadCPUTicks(pid)
		if err != nil {
			return 0, fmt.Errorf("the CPU time of process %d: %w", pid, err)
		}
		total += t
	}
	return total, nil
}

// statements reads the server's db_statements_total.
func statements(ctx context.Context, client *http.Client, serverURL string) (float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, serverURL+"/metrics", nil)
	if err != nil {
		return 0, err
	}
	body, err := api.Send(client, req, http.StatusOK, false)
	if err != nil {
		return 0, fmt.Errorf("the server's statements: %w", err)
	}
	v, ok := measure.ParseGauges(string(body), "db_statements_total")["db_statements_total"]
	if !ok {
		return 0, fmt.Errorf("GET %s/metrics: no db_statements_total", serverURL)
	}
	return v, nil
}
