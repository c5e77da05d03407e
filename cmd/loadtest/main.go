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
// Its other benchmarks are `loadtest events` (live updates), `loadtest peer` (against
// PostGraphile), `loadtest hostile` (hostile clients), `loadtest idle` (idle
// subscriptions beside graphql-ws's reference server) and `loadtest counts` (what live
// counts and multi-filter count requests cost the database) and `loadtest vitess` (the
// request paths on MariaDB directly and through Vitess); each lives in its own package
// beneath this one, and main only mounts their commands.
//
// It refuses any address that is not loopback. Exit codes: 0 success, 1 failure, 2 bad usage.
package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/urfave/cli/v3"

	"messages/cmd/loadtest/bench"
	"messages/cmd/loadtest/cmdline"
	"messages/cmd/loadtest/counts"
	"messages/cmd/loadtest/events"
	"messages/cmd/loadtest/hostile"
	"messages/cmd/loadtest/idle"
	"messages/cmd/loadtest/peer"
	"messages/cmd/loadtest/vitessbench"
	"messages/cmd/loadtest/walk"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}

// run executes the command line and returns the exit code.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	return cmdline.Run(ctx, command(getenv, stdout, stderr), args, stderr)
}

// description is the part of `loadtest --help` that no flag carries.
const description = `A flag wins over its environment variable, which wins over the default; the run prints
its effective configuration first, each setting with where it came from, secrets masked.
Every address must be loopback (127.0.0.0/8, ::1, localhost).

Exit codes: 0 success; 1 failure; 2 bad usage (an unknown flag or argument, a value out of
range).`

// command is the command line: the list and mark benchmark at the root, the other
// benchmarks and median beneath it. getenv is the environment the flags read.
func command(getenv func(string) string, stdout, stderr io.Writer) *cli.Command {
	return &cli.Command{
		Name:            "loadtest",
		Usage:           "run named scenarios against a message server on loopback, with their raw floors",
		UsageText:       "loadtest --api-key KEY [options]\nloadtest median [options] run1.json run2.json ...\nloadtest walk --api-key KEY [options]",
		Description:     description,
		Writer:          stdout,
		ErrWriter:       stderr,
		HideHelpCommand: true,
		// Local: the benchmark's flags are not its subcommands'.
		Flags:  bench.Flags(getenv),
		Action: bench.Action(stdout, stderr),
		Commands: []*cli.Command{bench.MedianCommand(stdout), events.Command(getenv, stdout, stderr), peer.Command(stdout, stderr),
			walk.Command(getenv, stdout, stderr), hostile.Command(getenv, stdout, stderr), idle.Command(getenv, stdout, stderr),
			counts.Command(getenv, stdout, stderr), vitessbench.Command(stdout, stderr)},
	}
}
