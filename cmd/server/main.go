// Command server runs the message service and its admin tasks.
//
//	server [serve]    serve GraphQL, /v1 and the playground (the default)
//	server migrate    apply, roll back or list database migrations
//	server apikey     create, list and revoke API keys
//	server import     load messages from JSON Lines
//	server export     write an environment's messages as JSON Lines
//	server seed       load synthetic messages for demos and benchmarks
//
// Exit codes: 0 success, 1 failure (the error is printed on stderr), 2 bad usage.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"messages/models/store"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(newApp(os.Stdout, os.Stderr).run(ctx, os.Args))
}

// app is the program with its outputs and its clock, so tests can run it in-process.
type app struct {
	stdout, stderr io.Writer
	// now is the program's one clock: the store's, the resolver's, the rate limiter's
	// and the request log's. Tests replace it for fixed timestamps.
	now func() time.Time
	// ready, when set, receives the address the server listens on.
	ready func(addr string)
	// storeOptions are added to every store the program opens: a test's seam (a mark
	// hook, say) into the server it starts in-process.
	storeOptions []store.OpenOption
}

// newApp returns the program writing to stdout and stderr, on the wall clock.
func newApp(stdout, stderr io.Writer) *app {
	return &app{stdout: stdout, stderr: stderr, now: time.Now}
}

// usageError marks a mistake in the command line (exit code 2).
type usageError struct{ error }

// run executes the command line and returns the process exit code.
func (a *app) run(ctx context.Context, args []string) int {
	err := a.command().Run(ctx, args)
	if err == nil {
		return 0
	}
	fmt.Fprintln(a.stderr, "error:", err)
	var ue usageError
	if errors.As(err, &ue) {
		return 2
	}
	return 1
}
