// Package vitessbench is `loadtest vitess`: the same request paths against two servers
// over the same rows, one on MariaDB directly and one on Vitess (vtgate in front of the
// shards), each shape measured on one and then the other in alternating order, in rounds;
// and, on the Vitess side, the statements each path sends to every shard, from vtgate's
// own counters. .ci/bench-vitess sets both up.
package vitessbench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v3"

	"messages/cmd/loadtest/cmdline"
	"messages/cmd/loadtest/loopback"
)

// config is the command line of `loadtest vitess`.
type config struct {
	directURL, vitessURL string
	varsURL              string // vtgate's /debug/vars
	envs                 []environment
	shapes               []string
	pageSize, depth      int
	rounds               int
	duration, warmup     time.Duration
	requestTimeout       time.Duration
	maxRequests          int
	countRequests        int // requests of each shape and environment in the statement count
	messages             int // the dataset's size, for the report
	jsonPath             string
	// vitessPIDs are the processes of the deployment (vtcombo: vtgate and the tablets),
	// whose CPU per request is the hop's cost in CPU; none: not measured.
	vitessPIDs []int
}

// environment is one of the environments the requests take turns on, with its API key on
// each side and its busy subscriber.
type environment struct {
	ID, Subscriber       string
	directKey, vitessKey string
}

