package vitessbench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"messages/cmd/loadtest/api"
	"messages/cmd/loadtest/measure"
)

// What each shape sends to each shard, from vtgate's own counters: VttabletCall in its
// /debug/vars is a histogram per call, keyed operation.keyspace.shard.tablet_type
// (Execute.messages.-80.primary), whose count is the calls vtgate made to that tablet.
// The server's own background work (the live event poll, which reads every shard) is
// counted over an idle window first and taken out at its rate.

// shardedKeyspace is the keyspace whose shards hold the environments' rows.
const shardedKeyspace = "messages"

// shardCount is what one request of a shape on one environment sends to each shard.
type shardCount struct {
	Shape       string `json:"shape"`
	Environment string `json:"environment"`
	Requests    int    `json:"requests"`
	// Calls are vtgate's calls to each tablet per request, by "operation keyspace/shard"
	// (Execute messages/-80); Shards the same summed by shard.
	Calls  map[string]float64 `json:"callsPerRequest"`
	Shards map[string]float64 `json:"shardsPerRequest"`
	// Scatter is set when the request reached more than one shard of the sharded keyspace.
	Scatter bool `json:"scatter"`
}

// vtgateCalls reads vtgate's calls so far by "operation keyspace/shard".
func vtgateCalls(ctx context.Context, client *http.Client, varsURL string) (map[string]int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, varsURL, nil)
	if err != nil {
		return nil, err
	}
	body, err := api.Send(client, req, http.StatusOK, false)
	if err != nil {
		return nil, fmt.Errorf("vtgate's counters: %w", err)
	}
	return parseVars(body)
}

// parseVars reads VttabletCall's counts out of vtgate's /debug/vars.
func parseVars(body []byte) (map[string]int64, error) {
	var vars struct {
		VttabletCall struct {
			Histograms map[string]struct{ Count int64 }
		}
	}
	if err := json.Unmarshal(body, &vars); err != nil {
		return nil, fmt.Errorf("vtgate's counters: %w", err)
	}
	out := map[string]int64{}
	for key, h := range vars.VttabletCall.Histograms {
		parts := strings.Split(key, ".")
		if len(parts) != 4 {
			continue
		}
		out[parts[0]+" "+parts[1]+"/"+parts[2]] += h.Count
	}
	return out, nil
}

// perRequest turns the calls before and after n requests over elapsed, less the
// background's rate per second, into calls per request (those at or above 0.01 only).
func perRequest(before, after map[string]int64, background map[string]float64, elapsed time.Duration, n int) map[string]float64 {
	out := map[string]float64{}
	for key, v := range after {
		own := float64(v-before[key]) - background[key]*elapsed.Seconds()
		if r := measure.Round2(own / float64(n)); r >= 0.01 {
			out[key] = r
		}
	}
	return out
}

// byShard sums calls per request by "keyspace/shard".
func byShard(calls map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for key, v := range calls {
		_, shard, _ := strings.Cut(key, " ")
		out[shard] = measure.Round2(out[shard] + v)
	}
	return out
}

// scatters reports whether shards reached more than one shard of the sharded keyspace.
// A share under half a call per request is left out: a background read the idle window
// did not see.
func scatters(shards map[string]float64) bool {
	n := 0
	for shard, v := range shards {
		if strings.HasPrefix(shard, shardedKeyspace+"/") && v >= 0.5 {
			n++
		}
	}
	return n > 1
}

// countShards sends each shape countRequests times per environment, one at a time, to
// the Vitess side, after a few unmeasured, and reads vtgate's calls around them.
func countShards(ctx context.Context, client *http.Client, s *side, c config, log io.Writer) ([]shardCount, error) {
	idleFrom, err := vtgateCalls(ctx, client, c.varsURL)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	select {
	case <-time.After(3 * time.Second):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	idleTo, err := vtgateCalls(ctx, client, c.varsURL)
	if err != nil {
		return nil, err
	}
	background := map[string]float64{}
	for key, v := range idleTo {
		background[key] = float64(v-idleFrom[key]) / time.Since(start).Seconds()
	}
	fmt.Fprintf(log, "vtgate's calls per second with the Vitess server idle: %v\n", background)
	var out []shardCount
	for _, name := range c.shapes {
		sh := shapeByName(name)
		for _, e := range s.envs {
			send := func(i int64) error {
				req, err := sh.build(ctx, e, c.pageSize, i)
				if err != nil {
					return err
				}
				_, err = api.Send(client, req, sh.want, sh.graphql)
				return err
			}
			for i := range int64(5) {
				if err := send(1_000_000 + i); err != nil {
					return nil, fmt.Errorf("%s on %s: %w", name, e.env.ID, err)
				}
			}
			before, err := vtgateCalls(ctx, client, c.varsURL)
			if err != nil {
				return nil, err
			}
			start := time.Now()
			for i := range int64(c.countRequests) {
				if err := send(2_000_000 + i); err != nil {
					return nil, fmt.Errorf("%s on %s: %w", name, e.env.ID, err)
				}
			}
			elapsed := time.Since(start)
			after, err := vtgateCalls(ctx, client, c.varsURL)
			if err != nil {
				return nil, err
			}
			calls := perRequest(before, after, background, elapsed, c.countRequests)
			sc := shardCount{Shape: name, Environment: e.env.ID, Requests: c.countRequests, Calls: calls, Shards: byShard(calls)}
			sc.Scatter = scatters(sc.Shards)
			fmt.Fprintf(log, "statements: %-10s environment %s: %s\n", name, e.env.ID, formatCalls(calls))
			out = append(out, sc)
		}
	}
	return out, nil
}

// formatCalls writes calls per request in key order: "Execute messages/-80 2.00, ...".
func formatCalls(calls map[string]float64) string {
	keys := slices.Sorted(maps.Keys(calls))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %.2f", k, calls[k])
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}
