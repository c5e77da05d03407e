// Package bench is the list and mark benchmark at the root of `loadtest`: named
// scenarios against a running server (REST and GraphQL pages, deep pages and cursors, the
// mark action), each beside its raw floor (the same page read with plain database/sql
// and encoded with encoding/json), and `loadtest median`, which combines repeated runs.
package bench

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
	"messages/cmd/loadtest/loopback"
)

// config is the benchmark's command line.
type config struct {
	baseURL          string
	apiKey           string
	databaseURL      string
	duration         time.Duration
	warmup           time.Duration
	requestTimeout   time.Duration
	setupTimeout     time.Duration
	concurrency      int
	maxRequests      int
	scenarios        []string
	jsonPath         string
	baselinePath     string
	serverPID        int
	pageSize         int
	deepPage         int
	cursorDepth      int
	farCursorDepth   int
	cursorStep       int
	floor            bool
	naive            bool
	naiveConcurrency int
	gzip             bool
	// settings is every flag's effective value and where it came from, printed at start.
	settings []cmdline.Setting
}

// Flags are the benchmark's flags, local to the command they are mounted on (the root of
// `loadtest`), so its subcommands do not take them; LOADTEST_API_KEY (read through
// getenv) stands in for --api-key.
func Flags(getenv func(string) string) []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "base-url", Local: true, Usage: "server to load; loopback only", Value: "http://127.0.0.1:8080"},
		&cli.StringFlag{Name: "api-key", Local: true, Usage: "API key of the environment to read (required)", Sources: cmdline.FromEnv("LOADTEST_API_KEY", getenv)},
		&cli.StringFlag{Name: "database-url", Local: true, Usage: "mysql://user:pass@127.0.0.1:3306/db of the server's database: enables the raw floor and finds the busiest inbox"},
		&cli.DurationFlag{Name: "duration", Local: true, Usage: "how long each scenario runs", Value: 10 * time.Second},
		&cli.DurationFlag{Name: "warmup", Local: true, Usage: "unmeasured run before each scenario (0: none)", Value: time.Second},
		&cli.DurationFlag{Name: "request-timeout", Local: true, Usage: "deadline of one request", Value: 30 * time.Second},
		&cli.DurationFlag{Name: "setup-timeout", Local: true, Usage: "deadline of the discovery before the first scenario", Value: 5 * time.Minute},
		&cli.IntFlag{Name: "concurrency", Local: true, Usage: "concurrent workers (clients) per scenario", Value: 8},
		&cli.IntFlag{Name: "max-requests", Local: true, Usage: "most requests one scenario sends, whatever the duration", Value: 200_000},
		&cli.StringFlag{Name: "scenarios", Local: true, Usage: "comma-separated scenarios (default: all): " + strings.Join(scenarioNames(), ", ")},
		&cli.StringFlag{Name: "json", Local: true, Usage: "also write the results as JSON to this file"},
		&cli.StringFlag{Name: "baseline", Local: true, Usage: "JSON results of an earlier run (--json) to show as the 'before' column"},
		&cli.IntFlag{Name: "server-pid", Local: true, Usage: "process id of the server on this machine: report its peak RSS"},
		&cli.IntFlag{Name: "page-size", Local: true, Usage: "page size of every list scenario", Value: 10},
		&cli.IntFlag{Name: "deep-page", Local: true, Usage: "page number of rest-deep-page (50,000 x 10 = 500,000 rows deep)", Value: 50_000},
		&cli.IntFlag{Name: "cursor-depth", Local: true, Usage: "depth of graphql-cursor-deep's cursor", Value: 5_000},
		&cli.IntFlag{Name: "far-cursor-depth", Local: true, Usage: "depth of graphql-cursor-far's cursor", Value: 500_000},
		&cli.IntFlag{Name: "cursor-step", Local: true, Usage: "page size of the walk that finds the deep cursors", Value: 1000},
		&cli.BoolFlag{Name: "floor", Local: true, Usage: "measure the raw floor when --database-url is given (on by default; --floor=false skips it)", Value: true},
		&cli.BoolFlag{Name: "naive", Local: true, Usage: "also measure naive floors (whole rows with OFFSET, COUNT(*) every time): slow"},
		&cli.IntFlag{Name: "naive-concurrency", Local: true, Usage: "workers of the naive floors", Value: 1},
		&cli.BoolFlag{Name: "gzip", Local: true, Usage: "ask for gzip responses (off, so the floor comparison excludes compression)"},
	}
}

