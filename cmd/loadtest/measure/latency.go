package measure

import (
	"math"
	"slices"
	"time"
)

// Latencies are the samples of one scenario. Every request's latency is kept (a run is
// bounded by its maximum number of requests), so percentiles are exact, not estimated.
type Latencies []time.Duration

// Summary is what a report says of a set of latencies.
type Summary struct {
	N                        int
	P50, P95, P99, Max, Mean time.Duration
}

// Summarize sorts the samples in place and reads the percentiles off them.
func Summarize(l Latencies) Summary {
	if len(l) == 0 {
		return Summary{}
	}
	slices.Sort(l)
	var total time.Duration
	for _, d := range l {
		total += d
	}
	return Summary{
		N:    len(l),
		P50:  Percentile(l, 50),
		P95:  Percentile(l, 95),
		P99:  Percentile(l, 99),
		Max:  l[len(l)-1],
		Mean: total / time.Duration(len(l)),
	}
}

// Percentile returns the p-th percentile of sorted samples by the nearest-rank method:
// the smallest sample such that at least p% of the samples are at or below it.
func Percentile(sorted Latencies, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	return sorted[min(max(rank, 1), len(sorted))-1]
}

// MS renders a duration in milliseconds with two decimals, for JSON and tables.
func MS(d time.Duration) float64 {
	return math.Round(float64(d)/float64(time.Millisecond)*100) / 100
}
