package main

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// operation is one request of a scenario: the i-th, counting from 0 across workers. It
// returns nil on success.
type operation func(ctx context.Context, i int64) error

// limits bound one measured run.
type limits struct {
	concurrency    int
	duration       time.Duration
	maxRequests    int
	requestTimeout time.Duration
}

// measurement is what one run of an operation observed.
type measurement struct {
	requests   int
	errors     int
	firstError string
	elapsed    time.Duration
	latencies  summary
}

// measure runs op with l.concurrency workers until l.duration has passed or
// l.maxRequests have been started, whichever comes first; requests in flight at the
// deadline finish (each bounded by l.requestTimeout) and count. Failed requests count as
// errors and their latencies are left out of the percentiles.
func measure(ctx context.Context, op operation, l limits) measurement {
	var (
		started  atomic.Int64
		mu       sync.Mutex
		all      latencies
		errs     int
		firstErr string
		wg       sync.WaitGroup
	)
	begin := time.Now()
	deadline := begin.Add(l.duration)
	for range l.concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			own := make(latencies, 0, 1024)
			ownErrs, ownFirst := 0, ""
			for ctx.Err() == nil && time.Now().Before(deadline) {
				i := started.Add(1) - 1
				if i >= int64(l.maxRequests) {
					break
				}
				rctx, cancel := context.WithTimeout(ctx, l.requestTimeout)
				t0 := time.Now()
				err := op(rctx, i)
				d := time.Since(t0)
				cancel()
				if err != nil {
					if ownErrs == 0 {
						ownFirst = err.Error()
					}
					ownErrs++
					continue
				}
				own = append(own, d)
			}
			mu.Lock()
			all = append(all, own...)
			errs += ownErrs
			if firstErr == "" {
				firstErr = ownFirst
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	return measurement{
		requests:   len(all) + errs,
		errors:     errs,
		firstError: firstErr,
		elapsed:    time.Since(begin),
		latencies:  summarize(all),
	}
}

// perSecond is the throughput of a measurement.
func (m measurement) perSecond() float64 {
	if m.elapsed <= 0 {
		return 0
	}
	return float64(m.requests) / m.elapsed.Seconds()
}