// Action runs the benchmark with the Flags of the command it is mounted on: the
// effective configuration and the progress go to stderr, the table to stdout.
func Action(stdout, stderr io.Writer) cli.ActionFunc {
	return func(ctx context.Context, cmd *cli.Command) error {
		c, err := configFrom(cmd)
		if err != nil {
			return err
		}
		cmdline.PrintSettings(stderr, c.settings)
		return runBenchmark(ctx, c, stdout, stderr)
	}
}

// configFrom reads and checks the benchmark's flags.
func configFrom(cmd *cli.Command) (config, error) {
	if cmd.Args().Present() {
		return config{}, cmdline.Usage(fmt.Errorf("unexpected arguments: %v (see %s --help)", cmd.Args().Slice(), cmd.FullName()))
	}
	c := config{
		baseURL:          cmd.String("base-url"),
		apiKey:           cmd.String("api-key"),
		databaseURL:      cmd.String("database-url"),
		duration:         cmd.Duration("duration"),
		warmup:           cmd.Duration("warmup"),
		requestTimeout:   cmd.Duration("request-timeout"),
		setupTimeout:     cmd.Duration("setup-timeout"),
		concurrency:      cmd.Int("concurrency"),
		maxRequests:      cmd.Int("max-requests"),
		jsonPath:         cmd.String("json"),
		baselinePath:     cmd.String("baseline"),
		serverPID:        cmd.Int("server-pid"),
		pageSize:         cmd.Int("page-size"),
		deepPage:         cmd.Int("deep-page"),
		cursorDepth:      cmd.Int("cursor-depth"),
		farCursorDepth:   cmd.Int("far-cursor-depth"),
		cursorStep:       cmd.Int("cursor-step"),
		floor:            cmd.Bool("floor"),
		naive:            cmd.Bool("naive"),
		naiveConcurrency: cmd.Int("naive-concurrency"),
		gzip:             cmd.Bool("gzip"),
		settings:         cmdline.Settings(cmd),
	}
	if err := c.check(); err != nil {
		return c, cmdline.Usage(err)
	}
	var err error
	if c.scenarios, err = parseScenarios(cmd.String("scenarios")); err != nil {
		return c, cmdline.Usage(err)
	}
	return c, nil
}

// check refuses addresses off loopback and values out of range.
func (c config) check() error {
	if err := loopback.CheckURL(c.baseURL); err != nil {
		return fmt.Errorf("--base-url: %w", err)
	}
	if c.databaseURL != "" {
		if err := loopback.CheckDatabaseURL(c.databaseURL); err != nil {
			return fmt.Errorf("--database-url: %w", err)
		}
	}
	switch {
	case c.apiKey == "":
		return errors.New("--api-key (or LOADTEST_API_KEY) is required")
	case c.duration <= 0 || c.duration > time.Hour:
		return errors.New("--duration must be between 0 and 1h")
	case c.concurrency < 1 || c.concurrency > 1000 || c.naiveConcurrency < 1 || c.naiveConcurrency > 1000:
		return errors.New("--concurrency and --naive-concurrency must be from 1 to 1000")
	case c.maxRequests < 1 || c.maxRequests > 10_000_000:
		return errors.New("--max-requests must be from 1 to 10,000,000")
	case c.pageSize < 1 || c.pageSize > 1000:
		return errors.New("--page-size must be from 1 to 1000")
	case c.deepPage < 0:
		return errors.New("--deep-page must not be negative")
	case c.cursorDepth < 1 || c.farCursorDepth < 1 || c.cursorStep < 1 || c.cursorStep > 1000:
		return errors.New("cursor depths must be positive and --cursor-step from 1 to 1000")
	case c.warmup < 0 || c.requestTimeout <= 0 || c.setupTimeout <= 0:
		return errors.New("--warmup must not be negative, --request-timeout and --setup-timeout positive")
	}
	return nil
}

// parseScenarios reads --scenarios: known names, each once, in the order given; all of
// them when empty.
func parseScenarios(list string) ([]string, error) {
	if list == "" {
		return scenarioNames(), nil
	}
	var out []string
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		if !slices.Contains(scenarioNames(), name) {
			return nil, fmt.Errorf("unknown scenario %q; known: %s", name, strings.Join(scenarioNames(), ", "))
		}
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("--scenarios names no scenario")
	}
	return out, nil
}
