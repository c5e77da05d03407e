// Package peer is the side-by-side benchmark (`loadtest peer`): the same query shapes
// against this server and against a peer GraphQL engine over a copy of its rows
// (PostGraphile, set up by .ci/bench-peer), each measured on one side and then the
// other, in rounds, at each connection count; the table shows the medians and their
// ratios.
package peer

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

// peerConfig is the command line of `loadtest peer`.
type peerConfig struct {
	target         peerTarget
	jwtSecret      string
	jwtRole        string
	shapes         []string
	connections    []int
	rounds         int
	duration       time.Duration
	warmup         time.Duration
	requestTimeout time.Duration
	setupTimeout   time.Duration
	maxRequests    int
	messages       int // the dataset's size, for the report
	jsonPath       string
	// countedServerURL and proxyStatsURL, when set, are a second instance of this server
	// whose database connections pass through `loadtest events proxy`, and that proxy's
	// stats: each shape's round trips are counted there (roundtrips.go).
	countedServerURL, proxyStatsURL string
	// costs probe each side's CPU and statements: "server", and per peer its side
	// ("pg4", "pg5") and the side with "-rls" after it.
	costs map[string]costProbe
}

// Command is `loadtest peer`.
func Command(stdout, stderr io.Writer) *cli.Command {
	return &cli.Command{
		Name:  "peer",
		Usage: "run the same GraphQL shapes against this server and a peer engine on the same rows, side by side",
		Description: `Each shape runs on the server, then on each peer (the other way round in even
rounds), for --duration after --warmup, --rounds times at each of --connections; a table per
peer shows the median p50 and requests/s of the server and the peer and their ratio. Shapes:
` + strings.Join(peerShapeNames(), ", ") + `. The peers are PostGraphile 4 (--peer-url) and 5
(--peer5-url) over the tables of .ci/peer/schema.sql; .ci/bench-peer sets them up.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "server-url", Usage: "this server; loopback only", Value: "http://127.0.0.1:8080"},
			&cli.StringFlag{Name: "api-key", Usage: "API key of the environment (required)"},
			&cli.StringFlag{Name: "peer-url", Usage: "PostGraphile 4's GraphQL endpoint; loopback only (required)"},
			&cli.StringFlag{Name: "peer-rls-url", Usage: "PostGraphile 4's GraphQL endpoint with JWT + row-level security (inbox-rls is skipped without it)"},
			&cli.StringFlag{Name: "peer5-url", Usage: "PostGraphile 5's GraphQL endpoint (amber preset); loopback only; none: no PostGraphile 5 table"},
			&cli.StringFlag{Name: "peer5-rls-url", Usage: "PostGraphile 5's GraphQL endpoint with JWT (lazy-jwt preset) + row-level security"},
			&cli.StringFlag{Name: "jwt-secret", Usage: "the RLS peers' JWT secret"},
			&cli.StringFlag{Name: "jwt-role", Usage: "the role claim of the RLS peer's token", Value: "msgpeer_subscriber"},
			&cli.StringFlag{Name: "environment-id", Usage: "the environment of the API key (required)"},
			&cli.StringFlag{Name: "subscriber", Usage: "external id of the subscriber whose inbox is read (required)"},
			&cli.StringFlag{Name: "subscriber-key", Usage: "that subscriber's row id, messages.subscriber_id (required)"},
			&cli.IntFlag{Name: "depth", Usage: "rows skipped by the offset and cursor shapes", Value: 500_000},
			&cli.IntFlag{Name: "page-size", Usage: "page size of every list", Value: 10},
			&cli.StringFlag{Name: "shapes", Usage: "comma-separated shapes (default: all): " + strings.Join(peerShapeNames(), ", ")},
			&cli.StringFlag{Name: "connections", Usage: "comma-separated connection counts", Value: "1,4"},
			&cli.IntFlag{Name: "rounds", Usage: "measurements of each shape, side and connection count; the table shows the median", Value: 3},
			&cli.DurationFlag{Name: "duration", Usage: "how long each measurement runs", Value: 10 * time.Second},
			&cli.DurationFlag{Name: "warmup", Usage: "unmeasured run before each measurement (0: none)", Value: time.Second},
			&cli.DurationFlag{Name: "request-timeout", Usage: "deadline of one request", Value: 30 * time.Second},
			&cli.DurationFlag{Name: "setup-timeout", Usage: "deadline of finding the cursors and mark targets", Value: 5 * time.Minute},
			&cli.IntFlag{Name: "max-requests", Usage: "most requests one measurement sends, whatever the duration", Value: 200_000},
			&cli.IntFlag{Name: "messages", Usage: "messages in the dataset, for the report only"},
			&cli.StringFlag{Name: "json", Usage: "also write the results as JSON to this file"},
			&cli.StringFlag{Name: "server-pids", Usage: "comma-separated process ids whose CPU (with their children's) is the server side's: the server and its database"},
			&cli.StringFlag{Name: "peer-pids", Usage: "likewise for PostGraphile 4: its process and PostgreSQL's postmaster"},
			&cli.StringFlag{Name: "peer-rls-pids", Usage: "likewise for PostGraphile 4 with row-level security"},
			&cli.StringFlag{Name: "peer5-pids", Usage: "likewise for PostGraphile 5"},
			&cli.StringFlag{Name: "peer5-rls-pids", Usage: "likewise for PostGraphile 5 with row-level security"},
			&cli.StringFlag{Name: "counted-server-url", Usage: "a second instance of this server whose MariaDB connections pass through `loadtest events proxy`; loopback only (with --proxy-stats-url: count each shape's round trips there)"},
			&cli.StringFlag{Name: "proxy-stats-url", Usage: "that proxy's stats address, http://127.0.0.1:PORT/"},
			&cli.BoolFlag{Name: "server-statements", Usage: "read the server's db_statements_total at /metrics around each measurement", Value: true},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			c, err := peerConfigFrom(cmd)
			if err != nil {
				return err
			}
			cmdline.PrintSettings(stderr, cmdline.Masked(cmdline.Settings(cmd), "--jwt-secret", "--api-key"))
			return runPeer(ctx, c, stdout, stderr)
		},
	}
}

// peerConfigFrom reads and checks the flags of `loadtest peer`.
func peerConfigFrom(cmd *cli.Command) (peerConfig, error) {
	if cmd.Args().Present() {
		return peerConfig{}, cmdline.Usage(fmt.Errorf("unexpected arguments: %v", cmd.Args().Slice()))
	}
	c := peerConfig{
		target: peerTarget{
			serverURL: strings.TrimSuffix(cmd.String("server-url"), "/"), apiKey: cmd.String("api-key"),
			environmentID: cmd.String("environment-id"), subscriber: cmd.String("subscriber"),
			subscriberKey: cmd.String("subscriber-key"), pageSize: cmd.Int("page-size"), depth: cmd.Int("depth"),
		},
		jwtSecret: cmd.String("jwt-secret"), jwtRole: cmd.String("jwt-role"),
		rounds: cmd.Int("rounds"), duration: cmd.Duration("duration"), warmup: cmd.Duration("warmup"),
		requestTimeout: cmd.Duration("request-timeout"), setupTimeout: cmd.Duration("setup-timeout"),
		maxRequests: cmd.Int("max-requests"), messages: cmd.Int("messages"), jsonPath: cmd.String("json"),
		countedServerURL: strings.TrimSuffix(cmd.String("counted-server-url"), "/"), proxyStatsURL: cmd.String("proxy-stats-url"),
	}
	var err error
	if c.connections, err = parseConnections(cmd.String("connections")); err != nil {
		return c, cmdline.Usage(err)
	}
	c.target.peers = []*peerEngine{newPeerEngine("pg4", "PostGraphile 4", cmd.String("peer-url"), cmd.String("peer-rls-url"), postgraphile4Keys)}
	if u := cmd.String("peer5-url"); u != "" {
		c.target.peers = append(c.target.peers, newPeerEngine("pg5", "PostGraphile 5", u, cmd.String("peer5-rls-url"), postgraphile5Keys))
	}
	c.costs = map[string]costProbe{}
	for side, flag := range map[string]string{"server": "server-pids", "pg4": "peer-pids", "pg4-rls": "peer-rls-pids",
		"pg5": "peer5-pids", "pg5-rls": "peer5-rls-pids"} {
		pids, err := parsePIDs(cmd.String(flag))
		if err != nil {
			return c, cmdline.Usage(fmt.Errorf("--%s: %w", flag, err))
		}
		c.costs[side] = costProbe{pids: pids}
	}
	if cmd.Bool("server-statements") {
		p := c.costs["server"]
		p.metricsURL = c.target.serverURL + "/metrics"
		c.costs["server"] = p
	}
	rls := false
	for _, p := range c.target.peers {
		rls = rls || p.rlsURL != ""
	}
	if c.shapes, err = parsePeerShapes(cmd.String("shapes"), rls); err != nil {
		return c, cmdline.Usage(err)
	}
	if err := c.check(); err != nil {
		return c, cmdline.Usage(err)
	}
	return c, nil
}

// check refuses addresses off loopback, missing settings and values out of range.
func (c peerConfig) check() error {
	t := c.target
	if err := loopback.CheckURL(t.serverURL); err != nil {
		return fmt.Errorf("--server-url: %w", err)
	}
	if (c.countedServerURL == "") != (c.proxyStatsURL == "") {
		return errors.New("--counted-server-url and --proxy-stats-url go together")
	}
	for flag, u := range map[string]string{"--counted-server-url": c.countedServerURL, "--proxy-stats-url": c.proxyStatsURL} {
		if u == "" {
			continue
		}
		if err := loopback.CheckURL(u); err != nil {
			return fmt.Errorf("%s: %w", flag, err)
		}
	}
	// The flags of each peer's endpoints, by its side.
	flags := map[string][2]string{"pg4": {"--peer-url", "--peer-rls-url"}, "pg5": {"--peer5-url", "--peer5-rls-url"}}
	for _, p := range t.peers {
		f := flags[p.side]
		if err := loopback.CheckURL(p.url); err != nil {
			return fmt.Errorf("%s: %w", f[0], err)
		}
		if p.rlsURL == "" {
			continue
		}
		if err := loopback.CheckURL(p.rlsURL); err != nil {
			return fmt.Errorf("%s: %w", f[1], err)
		}
		if c.jwtSecret == "" {
			return fmt.Errorf("%s needs --jwt-secret", f[1])
		}
	}
	switch {
	case t.apiKey == "" || t.environmentID == "" || t.subscriber == "" || t.subscriberKey == "":
		return errors.New("--api-key, --environment-id, --subscriber and --subscriber-key are required")
	case t.pageSize < 1 || t.pageSize > 1000:
		return errors.New("--page-size must be from 1 to 1000")
	case t.depth < 1:
		return errors.New("--depth must be positive")
	case c.rounds < 1 || c.rounds > 100:
		return errors.New("--rounds must be from 1 to 100")
	case c.duration <= 0 || c.duration > time.Hour:
		return errors.New("--duration must be between 0 and 1h")
	case c.warmup < 0 || c.requestTimeout <= 0 || c.setupTimeout <= 0:
		return errors.New("--warmup must not be negative, --request-timeout and --setup-timeout positive")
	case c.maxRequests < 1 || c.maxRequests > 10_000_000:
		return errors.New("--max-requests must be from 1 to 10,000,000")
	}
	return nil
}

// parseConnections reads --connections: distinct counts from 1 to 1000, ascending.
func parseConnections(list string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(list, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 || n > 1000 {
			return nil, fmt.Errorf("--connections: %q is not a count from 1 to 1000", f)
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("--connections names no count")
	}
	slices.Sort(out)
	return out, nil
}

// parsePeerShapes reads --shapes: known names, each once, in the table's order; all of
// them when empty, but inbox-rls only with an RLS peer, and with its server figures'
// shape.
func parsePeerShapes(list string, rls bool) ([]string, error) {
	want := map[string]bool{}
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		if !slices.Contains(peerShapeNames(), name) {
			return nil, fmt.Errorf("unknown shape %q; known: %s", name, strings.Join(peerShapeNames(), ", "))
		}
		want[name] = true
	}
	all := len(want) == 0
	var out []string
	for _, s := range peerShapes {
		if (all || want[s.name]) && (s.name != "inbox-rls" || rls) {
			out = append(out, s.name)
		}
	}
	if !all && want["inbox-rls"] && !rls {
		return nil, errors.New("shape inbox-rls needs --peer-rls-url")
	}
	if want["inbox-rls"] && !slices.Contains(out, "inbox") {
		// inbox-rls reuses the server figures of inbox.
		out = append([]string{"inbox"}, out...)
	}
	if len(out) == 0 {
		return nil, errors.New("--shapes names no shape")
	}
	return out, nil
}
