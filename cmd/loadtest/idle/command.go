// Package idle is the idle subscriptions benchmark (`loadtest idle`): what open
// graphql-transport-ws sockets, each holding one messageEvents subscription and sending
// nothing, cost this server and, in the same run, the protocol's reference server
// (graphql-ws's useServer on ws, under Node, with a subscription that never yields). It
// starts each server itself, fresh for every socket count, opens the sockets from several
// loopback source addresses, waits, and reads the server's RSS, CPU and goroutines.
package idle

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

// The servers measured, in the order they run at each socket count.
const (
	sideServer    = "server"     // this server, `server serve`
	sideServerSSE = "server-sse" // this server, its subscriptions over event streams (graphql-sse)
	sideReference = "reference"  // graphql-ws's reference server, .ci/idle/server.mjs
)

// maxSockets bounds --sockets: past it the loopback source addresses and the machine's
// memory, not the servers, would be what is measured.
const maxSockets = 100_000

// config is the command line of `loadtest idle`.
type config struct {
	serverBin     string // the server binary, started with `serve`
	databaseURL   string // the server's database, seeded, with the API key's environment
	apiKey        string
	referenceDir  string // the npm project of the reference server, installed
	node          string // the Node binary that runs it
	counts        []int  // socket counts, each measured on a fresh process of each side
	sides         []string
	serverPort    int
	referencePort int
	ping          time.Duration // this server's keep-alive ping, as the reference's 12 s
	settle        time.Duration // the wait before each reading, and the window without sockets
	window        time.Duration // how long idle CPU is measured with the sockets open
	dialers       int           // sockets opened at once
	sources       int           // loopback source addresses, 127.0.0.2 and on
	jsonPath      string
}

