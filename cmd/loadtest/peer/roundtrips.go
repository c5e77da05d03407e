package peer

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"text/tabwriter"
	"time"

	"messages/cmd/loadtest/measure"
)

// What each shape costs this server in database round trips, counted on a second
// instance of it (same database, same build) whose MariaDB connections pass through
// `loadtest events proxy`: the relay adds a hop to every round trip, so the instance the
// tables time never goes through it. The instance's own background work (the live event
// poll, which runs whether or not anyone subscribes) is counted over an idle window
// first and taken out at its rate over each shape's requests.

// serverRoundTrips are one shape's commands to MariaDB per request: Commands are round
// trips (a text of several statements is one), Queries the texts among them.
type serverRoundTrips struct {
	Shape      string  `json:"shape"`
	Requests   int     `json:"requests"`
	RoundTrips float64 `json:"roundTripsPerRequest"`
	// Background is the idle instance's commands per second, taken out of RoundTrips.
	Background float64 `json:"backgroundPerSecond"`
}

// proxyCounts is the part of the proxy's stats this reads.
type proxyCounts struct {
	Commands int64 `json:"commands"`
}

// countRoundTrips sends each shape with a server side n times, one at a time, to the
// counted instance at countedURL, after a few unmeasured, and reads the proxy's commands
// around them.
func countRoundTrips(ctx context.Context, client *http.Client, t peerTarget, c peerConfig, n int) ([]serverRoundTrips, error) {
	t.serverURL = c.countedServerURL
	idle, err := readProxy(ctx, client, c.proxyStatsURL)
	if err != nil {
		return nil, err
	}
	idleStart := time.Now()
	if !sleepCtx(ctx, 3*time.Second) {
		return nil, ctx.Err()
	}
	idleEnd, err := readProxy(ctx, client, c.proxyStatsURL)
	if err != nil {
		return nil, err
	}
	background := float64(idleEnd.Commands-idle.Commands) / time.Since(idleStart).Seconds()
	var out []serverRoundTrips
	for _, name := range c.shapes {
		shape := peerShapeByName(name)
		if shape.server == nil {
			continue
		}
		for i := range int64(20) {
			if _, err := post(ctx, client, shape.server(&t, i)); err != nil {
				return nil, fmt.Errorf("%s on the counted server: %w", name, err)
			}
		}
		before, err := readProxy(ctx, client, c.proxyStatsURL)
		if err != nil {
			return nil, err
		}
		start := time.Now()
		for i := range int64(n) {
			if _, err := post(ctx, client, shape.server(&t, 20+i)); err != nil {
				return nil, fmt.Errorf("%s on the counted server: %w", name, err)
			}
		}
		after, err := readProxy(ctx, client, c.proxyStatsURL)
		if err != nil {
			return nil, err
		}
		own := float64(after.Commands-before.Commands) - background*time.Since(start).Seconds()
		out = append(out, serverRoundTrips{Shape: name, Requests: n, RoundTrips: measure.Round2(max(own, 0) / float64(n)),
			Background: measure.Round2(background)})
	}
	return out, nil
}

// sleepCtx waits d, or reports false when ctx ends first.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

func readProxy(ctx context.Context, client *http.Client, url string) (proxyCounts, error) {
	var p proxyCounts
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return p, err
	}
	res, err := client.Do(req)
	if err != nil {
		return p, fmt.Errorf("the counting proxy: %w", err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return p, fmt.Errorf("GET %s: status %d", url, res.StatusCode)
	}
	return p, json.NewDecoder(res.Body).Decode(&p)
}

// writeRoundTrips prints the counted round trips per shape.
func writeRoundTrips(w io.Writer, rts []serverRoundTrips) {
	if len(rts) == 0 {
		return
	}
	fmt.Fprintf(w, "\nthis server's MariaDB round trips per request (a second instance through the counting proxy, %d requests a shape, one at a time;\nits idle background, %.2f commands/s, taken out)\n\n", rts[0].Requests, rts[0].Background)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "shape\tround trips/req\t")
	for _, r := range rts {
		fmt.Fprintf(tw, "%s\t%.2f\t\n", r.Shape, r.RoundTrips)
	}
	_ = tw.Flush()
}
