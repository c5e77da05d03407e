// Command loadtest runs named scenarios against a running message server on loopback,
// each for a fixed time and concurrency, and reports requests/s, latency percentiles and
// errors, as a table and as JSON. Given the server's database, it also measures the raw
// floor: the same pages read with plain database/sql and encoded with encoding/json, no
// HTTP, no GraphQL, no GORM, so every figure comes with its ratio to that floor.
//
//	go run ./cmd/loadtest --api-key KEY [--base-url http://127.0.0.1:8080] [--duration 10s]
//	    [--concurrency 8] [--scenarios a,b] [--json out.json] [--database-url mysql://...]
//	    [--server-pid PID] [--baseline before.json]
//	go run ./cmd/loadtest median [--json out.json] [--baseline before.json] run1.json run2.json ...
//
// It refuses any address that is not loopback. Exit codes: 0 success, 1 failure, 2 bad usage.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}

// config is the command line.
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
}

// usageError marks a mistake in the command line (exit code 2).
type usageError struct{ error }

// parseFlags reads the command line; LOADTEST_API_KEY stands in for --api-key.
func parseFlags(args []string, getenv func(string) string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("loadtest", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var scenarios string
	fs.StringVar(&c.baseURL, "base-url", "http://127.0.0.1:8080", "server to load; loopback only (127.0.0.0/8, ::1, localhost)")
	fs.StringVar(&c.apiKey, "api-key", getenv("LOADTEST_API_KEY"), "API key of the environment to read (default $LOADTEST_API_KEY)")
	fs.StringVar(&c.databaseURL, "database-url", "", "mysql://user:pass@127.0.0.1:3306/db of the server's database: enables the raw floor and finds the busiest inbox")
	fs.DurationVar(&c.duration, "duration", 10*time.Second, "how long each scenario runs")
	fs.DurationVar(&c.warmup, "warmup", time.Second, "unmeasured run before each scenario (0: none)")
	fs.DurationVar(&c.requestTimeout, "request-timeout", 30*time.Second, "deadline of one request")
	fs.DurationVar(&c.setupTimeout, "setup-timeout", 5*time.Minute, "deadline of the discovery before the first scenario")
	fs.IntVar(&c.concurrency, "concurrency", 8, "concurrent workers (clients) per scenario")
	fs.IntVar(&c.maxRequests, "max-requests", 200_000, "most requests one scenario sends, whatever the duration")
	fs.StringVar(&scenarios, "scenarios", "", "comma-separated scenarios (default: all): "+strings.Join(scenarioNames(), ", "))
	fs.StringVar(&c.jsonPath, "json", "", "also write the results as JSON to this file")
	fs.StringVar(&c.baselinePath, "baseline", "", "JSON results of an earlier run (--json) to show as the 'before' column")
	fs.IntVar(&c.serverPID, "server-pid", 0, "process id of the server on this machine: report its peak RSS")
	fs.IntVar(&c.pageSize, "page-size", 10, "page size of every list scenario")
	fs.IntVar(&c.deepPage, "deep-page", 50_000, "page number of rest-deep-page (50,000 x 10 = 500,000 rows deep)")
	fs.IntVar(&c.cursorDepth, "cursor-depth", 5_000, "depth of graphql-cursor-deep's cursor")
	fs.IntVar(&c.farCursorDepth, "far-cursor-depth", 500_000, "depth of graphql-cursor-far's cursor")
	fs.IntVar(&c.cursorStep, "cursor-step", 1000, "page size of the walk that finds the deep cursors")
	fs.BoolVar(&c.floor, "floor", true, "measure the raw floor when --database-url is given")
	fs.BoolVar(&c.naive, "naive", false, "also measure naive floors (whole rows with OFFSET, COUNT(*) every time): slow")
	fs.IntVar(&c.naiveConcurrency, "naive-concurrency", 1, "workers of the naive floors")
	fs.BoolVar(&c.gzip, "gzip", false, "ask for gzip responses (default off, so the floor comparison excludes compression)")
	if err := fs.Parse(args); err != nil {
		return c, usageError{err}
	}
	if fs.NArg() > 0 {
		return c, usageError{fmt.Errorf("unexpected arguments: %v", fs.Args())}
	}
	if err := checkLoopback(c.baseURL); err != nil {
		return c, usageError{fmt.Errorf("--base-url: %w", err)}
	}
	if c.databaseURL != "" {
		if err := checkLoopbackDatabase(c.databaseURL); err != nil {
			return c, usageError{fmt.Errorf("--database-url: %w", err)}
		}
	}
	if c.apiKey == "" {
		return c, usageError{errors.New("--api-key (or LOADTEST_API_KEY) is required")}
	}
	switch {
	case c.duration <= 0 || c.duration > time.Hour:
		return c, usageError{errors.New("--duration must be between 0 and 1h")}
	case c.concurrency < 1 || c.concurrency > 1000 || c.naiveConcurrency < 1 || c.naiveConcurrency > 1000:
		return c, usageError{errors.New("--concurrency and --naive-concurrency must be from 1 to 1000")}
	case c.maxRequests < 1 || c.maxRequests > 10_000_000:
		return c, usageError{errors.New("--max-requests must be from 1 to 10,000,000")}
	case c.pageSize < 1 || c.pageSize > 1000:
		return c, usageError{errors.New("--page-size must be from 1 to 1000")}
	case c.deepPage < 0:
		return c, usageError{errors.New("--deep-page must not be negative")}
	case c.cursorDepth < 1 || c.farCursorDepth < 1 || c.cursorStep < 1 || c.cursorStep > 1000:
		return c, usageError{errors.New("cursor depths must be positive and --cursor-step from 1 to 1000")}
	case c.warmup < 0 || c.requestTimeout <= 0 || c.setupTimeout <= 0:
		return c, usageError{errors.New("--warmup must not be negative, --request-timeout and --setup-timeout positive")}
	}
	c.scenarios = scenarioNames()
	if scenarios != "" {
		c.scenarios = nil
		for _, name := range strings.Split(scenarios, ",") {
			name = strings.TrimSpace(name)
			if name == "" {
				continue
			}
			if !slices.Contains(scenarioNames(), name) {
				return c, usageError{fmt.Errorf("unknown scenario %q; known: %s", name, strings.Join(scenarioNames(), ", "))}
			}
			if !slices.Contains(c.scenarios, name) {
				c.scenarios = append(c.scenarios, name)
			}
		}
		if len(c.scenarios) == 0 {
			return c, usageError{errors.New("--scenarios names no scenario")}
		}
	}
	return c, nil
}

// run executes the command line and returns the exit code.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "median" {
		return runMedian(args[1:], stdout, stderr)
	}
	c, err := parseFlags(args, getenv, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintln(stderr, "error:", err)
		return 2
	}
	rep, err := benchmark(ctx, c, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "error:", err)
		return 1
	}
	if c.baselinePath != "" {
		if err := rep.applyBaseline(c.baselinePath); err != nil {
			fmt.Fprintln(stderr, "error:", err)
			return 1
		}
	}
	rep.writeTable(stdout)
	if c.jsonPath != "" {
		if err := rep.writeJSONFile(c.jsonPath); err != nil {
			fmt.Fprintln(stderr, "error:", err)
			return 1
		}
	}
	return 0
}