// Command is `loadtest idle`.
func Command(getenv func(string) string, stdout, stderr io.Writer) *cli.Command {
	return &cli.Command{
		Name:  "idle",
		Usage: "measure idle graphql-transport-ws subscriptions: this server beside graphql-ws's reference server",
		Description: `For each socket count and each side, starts the server (--server-bin serve on
--database-url; the reference with --node in --reference-dir), opens that many sockets,
each with connection_init and one messageEvents subscription, from --sources loopback
addresses, waits --settle, then measures the server's CPU over --window and its RSS and
goroutines at the end; then closes the sockets and stops the server. The file limit is
raised in this process, and the servers it starts inherit it.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "server-bin", Usage: "the server binary (required)"},
			&cli.StringFlag{Name: "database-url", Usage: "mysql://user@127.0.0.1:3306/db the server serves, holding the API key's environment (required)"},
			&cli.StringFlag{Name: "api-key", Usage: "API key the server's sockets authenticate with (required)", Sources: cmdline.FromEnv("LOADTEST_API_KEY", getenv)},
			&cli.StringFlag{Name: "reference-dir", Usage: "the reference server's npm project, installed (npm ci)", Value: ".ci/idle"},
			&cli.StringFlag{Name: "node", Usage: "the Node binary that runs the reference server", Value: "node"},
			&cli.StringFlag{Name: "sockets", Usage: "comma-separated socket counts", Value: "1000,10000,50000"},
			&cli.StringFlag{Name: "sides", Usage: "comma-separated: server, server-sse (this server, each subscription an event stream), reference", Value: "server,reference"},
			&cli.IntFlag{Name: "server-port", Usage: "loopback port of this server", Value: 18291},
			&cli.IntFlag{Name: "reference-port", Usage: "loopback port of the reference server", Value: 18292},
			&cli.DurationFlag{Name: "ping", Usage: "this server's keep-alive ping interval (--websocket-ping); the reference pings every 12s, graphql-ws's default", Value: 12 * time.Second},
			&cli.DurationFlag{Name: "settle", Usage: "wait before each reading; the CPU without sockets is measured over it", Value: 10 * time.Second},
			&cli.DurationFlag{Name: "window", Usage: "how long idle CPU is measured with the sockets open", Value: 30 * time.Second},
			&cli.IntFlag{Name: "dialers", Usage: "sockets opened at once", Value: 100},
			&cli.IntFlag{Name: "sources", Usage: "loopback source addresses (127.0.0.2 and on): each has about 28,000 ephemeral ports to a server", Value: 8},
			&cli.StringFlag{Name: "json", Usage: "also write the results as JSON to this file"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			c, err := configFrom(cmd)
			if err != nil {
				return err
			}
			cmdline.PrintSettings(stderr, cmdline.Settings(cmd))
			return run(ctx, c, stdout, stderr)
		},
	}
}

// configFrom reads and checks the flags of `loadtest idle`.
func configFrom(cmd *cli.Command) (config, error) {
	if cmd.Args().Present() {
		return config{}, cmdline.Usage(fmt.Errorf("unexpected arguments: %v", cmd.Args().Slice()))
	}
	c := config{
		serverBin: cmd.String("server-bin"), databaseURL: cmd.String("database-url"), apiKey: cmd.String("api-key"),
		referenceDir: cmd.String("reference-dir"), node: cmd.String("node"),
		serverPort: cmd.Int("server-port"), referencePort: cmd.Int("reference-port"),
		ping: cmd.Duration("ping"), settle: cmd.Duration("settle"), window: cmd.Duration("window"),
		dialers: cmd.Int("dialers"), sources: cmd.Int("sources"), jsonPath: cmd.String("json"),
	}
	var err error
	if c.counts, err = parseCounts(cmd.String("sockets")); err != nil {
		return c, cmdline.Usage(err)
	}
	if c.sides, err = parseSides(cmd.String("sides")); err != nil {
		return c, cmdline.Usage(err)
	}
	if err := c.check(); err != nil {
		return c, cmdline.Usage(err)
	}
	return c, nil
}

func (c config) check() error {
	if slices.Contains(c.sides, sideServer) || slices.Contains(c.sides, sideServerSSE) {
		switch {
		case c.serverBin == "":
			return errors.New("--server-bin is required to measure this server")
		case c.apiKey == "":
			return errors.New("--api-key (or LOADTEST_API_KEY) is required to measure this server")
		case c.databaseURL == "":
			return errors.New("--database-url is required to measure this server")
		}
		if err := loopback.CheckDatabaseURL(c.databaseURL); err != nil {
			return fmt.Errorf("--database-url: %w", err)
		}
	}
	switch {
	case c.serverPort < 1 || c.serverPort > 65535 || c.referencePort < 1 || c.referencePort > 65535 || c.serverPort == c.referencePort:
		return errors.New("--server-port and --reference-port must be two ports from 1 to 65535")
	case c.ping < 0 || c.settle <= 0 || c.window <= 0:
		return errors.New("--ping must not be negative; --settle and --window must be positive")
	case c.dialers < 1 || c.dialers > 1000:
		return errors.New("--dialers must be from 1 to 1000")
	case c.sources < 1 || c.sources > 250:
		return errors.New("--sources must be from 1 to 250")
	case slices.Max(c.counts) > c.sources*ephemeralPorts:
		return fmt.Errorf("%d sockets need more than --sources %d addresses of %d ephemeral ports each", slices.Max(c.counts), c.sources, ephemeralPorts)
	}
	return nil
}

// parseCounts reads --sockets: positive counts up to maxSockets, in the order given.
func parseCounts(list string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(list, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		n, err := strconv.Atoi(strings.ReplaceAll(f, "_", ""))
		if err != nil || n < 1 || n > maxSockets {
			return nil, fmt.Errorf("--sockets: %q is not a count from 1 to %d", f, maxSockets)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, errors.New("--sockets names no count")
	}
	return out, nil
}

// parseSides reads --sides: server, reference or both, run in that order.
func parseSides(list string) ([]string, error) {
	want := map[string]bool{}
	for _, f := range strings.Split(list, ",") {
		f = strings.TrimSpace(f)
		switch f {
		case "":
		case sideServer, sideServerSSE, sideReference:
			want[f] = true
		default:
			return nil, fmt.Errorf("--sides: unknown side %q; known: %s, %s, %s", f, sideServer, sideServerSSE, sideReference)
		}
	}
	var out []string
	for _, s := range []string{sideServer, sideServerSSE, sideReference} {
		if want[s] {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("--sides names no side")
	}
	return out, nil
}
