// Package measure takes the load generator's measurements: an operation run by
// concurrent workers for a time, its latencies and their exact percentiles, the medians
// of repeated runs, and a server process's resident memory and CPU time read from /proc.
package measure

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Operation is one request of a scenario: the i-th, counting from 0 across workers. It
// returns nil on success.
type Operation func(ctx context.Context, i int64) error

// Limits bound one measured run.
type Limits struct {
	Concurrency    int
	Duration       time.Duration
	MaxRequests    int
	RequestTimeout time.Duration
}

// Measurement is what one run of an operation observed.
type Measurement struct {
	Requests   int
	Errors     int
	FirstError string
	Elapsed    time.Duration
	Latencies  Summary
}

// Run runs op with l.Concurrency workers until l.Duration has passed or l.MaxRequests
// have been started, whichever comes first; requests in flight at the deadline finish
// (each bounded by l.RequestTimeout) and count. Failed requests count as errors and
// their latencies are left out of the percentiles.
func Run(ctx context.Context, op Operation, l Limits) Measurement {
	var (
		started  atomic.Int64
		mu       sync.Mutex
		all      Latencies
		errs     int
		firstErr string
		wg       sync.WaitGroup
	)
	begin := time.Now()
	deadline := begin.Add(l.Duration)
	for range l.Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			own := make(Latencies, 0, 1024)
			ownErrs, ownFirst := 0, ""
			for ctx.Err() == nil && time.Now().Before(deadline) {
				i := started.Add(1) - 1
				if i >= int64(l.MaxRequests) {
					break
				}
				rctx, cancel := context.WithTimeout(ctx, l.RequestTimeout)
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
	return Measurement{
		Requests:   len(all) + errs,
		Errors:     errs,
		FirstError: firstErr,
		Elapsed:    time.Since(begin),
		Latencies:  Summarize(all),
	}
}

// PerSecond is the throughput of a measurement.
func (m Measurement) PerSecond() float64 {
	if m.Elapsed <= 0 {
		return 0
	}
	return float64(m.Requests) / m.Elapsed.Seconds()
}
