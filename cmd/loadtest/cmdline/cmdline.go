// Package cmdline holds what every command of the load generator does the same way with
// its command line: an environment variable behind a flag, the effective configuration
// printed at start with where each value came from, and the exit codes (0 success, 1
// failure, 2 bad usage).
package cmdline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/urfave/cli/v3"

	"messages/models/store"
)

// UsageError marks a mistake in the command line: an unknown flag or argument, a value
// out of range. Run turns it into exit code 2.
type UsageError struct{ Err error }

// Error is the mistake's message.
func (e UsageError) Error() string { return e.Err.Error() }

// Unwrap returns the mistake.
func (e UsageError) Unwrap() error { return e.Err }

// Usage wraps err as a UsageError.
func Usage(err error) error { return UsageError{Err: err} }

// Run runs root with args (without the program's name) and returns the exit code: 0 on
// success, 2 on a usage error, 1 on any other error, which it prints to stderr. Root and
// the commands right beneath it report a flag that does not parse as a usage error
// pointing at their --help.
func Run(ctx context.Context, root *cli.Command, args []string, stderr io.Writer) int {
	for _, cmd := range append([]*cli.Command{root}, root.Commands...) {
		cmd.OnUsageError = func(_ context.Context, cmd *cli.Command, err error, _ bool) error {
			return Usage(fmt.Errorf("%w (see %s --help)", err, cmd.FullName()))
		}
		// Errors become exit codes here, not in the library.
		cmd.ExitErrHandler = func(context.Context, *cli.Command, error) {}
	}
	err := root.Run(ctx, append([]string{root.Name}, args...))
	if err == nil {
		return 0
	}
	fmt.Fprintln(stderr, "error:", err)
	if errors.As(err, new(UsageError)) {
		return 2
	}
	return 1
}

// FromEnv is the source of a flag that the environment variable key may set, read
// through getenv so tests choose the environment. An empty variable counts as unset.
func FromEnv(key string, getenv func(string) string) cli.ValueSourceChain {
	return cli.NewValueSourceChain(&envVar{key: key, getenv: getenv})
}

// envVar is an environment variable behind a flag. urfave/cli asks it only when the
// command line did not set the flag, so used says the value came from the environment.
type envVar struct {
	key    string
	getenv func(string) string
	used   bool
}

func (e *envVar) Lookup() (string, bool) {
	v := e.getenv(e.key)
	e.used = v != ""
	return v, e.used
}

func (e *envVar) IsFromEnv() bool  { return true }
func (e *envVar) Key() string      { return e.key }
func (e *envVar) String() string   { return fmt.Sprintf("environment variable %q", e.key) }
func (e *envVar) GoString() string { return fmt.Sprintf("&envVar{key:%q}", e.key) }

// Setting is one flag's effective value and where it came from, as a run prints it.
type Setting struct {
	Name   string // the environment variable, or --flag when it has none
	Value  string // masked when secret
	Source string // flag, environment or default
}

// Settings lists the flags of cmd with their effective values and sources; the API key
// and the database URL's password are masked.
func Settings(cmd *cli.Command) []Setting {
	var out []Setting
	for _, f := range cmd.Flags {
		name := f.Names()[0]
		if name == "help" {
			continue
		}
		s := Setting{Name: "--" + name, Value: fmt.Sprint(cmd.Value(name)), Source: "default"}
		if f.IsSet() {
			s.Source = "flag"
		}
		if sf, ok := f.(*cli.StringFlag); ok {
			for _, src := range sf.Sources.Chain {
				if env, ok := src.(*envVar); ok {
					s.Name = env.key
					if env.used {
						s.Source = "environment"
					}
				}
			}
		}
		switch {
		case s.Value == "":
		case name == "api-key":
			s.Value = "xxxxx"
		case name == "database-url":
			s.Value = store.RedactURL(s.Value)
		}
		out = append(out, s)
	}
	return out
}

// Masked hides the values of the named flags (secrets, API keys) in settings, for
// PrintSettings.
func Masked(settings []Setting, names ...string) []Setting {
	for i := range settings {
		for _, n := range names {
			if settings[i].Name == n && settings[i].Value != "" {
				settings[i].Value = "xxxxx"
			}
		}
	}
	return settings
}

// PrintSettings writes the effective configuration, one setting a line.
func PrintSettings(w io.Writer, settings []Setting) {
	fmt.Fprintln(w, "configuration (a flag wins over the environment, which wins over the default):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, s := range settings {
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", s.Name, s.Value, s.Source)
	}
	_ = tw.Flush()
}
