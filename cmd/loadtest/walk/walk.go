// Package walk is the export walk (`loadtest walk`): how the legacy SDK scripts export
// everything, GET /v1/messages?page=0,1,2,...&limit=100 one page after the other until
// hasMore is false. It times the whole walk and every page, and checks that every
// message came exactly once and in the API's order.
package walk

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"messages/cmd/loadtest/api"
	"messages/cmd/loadtest/cmdline"
	"messages/cmd/loadtest/loopback"
	"messages/cmd/loadtest/measure"
	"messages/cmd/loadtest/report"

	"github.com/urfave/cli/v3"
)

// walkConfig is the command line of `loadtest walk`.
type walkConfig struct {
	baseURL        string
	apiKey         string
	limit          int
	maxPages       int
	timeout        time.Duration
	requestTimeout time.Duration
	serverPID      int
	gzip           bool
	jsonPath       string
}

// Command is `loadtest walk`.
func Command(getenv func(string) string, stdout, stderr io.Writer) *cli.Command {
	return &cli.Command{
		Name:  "walk",
		Usage: "export every message as legacy SDK scripts do: GET /v1/messages page 0, 1, 2, ... until hasMore is false",
		Description: `One client, one page at a time. Reports the total time, pages/s, the page latencies
(the slowest page, and the mean by tenth of the walk, which shows how a page's cost grows
with its depth) and checks that every message id came exactly once, in the API's order
(createdAt descending, then _id descending), and that their number is the first page's
totalCount. Exits 1 when the walk stops short (--max-pages, --timeout, a failed request)
or the check fails; the report is written either way.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "base-url", Usage: "server to walk; loopback only", Value: "http://127.0.0.1:8080"},
			&cli.StringFlag{Name: "api-key", Usage: "API key of the environment to export (required)", Sources: cmdline.FromEnv("LOADTEST_API_KEY", getenv)},
			&cli.IntFlag{Name: "limit", Usage: "page size", Value: 100},
			&cli.IntFlag{Name: "max-pages", Usage: "most pages read; the walk stops short there", Value: 20_000},
			&cli.DurationFlag{Name: "timeout", Usage: "longest the whole walk may take; it stops short there", Value: 10 * time.Minute},
			&cli.DurationFlag{Name: "request-timeout", Usage: "deadline of one page", Value: 60 * time.Second},
			&cli.IntFlag{Name: "server-pid", Usage: "process id of the server on this machine: report its peak RSS during the walk"},
			&cli.BoolFlag{Name: "gzip", Usage: "ask for gzip responses"},
			&cli.StringFlag{Name: "json", Usage: "also write the report as JSON to this file"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			c, err := walkConfigFrom(cmd)
			if err != nil {
				return err
			}
			cmdline.PrintSettings(stderr, cmdline.Settings(cmd))
			return runWalk(ctx, c, stdout, stderr)
		},
	}
}

// walkConfigFrom reads and checks the flags of `loadtest walk`.
func walkConfigFrom(cmd *cli.Command) (walkConfig, error) {
	if cmd.Args().Present() {
		return walkConfig{}, cmdline.Usage(fmt.Errorf("unexpected arguments: %v (see %s --help)", cmd.Args().Slice(), cmd.FullName()))
	}
	c := walkConfig{
		baseURL: cmd.String("base-url"), apiKey: cmd.String("api-key"), limit: cmd.Int("limit"),
		maxPages: cmd.Int("max-pages"), timeout: cmd.Duration("timeout"), requestTimeout: cmd.Duration("request-timeout"),
		serverPID: cmd.Int("server-pid"), gzip: cmd.Bool("gzip"), jsonPath: cmd.String("json"),
	}
	if err := loopback.CheckURL(c.baseURL); err != nil {
		return c, cmdline.Usage(fmt.Errorf("--base-url: %w", err))
	}
	switch {
	case c.apiKey == "":
		return c, cmdline.Usage(errors.New("--api-key (or LOADTEST_API_KEY) is required"))
	case c.limit < 1 || c.limit > 1000:
		return c, cmdline.Usage(errors.New("--limit must be from 1 to 1000"))
	case c.maxPages < 1 || c.maxPages > 10_000_000:
		return c, cmdline.Usage(errors.New("--max-pages must be from 1 to 10,000,000"))
	case c.timeout <= 0 || c.requestTimeout <= 0:
		return c, cmdline.Usage(errors.New("--timeout and --request-timeout must be positive"))
	}
	return c, nil
}

// walkPage is what the walk reads of a page.
type walkPage struct {
	TotalCount int  `json:"totalCount"`
	HasMore    bool `json:"hasMore"`
	Data       []struct {
		ID        string `json:"_id"`
		CreatedAt string `json:"createdAt"`
	} `json:"data"`
}

// runWalk walks the pages, checks them as they come and reports.
func runWalk(ctx context.Context, c walkConfig, stdout, log io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	client := loopback.NewHTTPClient(1, c.requestTimeout, c.gzip)
	defer client.CloseIdleConnections()
	var sampler *measure.RSSSampler
	if c.serverPID > 0 {
		var err error
		if sampler, err = measure.StartRSSSampler(c.serverPID, 50*time.Millisecond); err != nil {
			return err
		}
	}
	rep := &walkReport{StartedAt: time.Now().UTC().Truncate(time.Second), BaseURL: c.baseURL, Limit: c.limit}
	check := newWalkCheck(c.limit)
	var pageTimes measure.Latencies
	fmt.Fprintf(log, "walking GET /v1/messages, %d a page, up to %d pages\n", c.limit, c.maxPages)
	begin := time.Now()
	for page := 0; ; page++ {
		if page == c.maxPages {
			rep.StoppedShort = fmt.Sprintf("--max-pages %d reached with more pages to read", c.maxPages)
			break
		}
		t0 := time.Now()
		p, err := fetchWalkPage(ctx, client, c, page)
		if err != nil {
			rep.StoppedShort = fmt.Sprintf("page %d: %v", page, err)
			if ctx.Err() != nil {
				rep.StoppedShort = fmt.Sprintf("--timeout %s reached at page %d", c.timeout, page)
			}
			break
		}
		d := time.Since(t0)
		pageTimes = append(pageTimes, d)
		check.page(page, p)
		if page > 0 && page%1000 == 0 {
			fmt.Fprintf(log, "page %d: %d messages so far, %s\n", page, check.messages, time.Since(begin).Round(time.Second))
		}
		if !p.HasMore {
			break
		}
	}
	rep.finish(time.Since(begin), pageTimes, check)
	if sampler != nil {
		peak := sampler.TakePeak()
		st, err := sampler.Stop()
		if err != nil {
			fmt.Fprintf(log, "server memory: %v\n", err)
		}
		rep.Server = &measure.ServerMemory{PID: c.serverPID, PeakRSSMB: measure.Round2(float64(peak) / 1024), HWMMB: measure.Round2(float64(st.HWMKB) / 1024)}
	}
	rep.writeText(stdout)
	if c.jsonPath != "" {
		if err := report.WriteJSON(c.jsonPath, rep); err != nil {
			return err
		}
	}
	if msg := rep.failure(); msg != "" {
		return errors.New(msg)
	}
	return nil
}

// fetchWalkPage reads one page.
func fetchWalkPage(ctx context.Context, client *http.Client, c walkConfig, page int) (*walkPage, error) {
	s := api.Server{BaseURL: c.baseURL, APIKey: c.apiKey}
	var p walkPage
	if err := s.ListInto(ctx, client, url.Values{"page": {strconv.Itoa(page)}, "limit": {strconv.Itoa(c.limit)}}, &p); err != nil {
		return nil, err
	}
	return &p, nil
}
