// Package events is the live events benchmark (`loadtest events`): how long a change
// takes from its commit to a messageEvents subscriber, what idle subscriptions cost the
// server, whether a burst reaches everyone, and what a consumer that stops reading
// costs. It writes the changes itself (marks through a second instance, plain SQL
// inserts, `server import`), so commit and receipt are read off one clock.
package events

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v3"

	"messages/cmd/loadtest/cmdline"
	"messages/cmd/loadtest/events/dbproxy"
	"messages/cmd/loadtest/loopback"
	"messages/cmd/loadtest/report"
)

// eventScenarioNames are the scenarios of `loadtest events`, in the order they run: the
// slow consumer before the sockets of burst and idle, whose memory the Go runtime keeps
// a while after they close, so its RSS starts from the server's usual size.
var eventScenarioNames = []string{
	"mark-other-instance", "mark-same-instance", "raw-insert", "import", "slow-consumer", "burst", "idle",
}

// eventsConfig is the command line of `loadtest events`.
type eventsConfig struct {
	baseURL     string // the instance the subscribers connect to
	writerURL   string // the instance marks go through (the other instance)
	apiKey      string
	databaseURL string
	serverBin   string // `server` binary, for import
	serverPID   int    // the base URL's server process, for RSS and CPU
	scenarios   []string
	runs        int           // repetitions of each latency scenario
	samples     int           // changes per latency scenario run
	writers     int           // concurrent writers, each with its own subscriber and socket
	gap         time.Duration // longest random pause between one writer's changes
	idleSubs    int
	idleWindow  time.Duration
	dialers     int // sockets opened at once
	burstSubs   int
	burstPer    int // messages per subscriber in the burst
	slowRows    int // changes written for the subscription that stops reading
	wait        time.Duration
	jsonPath    string
	// proxyStats is the counting proxy's address (`loadtest events proxy`) when the base
	// URL's server reaches the database through one.
	proxyStats string
}

// Command is `loadtest events`, with `loadtest events proxy` beneath it.
func Command(getenv func(string) string, stdout, stderr io.Writer) *cli.Command {
	return &cli.Command{
		Name:  "events",
		Usage: "measure live messageEvents: commit-to-client latency, idle subscriptions, bursts, slow consumers",
		Description: `Subscribers connect to --base-url over graphql-transport-ws. Marks go through --writer-url
(another instance on the same database); raw inserts use --database-url; imports run
--server-bin import. Latency is the receipt time at the subscriber minus the time the
write returned, both read in this process. Scenarios: ` + strings.Join(eventScenarioNames, ", "),
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "base-url", Usage: "instance the subscriptions connect to; loopback only", Value: "http://127.0.0.1:8080"},
			&cli.StringFlag{Name: "writer-url", Usage: "instance marks go through (default: --base-url)"},
			&cli.StringFlag{Name: "api-key", Usage: "API key of the environment (required)", Sources: cmdline.FromEnv("LOADTEST_API_KEY", getenv)},
			&cli.StringFlag{Name: "database-url", Usage: "mysql://user@127.0.0.1:3306/db of the servers' database (required)"},
			&cli.StringFlag{Name: "server-bin", Usage: "the server binary, to run `import` (the import scenario is skipped without it)"},
			&cli.IntFlag{Name: "server-pid", Usage: "process id of --base-url's server: its RSS and CPU (required by idle and slow-consumer)"},
			&cli.StringFlag{Name: "scenarios", Usage: "comma-separated scenarios (default: all): " + strings.Join(eventScenarioNames, ", ")},
			&cli.IntFlag{Name: "runs", Usage: "runs of each latency scenario; the table shows the median", Value: 3},
			&cli.IntFlag{Name: "samples", Usage: "changes per latency scenario run", Value: 100},
			&cli.IntFlag{Name: "writers", Usage: "concurrent writers in the latency scenarios, each with its own subscriber and socket", Value: 4},
			&cli.DurationFlag{Name: "gap", Usage: "each writer pauses a random time up to this between changes, so writes fall anywhere in the poll interval", Value: 100 * time.Millisecond},
			&cli.IntFlag{Name: "idle-subscriptions", Usage: "idle subscriptions, one socket each", Value: 10_000},
			&cli.DurationFlag{Name: "idle-window", Usage: "how long idle CPU and database queries are measured, with and without the subscriptions", Value: 30 * time.Second},
			&cli.IntFlag{Name: "dialers", Usage: "sockets opened at once", Value: 50},
			&cli.IntFlag{Name: "burst-subscribers", Usage: "subscribers of the burst, one subscription and socket each", Value: 1000},
			&cli.IntFlag{Name: "burst-per-subscriber", Usage: "messages per subscriber in the burst", Value: 10},
			&cli.IntFlag{Name: "slow-messages", Usage: "changes written for the subscription that stops reading (about 4 KB each: more than the loopback socket buffers hold)", Value: 12000},
			&cli.DurationFlag{Name: "wait", Usage: "longest wait for one event", Value: 10 * time.Second},
			&cli.StringFlag{Name: "db-proxy-stats", Usage: "http://127.0.0.1:PORT/ of the counting proxy (loadtest events proxy) between --base-url's server and the database: its own queries, apart from other clients'"},
			&cli.StringFlag{Name: "json", Usage: "also write the results as JSON to this file"},
		},
		Commands: []*cli.Command{dbproxy.Command()},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			c, err := eventsConfigFrom(cmd)
			if err != nil {
				return err
			}
			cmdline.PrintSettings(stderr, cmdline.Settings(cmd))
			return runEvents(ctx, c, stdout, stderr)
		},
	}
}

