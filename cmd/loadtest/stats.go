package main

import (
	"math"
	"slices"
	"time"
)

// latencies are the samples of one scenario. Every request's latency is kept (the run is
// bounded by --max-requests), so percentiles are exact, not estimated.
type latencies []time.Duration

// summary is what the report says of a set of latencies.
type summary struct {
	n                        int
	p50, p95, p99, max, mean time.Duration
}

// summarize sorts the samples in place and reads the percentiles off them.
func summarize(l latencies) summary {
	if len(l) == 0 {
		return summary{}
	}
	slices.Sort(l)
	var total time.Duration
	for _, d := range l {
		total += d
	}
	return summary{
		n:    len(l),
		p50:  percentile(l, 50),
		p95:  percentile(l, 95),
		p99:  percentile(l, 99),
		max:  l[len(l)-1],
		mean: total / time.Duration(len(l)),
	}
}

// percentile returns the p-th percentile of sorted samples by the nearest-rank method:
// the smallest sample such that at least p% of the samples are at or below it.
func percentile(sorted latencies, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	return sorted[min(max(rank, 1), len(sorted))-1]
}

// ms renders a duration in milliseconds with two decimals, for JSON.
func ms(d time.Duration) float64 {
	return math.Round(float64(d)/float64(time.Millisecond)*100) / 100
}
