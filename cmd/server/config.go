package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"messages/models/store"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v3"
)

// rootDescription is the part of `server --help` that no flag carries.
const rootDescription = `Configuration comes from flags and environment variables, with one rule: a flag wins
over its environment variable, which wins over the default. Every command's --help lists
its flags with their variable and default; serve logs the effective configuration at
start, each setting with where it came from, passwords and secrets masked.

Without a command, server serves: "server" is "server serve".

Exit codes: 0 success; 1 failure (the error, on stderr, says what to fix); 2 bad usage or
configuration (an unknown command, flag or argument, a missing or malformed value).

README.md has a five-minute tour; docs/operating.md the configuration table, the commands and how to run on MySQL.`

// prepare finishes the command tree: usage mistakes anywhere exit with 2, commands that
// take no arguments refuse them, and environment variables are tracked so a malformed one
// is a usage error and serve can tell where each setting came from.
func prepare(root *cli.Command) *cli.Command {
	var walk func(cmd *cli.Command)
	walk = func(cmd *cli.Command) {
		cmd.OnUsageError = func(_ context.Context, cmd *cli.Command, err error, _ bool) error {
			return usageError{fmt.Errorf("%w (see %s --help)", err, cmd.FullName())}
		}
		cmd.ExitErrHandler = func(context.Context, *cli.Command, error) {}
		for _, f := range cmd.Flags {
			trackEnv(f)
		}
		if len(cmd.Commands) == 0 && cmd.ArgsUsage == "" && cmd.Before == nil {
			cmd.Before = refuseArguments
		}
		for _, sub := range cmd.Commands {
			walk(sub)
		}
	}
	walk(root)
	before := root.Before
	root.Before = func(ctx context.Context, cmd *cli.Command) (context.Context, error) {
		if err := malformedEnv(cmd); err != nil || before == nil {
			return ctx, err
		}
		return before(ctx, cmd)
	}
	return root
}

// refuseArguments makes a stray word a usage error instead of something ignored: with
// serve as the default command, "server mirgate" would otherwise start a server.
func refuseArguments(ctx context.Context, cmd *cli.Command) (context.Context, error) {
	if !cmd.Args().Present() {
		return ctx, nil
	}
	arg := cmd.Args().First()
	if l := cmd.Lineage(); len(l) > 1 && l[1].DefaultCommand == cmd.Name {
		// Reached as the default command: the word was most likely a mistyped command.
		return ctx, usageError{fmt.Errorf("%q is not a command of %s, and %s takes no arguments (see %s --help)",
			arg, l[1].FullName(), cmd.FullName(), l[1].FullName())}
	}
	return ctx, usageError{fmt.Errorf("unexpected argument %q: %s takes none (see %s --help)", arg, cmd.FullName(), cmd.FullName())}
}

// envSource is an environment variable behind a flag. It remembers whether the flag took
// its value from it, and refuses a value the flag cannot parse, so the mistake is reported
// as configuration (exit 2) naming the variable.
type envSource struct {
	key   string
	parse func(string) error // nil: any text
	used  bool
	bad   error
}

func (e *envSource) Lookup() (string, bool) {
	v, ok := os.LookupEnv(e.key)
	if !ok || (v == "" && e.parse != nil) {
		// An empty variable leaves a number, duration or switch at its default.
		return "", false
	}
	if e.parse != nil {
		if err := e.parse(v); err != nil {
			e.bad = fmt.Errorf("%s=%q %v", e.key, v, err)
			return "", false
		}
	}
	e.used = true
	return v, true
}

func (e *envSource) IsFromEnv() bool  { return true }
func (e *envSource) Key() string      { return e.key }
func (e *envSource) String() string   { return fmt.Sprintf("environment variable %q", e.key) }
func (e *envSource) GoString() string { return fmt.Sprintf("&envSource{key:%q}", e.key) }

// flagSources returns where a flag looks for its value besides the command line, and how
// its text is checked; nil for flag types this program does not use.
func flagSources(f cli.Flag) (*cli.ValueSourceChain, func(string) error) {
	switch f := f.(type) {
	case *cli.StringFlag:
		return &f.Sources, nil
	case *cli.BoolFlag:
		return &f.Sources, parseWith(strconv.ParseBool, "is not true or false")
	case *cli.IntFlag:
		return &f.Sources, parseWith(func(s string) (int64, error) { return strconv.ParseInt(s, 0, 64) }, "is not a whole number")
	case *cli.Int64Flag:
		return &f.Sources, parseWith(func(s string) (int64, error) { return strconv.ParseInt(s, 0, 64) }, "is not a whole number")
	case *cli.FloatFlag:
		return &f.Sources, parseWith(func(s string) (float64, error) { return strconv.ParseFloat(s, 64) }, "is not a number")
	case *cli.DurationFlag:
		return &f.Sources, parseWith(time.ParseDuration, "is not a duration: give a number with a unit, e.g. 500ms, 5s, 1m30s")
	}
	return nil, nil
}

