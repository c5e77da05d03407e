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
//	go run ./cmd/loadtest walk --api-key KEY [--limit 100] [--max-pages 20000] [--timeout 10m]
//	    [--server-pid PID] [--json walk.json]
//
// It refuses any address that is not loopback. Exit codes: 0 success, 1 failure, 2 bad usage.
package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"messages/cmd/loadtest/cmdline"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}

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

// parseFlags reads the benchmark's command line; LOADTEST_API_KEY stands in for --api-key.
func parseFlags(args []string, getenv func(string) string, stderr io.Writer) (config, error) {
	var c config
	err := command(getenv, io.Discard, stderr, func(_ context.Context, got config) error {
		c = got
		return nil
	}).Run(context.Background(), append([]string{"loadtest"}, args...))
	return c, err
}

// run executes the command line and returns the exit code.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	return cmdline.Run(ctx, command(getenv, stdout, stderr, func(ctx context.Context, c config) error {
		cmdline.PrintSettings(stderr, c.settings)
		return runBenchmark(ctx, c, stdout, stderr)
	}), args, stderr)
}

// runBenchmark runs the scenarios and writes the report as a table and, when asked, JSON.
func runBenchmark(ctx context.Context, c config, stdout, log io.Writer) error {
	rep, err := benchmark(ctx, c, log)
	if err != nil {
		return err
	}
	if c.baselinePath != "" {
		if err := rep.applyBaseline(c.baselinePath); err != nil {
			return err
		}
	}
	rep.writeTable(stdout)
	if c.jsonPath != "" {
		return rep.writeJSONFile(c.jsonPath)
	}
	return nil
}