// Command is `loadtest vitess`.
func Command(stdout, stderr io.Writer) *cli.Command {
	return &cli.Command{
		Name:  "vitess",
		Usage: "run the same request paths against a server on MariaDB and one on Vitess over the same rows, side by side",
		Description: `Each shape runs on the direct server, then on the Vitess one (the other way round in
even rounds), for --duration after --warmup, --rounds times, at 1 and at 4 connections; the
requests take turns on the environments. Then each shape is sent --count-requests times per
environment, one at a time, to the Vitess server, and vtgate's per-shard call counters
(VttabletCall in --vars-url) give what one request sends to each shard: a request of one
environment that reaches a second shard of the sharded keyspace is a scatter. Shapes:
` + strings.Join(shapeNames(), ", ") + `.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "direct-url", Usage: "the server on MariaDB; loopback only (required)"},
			&cli.StringFlag{Name: "vitess-url", Usage: "the server on vtgate; loopback only (required)"},
			&cli.StringFlag{Name: "vars-url", Usage: "vtgate's /debug/vars (.ci/vitess vars); loopback only (required)"},
			&cli.StringFlag{Name: "environments", Usage: "comma-separated environment ids, on different shards (required)"},
			&cli.StringFlag{Name: "subscribers", Usage: "comma-separated external ids of a busy subscriber of each environment (required)"},
			&cli.StringFlag{Name: "direct-keys", Usage: "comma-separated API keys of each environment on the direct server (required)"},
			&cli.StringFlag{Name: "vitess-keys", Usage: "comma-separated API keys of each environment on the Vitess server (required)"},
			&cli.StringFlag{Name: "shapes", Usage: "comma-separated shapes (default: all): " + strings.Join(shapeNames(), ", ")},
			&cli.IntFlag{Name: "page-size", Usage: "page size of every list", Value: 10},
			&cli.IntFlag{Name: "depth", Usage: "rows before the cursor page", Value: 40_000},
			&cli.IntFlag{Name: "rounds", Usage: "measurements of each shape, side and connection count; the table shows the median", Value: 3},
			&cli.DurationFlag{Name: "duration", Usage: "how long each measurement runs", Value: 5 * time.Second},
			&cli.DurationFlag{Name: "warmup", Usage: "unmeasured run before each measurement (0: none)", Value: time.Second},
			&cli.DurationFlag{Name: "request-timeout", Usage: "deadline of one request", Value: 30 * time.Second},
			&cli.IntFlag{Name: "max-requests", Usage: "most requests one measurement sends, whatever the duration", Value: 200_000},
			&cli.IntFlag{Name: "count-requests", Usage: "requests of each shape and environment whose statements are counted", Value: 100},
			&cli.IntFlag{Name: "messages", Usage: "messages in the dataset, for the report only"},
			&cli.StringFlag{Name: "json", Usage: "also write the results as JSON to this file"},
			&cli.StringFlag{Name: "vitess-pids", Usage: "comma-separated process ids of the deployment (vtcombo: vtgate and the tablets), whose CPU per request the table shows"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			c, err := configFrom(cmd)
			if err != nil {
				return err
			}
			cmdline.PrintSettings(stderr, cmdline.Masked(cmdline.Settings(cmd), "--direct-keys", "--vitess-keys"))
			return run(ctx, c, stdout, stderr)
		},
	}
}

// configFrom reads and checks the flags of `loadtest vitess`.
func configFrom(cmd *cli.Command) (config, error) {
	if cmd.Args().Present() {
		return config{}, cmdline.Usage(fmt.Errorf("unexpected arguments: %v", cmd.Args().Slice()))
	}
	c := config{
		directURL: strings.TrimSuffix(cmd.String("direct-url"), "/"), vitessURL: strings.TrimSuffix(cmd.String("vitess-url"), "/"),
		varsURL: cmd.String("vars-url"), pageSize: cmd.Int("page-size"), depth: cmd.Int("depth"),
		rounds: cmd.Int("rounds"), duration: cmd.Duration("duration"), warmup: cmd.Duration("warmup"),
		requestTimeout: cmd.Duration("request-timeout"), maxRequests: cmd.Int("max-requests"),
		countRequests: cmd.Int("count-requests"), messages: cmd.Int("messages"), jsonPath: cmd.String("json"),
	}
	ids, subs := splitList(cmd.String("environments")), splitList(cmd.String("subscribers"))
	dk, vk := splitList(cmd.String("direct-keys")), splitList(cmd.String("vitess-keys"))
	if len(ids) == 0 || len(subs) != len(ids) || len(dk) != len(ids) || len(vk) != len(ids) {
		return c, cmdline.Usage(errors.New("--environments, --subscribers, --direct-keys and --vitess-keys name the same number of environments, at least one"))
	}
	for i := range ids {
		c.envs = append(c.envs, environment{ID: ids[i], Subscriber: subs[i], directKey: dk[i], vitessKey: vk[i]})
	}
	for _, f := range splitList(cmd.String("vitess-pids")) {
		pid, err := strconv.Atoi(f)
		if err != nil || pid < 1 {
			return c, cmdline.Usage(fmt.Errorf("--vitess-pids: %q is not a process id", f))
		}
		c.vitessPIDs = append(c.vitessPIDs, pid)
	}
	var err error
	if c.shapes, err = parseShapes(cmd.String("shapes")); err != nil {
		return c, cmdline.Usage(err)
	}
	if err := c.check(); err != nil {
		return c, cmdline.Usage(err)
	}
	return c, nil
}

// check refuses addresses off loopback and values out of range.
func (c config) check() error {
	for flag, u := range map[string]string{"--direct-url": c.directURL, "--vitess-url": c.vitessURL, "--vars-url": c.varsURL} {
		if err := loopback.CheckURL(u); err != nil {
			return fmt.Errorf("%s: %w", flag, err)
		}
	}
	switch {
	case c.pageSize < 1 || c.pageSize > 1000:
		return errors.New("--page-size must be from 1 to 1000")
	case c.depth < 1:
		return errors.New("--depth must be positive")
	case c.rounds < 1 || c.rounds > 100:
		return errors.New("--rounds must be from 1 to 100")
	case c.duration <= 0 || c.duration > time.Hour:
		return errors.New("--duration must be between 0 and 1h")
	case c.warmup < 0 || c.requestTimeout <= 0:
		return errors.New("--warmup must not be negative, --request-timeout positive")
	case c.maxRequests < 1 || c.maxRequests > 10_000_000:
		return errors.New("--max-requests must be from 1 to 10,000,000")
	case c.countRequests < 1 || c.countRequests > 100_000:
		return errors.New("--count-requests must be from 1 to 100,000")
	}
	return nil
}

// splitList reads a comma-separated list, leaving out empty items.
func splitList(list string) []string {
	var out []string
	for _, f := range strings.Split(list, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// parseShapes reads --shapes: known names, in the table's order; all when empty.
func parseShapes(list string) ([]string, error) {
	want := splitList(list)
	for _, name := range want {
		if !slices.Contains(shapeNames(), name) {
			return nil, fmt.Errorf("unknown shape %q; known: %s", name, strings.Join(shapeNames(), ", "))
		}
	}
	var out []string
	for _, s := range shapes {
		if len(want) == 0 || slices.Contains(want, s.name) {
			out = append(out, s.name)
		}
	}
	return out, nil
}