func parseWith[T any](parse func(string) (T, error), problem string) func(string) error {
	return func(s string) error {
		if _, err := parse(s); err != nil {
			return errors.New(problem)
		}
		return nil
	}
}

// trackEnv replaces a flag's environment variables with envSources.
func trackEnv(f cli.Flag) {
	sources, parse := flagSources(f)
	if sources == nil {
		return
	}
	for i, src := range sources.Chain {
		if env, ok := src.(cli.EnvValueSource); ok && env.IsFromEnv() {
			sources.Chain[i] = &envSource{key: env.Key(), parse: parse}
		}
	}
}

// malformedEnv is a usage error naming every environment variable whose value its flag
// could not take. Only the flags of the command being run were parsed, so only theirs
// can be named.
func malformedEnv(root *cli.Command) error {
	var bad []string
	var walk func(cmd *cli.Command)
	walk = func(cmd *cli.Command) {
		for _, f := range cmd.Flags {
			if sources, _ := flagSources(f); sources != nil {
				for _, src := range sources.Chain {
					if env, ok := src.(*envSource); ok && env.bad != nil {
						bad = append(bad, env.bad.Error())
					}
				}
			}
		}
		for _, sub := range cmd.Commands {
			walk(sub)
		}
	}
	walk(root)
	if len(bad) == 0 {
		return nil
	}
	return usageError{fmt.Errorf("%s (see %s --help)", strings.Join(bad, "; "), root.Name)}
}

// Where a setting's value came from.
const (
	fromFlag    = "flag"
	fromEnv     = "environment"
	fromDefault = "default"
)

// setting is one configuration value of a command, as serve logs it at start.
type setting struct {
	name   string // the environment variable, or --flag when it has none
	value  string // masked when secret
	source string // fromFlag, fromEnv or fromDefault
}

// settingsOf lists every flag of cmd and its parents, root first, with its effective
// value and where the value came from.
func settingsOf(cmd *cli.Command) []setting {
	lineage := cmd.Lineage()
	slices.Reverse(lineage)
	var out []setting
	for _, c := range lineage {
		for _, f := range c.Flags {
			name := f.Names()[0]
			if name == "help" {
				continue
			}
			s := setting{name: "--" + name, value: mask(name, fmt.Sprint(cmd.Value(name))), source: fromDefault}
			sources, _ := flagSources(f)
			if sources != nil {
				for _, src := range sources.Chain {
					if env, ok := src.(*envSource); ok {
						s.name = env.key
						if env.used {
							s.source = fromEnv
						}
					}
				}
			}
			if f.IsSet() && s.source != fromEnv {
				s.source = fromFlag
			}
			out = append(out, s)
		}
	}
	return out
}

// mask hides secrets: the password of a URL setting, and all of a setting named like a
// secret.
func mask(name, value string) string {
	lower := strings.ToLower(name)
	switch {
	case value == "":
		return ""
	case strings.Contains(lower, "secret") || strings.Contains(lower, "password") || strings.Contains(lower, "token"):
		return "xxxxx"
	case strings.HasSuffix(lower, "urls"):
		urls := strings.Split(value, ",")
		for i, u := range urls {
			urls[i] = mask("url", strings.TrimSpace(u))
		}
		return strings.Join(urls, ",")
	case strings.HasSuffix(lower, "url") || strings.HasSuffix(lower, "endpoint"):
		if _, err := url.Parse(value); err != nil {
			return "xxxxx (not a valid URL)"
		}
		return store.RedactURL(value)
	}
	return value
}

// logConfig logs the effective configuration as one record: each setting's value and
// where it came from (flag, environment or default).
func logConfig(logger *slog.Logger, c config) {
	attrs := make([]any, 0, len(c.settings))
	for _, s := range c.settings {
		// In development only what was set says something; production logs every
		// setting, for the operator reading the log of an incident.
		if c.development() && s.source == fromDefault {
			continue
		}
		attrs = append(attrs, slog.Group(s.name, "value", s.value, "source", s.source))
	}
	if len(attrs) > 0 || !c.development() {
		logger.Info("configuration", attrs...)
	}
}