// eventsConfigFrom reads and checks the flags of `loadtest events`.
func eventsConfigFrom(cmd *cli.Command) (eventsConfig, error) {
	if cmd.Args().Present() {
		return eventsConfig{}, cmdline.Usage(fmt.Errorf("unexpected arguments: %v", cmd.Args().Slice()))
	}
	c := eventsConfig{
		baseURL: cmd.String("base-url"), writerURL: cmd.String("writer-url"), apiKey: cmd.String("api-key"),
		databaseURL: cmd.String("database-url"), serverBin: cmd.String("server-bin"), serverPID: cmd.Int("server-pid"),
		runs: cmd.Int("runs"), samples: cmd.Int("samples"), writers: cmd.Int("writers"), gap: cmd.Duration("gap"),
		idleSubs: cmd.Int("idle-subscriptions"), idleWindow: cmd.Duration("idle-window"), dialers: cmd.Int("dialers"),
		burstSubs: cmd.Int("burst-subscribers"), burstPer: cmd.Int("burst-per-subscriber"),
		slowRows: cmd.Int("slow-messages"), wait: cmd.Duration("wait"), jsonPath: cmd.String("json"),
		proxyStats: cmd.String("db-proxy-stats"),
	}
	if c.writerURL == "" {
		c.writerURL = c.baseURL
	}
	var err error
	if c.scenarios, err = parseEventScenarios(cmd.String("scenarios")); err != nil {
		return c, cmdline.Usage(err)
	}
	if err := c.check(); err != nil {
		return c, cmdline.Usage(err)
	}
	return c, nil
}

func (c eventsConfig) check() error {
	for _, u := range []string{c.baseURL, c.writerURL} {
		if err := loopback.CheckURL(u); err != nil {
			return fmt.Errorf("--base-url/--writer-url: %w", err)
		}
	}
	if c.proxyStats != "" {
		if err := loopback.CheckURL(c.proxyStats); err != nil {
			return fmt.Errorf("--db-proxy-stats: %w", err)
		}
	}
	if c.databaseURL == "" {
		return errors.New("--database-url is required: the scenarios write with plain SQL and read the database's counters")
	}
	if err := loopback.CheckDatabaseURL(c.databaseURL); err != nil {
		return fmt.Errorf("--database-url: %w", err)
	}
	switch {
	case c.apiKey == "":
		return errors.New("--api-key (or LOADTEST_API_KEY) is required")
	case c.runs < 1 || c.runs > 20:
		return errors.New("--runs must be from 1 to 20")
	case c.samples < 1 || c.samples > 100_000 || c.writers < 1 || c.writers > 100:
		return errors.New("--samples must be from 1 to 100,000 and --writers from 1 to 100")
	case c.idleSubs < 0 || c.idleSubs > 50_000:
		return errors.New("--idle-subscriptions must be from 0 to 50,000")
	case c.burstSubs < 1 || c.burstSubs > 10_000 || c.burstPer < 1 || c.burstPer*c.burstSubs > 1_000_000:
		return errors.New("--burst-subscribers must be from 1 to 10,000 and the burst at most 1,000,000 messages")
	case c.dialers < 1 || c.dialers > 1000:
		return errors.New("--dialers must be from 1 to 1000")
	case c.gap < 0 || c.wait <= 0 || c.idleWindow <= 0 || c.slowRows < 1:
		return errors.New("--gap must not be negative; --wait, --idle-window and --slow-messages must be positive")
	}
	needPID := slices.Contains(c.scenarios, "idle") || slices.Contains(c.scenarios, "slow-consumer")
	if needPID && c.serverPID <= 0 {
		return errors.New("--server-pid (the process behind --base-url) is required by idle and slow-consumer")
	}
	return nil
}

