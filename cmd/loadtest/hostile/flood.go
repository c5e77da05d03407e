package hostile

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"messages/cmd/loadtest/measure"
	"messages/graph/gqlclient"
)

// floodResult is what the one-socket flood did.
type floodResult struct {
	ran, refused, other  int64
	closed, redials      int64
	seconds              float64
	quiet, during        measure.Summary
	quietErrs, floodErrs int
}

// socketFlood measures the other tenant's latency alone, then while one socket of the
// attacking tenant runs queries as fast as the server answers them.
func (h *hostileRun) socketFlood(ctx context.Context) (floodResult, error) {
	var res floodResult
	quietCtx, cancel := context.WithTimeout(ctx, h.c.quiet)
	quiet, quietErrs := h.listOther(quietCtx)
	cancel()
	res.quiet, res.quietErrs = measure.Summarize(quiet), quietErrs

	floodCtx, cancelFlood := context.WithTimeout(ctx, h.c.floodFor)
	defer cancelFlood()
	var wg sync.WaitGroup
	start := time.Now()
	wg.Add(1)
	go func() {
		defer wg.Done()
		h.flood(floodCtx, &res)
	}()
	during, floodErrs := h.listOther(floodCtx)
	wg.Wait()
	res.seconds = time.Since(start).Seconds()
	res.during, res.floodErrs = measure.Summarize(during), floodErrs
	return res, nil
}

// listOther reads the other tenant's first page about 15 times a second (within its
// rate limit) until ctx ends, and returns the latencies of the pages it got and how many
// requests failed.
func (h *hostileRun) listOther(ctx context.Context) (measure.Latencies, int) {
	var l measure.Latencies
	errs := 0
	for ctx.Err() == nil {
		start := time.Now()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, h.c.baseURL+"/v1/messages?limit=10", nil)
		req.Header.Set("Authorization", "ApiKey "+h.c.otherKey)
		r, err := h.client.Do(req)
		if err != nil {
			if ctx.Err() == nil {
				errs++
			}
			continue
		}
		_, _ = io.Copy(io.Discard, r.Body)
		r.Body.Close()
		if r.StatusCode != http.StatusOK {
			errs++
			continue
		}
		l = append(l, time.Since(start))
		time.Sleep(50 * time.Millisecond)
	}
	return l, errs
}

// flood is the attacker until ctx ends: it keeps one socket open, sending queries from
// --flood-workers loops as fast as they are answered, and opens a new one whenever the
// server closes it.
func (h *hostileRun) flood(ctx context.Context, res *floodResult) {
	wsURL := "ws" + strings.TrimPrefix(h.c.baseURL, "http") + "/graphql"
	for ctx.Err() == nil {
		atomic.AddInt64(&res.redials, 1)
		conn, err := gqlclient.Dial(ctx, wsURL, nil, map[string]any{"Authorization": "ApiKey " + h.c.apiKey})
		if err != nil {
			atomic.AddInt64(&res.closed, 1)
			continue
		}
		var workers sync.WaitGroup
		for range h.c.floodWorkers {
			workers.Add(1)
			go func() {
				defer workers.Done()
				floodQueries(ctx, conn, res)
			}()
		}
		workers.Wait()
		_ = conn.Close()
		atomic.AddInt64(&res.closed, 1)
	}
}

// floodQueries runs queries on conn one after the other, counting how each ended, until
// ctx ends or the server closes the socket.
func floodQueries(ctx context.Context, conn *gqlclient.Conn, res *floodResult) {
	for ctx.Err() == nil {
		s, err := conn.Subscribe(ctx, gqlclient.Request{Query: `{ messages(limit: 10) { totalCount data { _id } } }`}, 2)
		if err != nil {
			return
		}
		ok := false
		for r := range s.Results() {
			ok = len(r.Errors) == 0
		}
		var refused *gqlclient.OperationError
		var closed *gqlclient.CloseError
		switch {
		case ok:
			atomic.AddInt64(&res.ran, 1)
		case errors.As(s.Err(), &refused) && len(refused.Errors) > 0 && refused.Errors[0].Code() == "RATE_LIMITED":
			atomic.AddInt64(&res.refused, 1)
		case errors.As(s.Err(), &closed):
			return
		default:
			atomic.AddInt64(&res.other, 1)
		}
	}
}
