// Package counts is the count benchmark (`loadtest counts`): what live counts and count
// requests cost the database, measured from outside a running server. The fan-out opens
// many messageCounts subscriptions of one subscriber and changes its messages one at a
// time, counting the statements the server sends per change (its db_statements_total)
// and the database's SELECTs (MariaDB's Com_select); the filters part sends the inbox
// client's count request with 30 filters of workflows and creation ranges, one at a
// time and then in bursts, while another tenant lists. .ci/bench-counts builds, seeds
// and starts everything it needs, for the build before and this one in one run.
package counts

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/urfave/cli/v3"

	"messages/cmd/loadtest/cmdline"
	"messages/cmd/loadtest/loopback"
	"messages/cmd/loadtest/serverdb"
)

// config is what `loadtest counts` runs against.
type config struct {
	baseURL, apiKey, application, subscriber string
	otherKey                                 string
	databaseURL                              string
	serverPID                                int
	subscriptions, perSocket, changes        int
	filters, requests, burst, bursts         int
	createdOffset                            time.Duration
	fanout, filtered                         bool
}

// Command is `loadtest counts`.
func Command(getenv func(string) string, stdout, stderr io.Writer) *cli.Command {
	return &cli.Command{
		Name:  "counts",
		Usage: "measure what live counts and multi-filter count requests cost a running server's database",
		Description: `Two parts. fanout: --subscriptions messageCounts subscriptions of one subscriber (over sockets
of --per-socket each), then --changes marks of one of its messages, read and unread in
turn, each waited for until every subscription has the new count: the statements the
server sent per change (db_statements_total) and MariaDB's Com_select per change (with
--database-url; the whole database server's, so run it on a quiet one), and how long the
last subscription waited. filters: the inbox client's GET /v1/inbox/notifications/count
with --filters filters of workflows' tags and creation ranges, --requests one after
another (latency, statements per request, and database time per request: the server's
db_statement_seconds_total when it has it, and MariaDB's Query_time with
--database-url, the whole database server's), then --bursts bursts of --burst at once
(their answers) while another tenant (--other-key) lists, against its latency alone.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "base-url", Usage: "server to measure; loopback only", Value: "http://127.0.0.1:8080"},
			&cli.StringFlag{Name: "api-key", Usage: "API key of the subscriber's environment, sealed (required)", Sources: cmdline.FromEnv("LOADTEST_API_KEY", getenv)},
			&cli.StringFlag{Name: "application", Usage: "the environment's applicationIdentifier, for the inbox session (required for filters)"},
			&cli.StringFlag{Name: "subscriber", Usage: "external id of the subscriber counted", Value: "user-1-00000"},
			&cli.StringFlag{Name: "other-key", Usage: "API key of another tenant, whose list latency is measured beside the bursts"},
			&cli.StringFlag{Name: "database-url", Usage: "mysql://root@127.0.0.1:3306/db of the server's database, to read Com_select (optional)"},
			&cli.IntFlag{Name: "server-pid", Usage: "process id of the server on this machine, for its CPU (optional)"},
			&cli.IntFlag{Name: "subscriptions", Usage: "messageCounts subscriptions of the subscriber", Value: 1000},
			&cli.IntFlag{Name: "per-socket", Usage: "subscriptions per WebSocket", Value: 40},
			&cli.IntFlag{Name: "changes", Usage: "marks made, one after the other", Value: 25},
			&cli.IntFlag{Name: "filters", Usage: "filters of one count request", Value: 30},
			&cli.DurationFlag{Name: "created-offset", Usage: "how far past the first of its month each filter's createdGte is (0: on the month's boundary)"},
			&cli.IntFlag{Name: "requests", Usage: "count requests sent one after the other", Value: 20},
			&cli.IntFlag{Name: "burst", Usage: "count requests sent at once", Value: 20},
			&cli.IntFlag{Name: "bursts", Usage: "bursts sent, one after the other", Value: 5},
			&cli.StringFlag{Name: "parts", Usage: "comma-separated parts to run: fanout, filters", Value: "fanout,filters"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			c, err := configFrom(cmd)
			if err != nil {
				return err
			}
			cmdline.PrintSettings(stderr, cmdline.Settings(cmd))
			return run(ctx, c, stdout)
		},
	}
}

func configFrom(cmd *cli.Command) (config, error) {
	c := config{baseURL: cmd.String("base-url"), apiKey: cmd.String("api-key"), application: cmd.String("application"),
		subscriber: cmd.String("subscriber"), otherKey: cmd.String("other-key"), databaseURL: cmd.String("database-url"),
		serverPID: cmd.Int("server-pid"), subscriptions: cmd.Int("subscriptions"), perSocket: cmd.Int("per-socket"),
		changes: cmd.Int("changes"), filters: cmd.Int("filters"), requests: cmd.Int("requests"), burst: cmd.Int("burst"),
		bursts: cmd.Int("bursts"), createdOffset: cmd.Duration("created-offset")}
	for _, part := range strings.Split(cmd.String("parts"), ",") {
		switch strings.TrimSpace(part) {
		case "fanout":
			c.fanout = true
		case "filters":
			c.filtered = true
		default:
			return c, cmdline.Usage(fmt.Errorf("--parts: unknown part %q (fanout, filters)", part))
		}
	}
	switch {
	case cmd.Args().Present():
		return c, cmdline.Usage(fmt.Errorf("unexpected arguments: %v", cmd.Args().Slice()))
	case c.apiKey == "":
		return c, cmdline.Usage(errors.New("--api-key is required"))
	case c.filtered && c.application == "":
		return c, cmdline.Usage(errors.New("--application is required for the filters part"))
	case c.subscriptions < 1 || c.perSocket < 1 || c.changes < 1 || c.filters < 1 || c.requests < 1 || c.burst < 1 || c.bursts < 0:
		return c, cmdline.Usage(errors.New("--subscriptions, --per-socket, --changes, --filters, --requests and --burst must be at least 1"))
	}
	if err := loopback.CheckURL(c.baseURL); err != nil {
		return c, cmdline.Usage(err)
	}
	return c, nil
}

func run(ctx context.Context, c config, stdout io.Writer) error {
	b := &bench{c: c, client: &http.Client{Timeout: 60 * time.Second}}
	if c.databaseURL != "" {
		db, err := serverdb.Open(ctx, c.databaseURL, 1)
		if err != nil {
			return err
		}
		defer db.Close()
		b.db = db
	}
	if c.fanout {
		if err := b.fanout(ctx, stdout); err != nil {
			return fmt.Errorf("fanout: %w", err)
		}
	}
	if c.filtered {
		if err := b.filtersPart(ctx, stdout); err != nil {
			return fmt.Errorf("filters: %w", err)
		}
	}
	return nil
}

// bench is one run's settings and connections.
type bench struct {
	c      config
	client *http.Client
	db     *sql.DB
	// otherFailed counts the other tenant's lists answered other than 200.
	otherFailed int
}

// comSelect is the database server's Com_select, or -1 without a database.
func (b *bench) comSelect(ctx context.Context) int64 {
	n := b.globalStatus(ctx, "Com_select")
	if n < 0 {
		return -1
	}
	return int64(n)
}

// globalStatus is one of the database server's global status values (MariaDB's
// Com_select, Query_time), or -1 without a database or without that value.
func (b *bench) globalStatus(ctx context.Context, name string) float64 {
	if b.db == nil {
		return -1
	}
	var got string
	var n float64
	if err := b.db.QueryRowContext(ctx, "SHOW GLOBAL STATUS LIKE ?", name).Scan(&got, &n); err != nil {
		return -1
	}
	return n
}

// statements is the server's db_statements_total.
func (b *bench) statements(ctx context.Context) (float64, error) {
	n, ok, err := b.metric(ctx, "db_statements_total")
	if err == nil && !ok {
		err = errors.New("/metrics has no db_statements_total")
	}
	return n, err
}

// metric is one value of the server's /metrics, and whether it has it.
func (b *bench) metric(ctx context.Context, name string) (float64, bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.c.baseURL+"/metrics", nil)
	if err != nil {
		return 0, false, err
	}
	res, err := b.client.Do(req)
	if err != nil {
		return 0, false, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return 0, false, err
	}
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			var n float64
			_, err := fmt.Sscan(v, &n)
			return n, err == nil, err
		}
	}
	return 0, false, nil
}

// graphql runs one operation over POST with the API key and decodes its data into out.
func (b *bench) graphql(ctx context.Context, query string, vars map[string]any, out any) error {
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.c.baseURL+"/graphql", strings.NewReader(string(body)))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "ApiKey "+b.c.apiKey)
	res, err := b.client.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	var r struct {
		Data   json.RawMessage `json:"data"`
		Errors []struct {
			Message string `json:"message"`
		} `json:"errors"`
	}
	if err := json.NewDecoder(res.Body).Decode(&r); err != nil {
		return fmt.Errorf("%s: %w", res.Status, err)
	}
	if len(r.Errors) > 0 {
		return fmt.Errorf("graphql: %s", r.Errors[0].Message)
	}
	return json.Unmarshal(r.Data, out)
}

// subscriberHash is the inbox session's proof: the hex HMAC-SHA256 of the subscriber's
// id keyed with an API key of its environment.
func subscriberHash(key, subscriberID string) string {
	mac := hmac.New(sha256.New, []byte(key))
	mac.Write([]byte(subscriberID))
	return hex.EncodeToString(mac.Sum(nil))
}