// parseEventScenarios reads --scenarios of `loadtest events`: known names, run in the
// order of eventScenarioNames whatever the order given.
func parseEventScenarios(list string) ([]string, error) {
	if strings.TrimSpace(list) == "" {
		return slices.Clone(eventScenarioNames), nil
	}
	want := map[string]bool{}
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		if !slices.Contains(eventScenarioNames, name) {
			return nil, fmt.Errorf("unknown scenario %q; known: %s", name, strings.Join(eventScenarioNames, ", "))
		}
		want[name] = true
	}
	var out []string
	for _, name := range eventScenarioNames {
		if want[name] {
			out = append(out, name)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("--scenarios names no scenario")
	}
	return out, nil
}

// lookback is the servers' EVENTS_LOOKBACK, which the benchmark assumes is the default.
func (c eventsConfig) lookback() time.Duration { return 2 * time.Second }

// runEvents runs the chosen scenarios and prints the table (and JSON when asked). A
// scenario that fails is reported as not measured and the others still run.
func runEvents(ctx context.Context, c eventsConfig, stdout, log io.Writer) error {
	b, err := newEventsBench(ctx, c, log)
	if err != nil {
		return err
	}
	defer b.close()
	rep := &eventsReport{StartedAt: time.Now().UTC(), BaseURL: c.baseURL, WriterURL: c.writerURL}
	for _, name := range c.scenarios {
		if ctx.Err() != nil {
			break
		}
		fmt.Fprintf(log, "--- %s\n", name)
		start := time.Now()
		rows, err := b.run(ctx, name)
		rep.Rows = append(rep.Rows, rows...)
		if err != nil {
			fmt.Fprintf(log, "%s: %v\n", name, err)
			rep.Rows = append(rep.Rows, eventsRow{Scenario: name, Measure: "not measured", Note: report.Clip(err.Error(), 200)})
		}
		fmt.Fprintf(log, "--- %s done in %s\n", name, time.Since(start).Round(100*time.Millisecond))
	}
	rep.writeTable(stdout)
	if c.jsonPath != "" {
		return report.WriteJSON(c.jsonPath, rep)
	}
	return ctx.Err()
}

func (b *eventsBench) run(ctx context.Context, name string) ([]eventsRow, error) {
	switch name {
	case "mark-other-instance":
		return b.latencyRuns(ctx, name, b.markWriter(b.c.writerURL), latencyTarget{p50: 200 * time.Millisecond, p99: time.Second})
	case "mark-same-instance":
		return b.latencyRuns(ctx, name, b.markWriter(b.c.baseURL), latencyTarget{p50: 200 * time.Millisecond, p99: time.Second})
	case "raw-insert":
		return b.latencyRuns(ctx, name, b.rawWriter(), latencyTarget{p50: time.Second, p99: 2 * time.Second})
	case "import":
		if b.c.serverBin == "" {
			return nil, errors.New("no --server-bin: import not measured")
		}
		return b.latencyRuns(ctx, name, b.importWriter(), latencyTarget{p50: time.Second, p99: 2 * time.Second})
	case "idle":
		return b.idle(ctx)
	case "burst":
		return b.burst(ctx)
	case "slow-consumer":
		return b.slowConsumer(ctx)
	}
	return nil, fmt.Errorf("unknown scenario %q", name)
}
