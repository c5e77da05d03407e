package peer

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"time"

	"messages/cmd/loadtest/api"
	"messages/cmd/loadtest/loopback"
	"messages/cmd/loadtest/measure"
	"messages/cmd/loadtest/report"
)

// runPeer finds what the shapes need, measures them and writes the report.
func runPeer(ctx context.Context, c peerConfig, stdout, log io.Writer) error {
	client := loopback.NewHTTPClient(slices.Max(c.connections), c.requestTimeout, false)
	t := c.target
	setupCtx, cancel := context.WithTimeout(ctx, c.setupTimeout)
	err := preparePeer(setupCtx, client, &t, c, log)
	cancel()
	if err != nil {
		return err
	}
	var roundTrips []serverRoundTrips
	if c.countedServerURL != "" {
		if roundTrips, err = countRoundTrips(ctx, client, t, c, 200); err != nil {
			return err
		}
		writeRoundTrips(log, roundTrips)
	}
	rep := &peerReport{RoundTrips: roundTrips,
		StartedAt: time.Now().UTC(), Messages: c.messages, Depth: t.depth, PageSize: t.pageSize,
		Rounds: c.rounds, Connections: c.connections, Duration: c.duration.String(), Warmup: c.warmup.String(),
	}
	sides := []string{"server"}
	for _, p := range t.peers {
		sides = append(sides, p.side)
	}
	for _, conns := range c.connections {
		for round := 1; round <= c.rounds; round++ {
			for _, name := range c.shapes {
				order := slices.Clone(sides)
				if round%2 == 0 {
					slices.Reverse(order)
				}
				for _, side := range order {
					s, ok, err := measureSide(ctx, client, &t, c, peerSample{Shape: name, Side: side, Connections: conns, Round: round})
					if err != nil {
						return err
					}
					if !ok {
						continue
					}
					rep.Samples = append(rep.Samples, s)
					fmt.Fprintf(log, "%d conn, round %d: %-16s %-6s p50 %s, %.1f req/s, %d errors, CPU %.2f ms/req, SQL %.2f/req\n",
						conns, round, name, side, report.MS(s.P50), s.PerSecond, s.Errors, s.CPUMS, s.Statements)
				}
			}
		}
	}
	for _, p := range t.peers {
		rep.Tables = append(rep.Tables, peerTable{Peer: p.side, Label: p.label, Rows: peerRows(c.shapes, c.connections, rep.Samples, p.side)})
	}
	rep.writeTable(stdout)
	writeRoundTrips(stdout, rep.RoundTrips)
	if c.jsonPath != "" {
		return report.WriteJSON(c.jsonPath, rep)
	}
	return nil
}

// measureSide measures one shape on one side at one connection count, as at names them,
// after a warmup, with the side's costs read around it, and returns at with its figures;
// false when the shape has no such side (inbox-rls on the server, or on a peer without
// an RLS endpoint).
func measureSide(ctx context.Context, client *http.Client, t *peerTarget, c peerConfig, at peerSample) (peerSample, bool, error) {
	shape := peerShapeByName(at.Shape)
	build := shape.server
	probe := c.costs[at.Side]
	if at.Side != "server" {
		p := t.peer(at.Side)
		build = func(t *peerTarget, i int64) gqlCall { return shape.peer(t, p, i) }
		if at.Shape == "inbox-rls" {
			if p.rlsURL == "" {
				return at, false, nil
			}
			probe = c.costs[at.Side+"-rls"]
		}
	}
	if build == nil {
		return at, false, nil
	}
	op := func(ctx context.Context, i int64) error {
		_, err := post(ctx, client, build(t, i))
		return err
	}
	run := measure.Limits{Concurrency: at.Connections, Duration: c.duration, MaxRequests: c.maxRequests, RequestTimeout: c.requestTimeout}
	if c.warmup > 0 {
		warm := run
		warm.Duration = c.warmup
		measure.Run(ctx, op, warm)
	}
	before, err := probe.read(ctx, client)
	if err != nil {
		return at, false, fmt.Errorf("costs before %s on the %s: %w", at.Shape, at.Side, err)
	}
	m := measure.Run(ctx, op, run)
	if ctx.Err() != nil {
		return at, false, ctx.Err()
	}
	after, err := probe.read(ctx, client)
	if err != nil {
		return at, false, fmt.Errorf("costs after %s on the %s: %w", at.Shape, at.Side, err)
	}
	at.CPUMS, at.Statements = probe.perRequest(before, after, m.Requests)
	at.Requests, at.Errors, at.FirstError = m.Requests, m.Errors, m.FirstError
	at.PerSecond, at.P50, at.P95 = measure.Round2(m.PerSecond()), measure.MS(m.Latencies.P50), measure.MS(m.Latencies.P95)
	return at, true, nil
}

// gqlResponse is the part of a GraphQL response the driver checks.
type gqlResponse struct {
	Data   json.RawMessage `json:"data"`
	Errors json.RawMessage `json:"errors"`
}

// post sends a GraphQL call and returns its data. A status other than 200, errors in
// the response or no data is an error.
func post(ctx context.Context, client *http.Client, call gqlCall) (json.RawMessage, error) {
	body, err := json.Marshal(api.GraphQLBody{Query: call.query, Variables: call.vars})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, call.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	for k, v := range call.header {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("read body: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("POST %s: status %d: %s", call.url, resp.StatusCode, api.Clip(b))
	}
	var r gqlResponse
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("POST %s: %w: %s", call.url, err, api.Clip(b))
	}
	if len(r.Errors) > 0 && string(r.Errors) != "null" {
		return nil, fmt.Errorf("POST %s: GraphQL errors: %s", call.url, api.Clip(r.Errors))
	}
	if len(r.Data) == 0 || string(r.Data) == "null" {
		return nil, fmt.Errorf("POST %s: no data: %s", call.url, api.Clip(b))
	}
	return r.Data, nil
}
