package walk

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"messages/cmd/loadtest/measure"
	"messages/cmd/loadtest/report"
)

// walkReport is the outcome of a walk; latencies are in milliseconds.
type walkReport struct {
	StartedAt time.Time `json:"startedAt"`
	BaseURL   string    `json:"baseUrl"`
	Limit     int       `json:"limit"`
	// Complete says the last page read said hasMore: false; StoppedShort why it did not.
	Complete     bool   `json:"complete"`
	StoppedShort string `json:"stoppedShort,omitempty"`
	Pages        int    `json:"pages"`
	Messages     int    `json:"messages"`
	DistinctIDs  int    `json:"distinctIds"`
	// TotalCount is the first page's totalCount.
	TotalCount        int     `json:"totalCount"`
	Seconds           float64 `json:"seconds"`
	PagesPerSecond    float64 `json:"pagesPerSecond"`
	MessagesPerSecond float64 `json:"messagesPerSecond"`
	P50               float64 `json:"p50Ms"`
	P95               float64 `json:"p95Ms"`
	P99               float64 `json:"p99Ms"`
	Mean              float64 `json:"meanMs"`
	SlowestPage       int     `json:"slowestPage"`
	SlowestPageMs     float64 `json:"slowestPageMs"`
	FirstPageMs       float64 `json:"firstPageMs"`
	LastPageMs        float64 `json:"lastPageMs"`
	// ByTenth is the mean page latency of each tenth of the walk, in page order.
	ByTenth []walkStretch `json:"byTenth,omitempty"`
	// The check: Missing is totalCount less the distinct ids, Extra the other way round.
	Duplicates        int                   `json:"duplicates"`
	Missing           int                   `json:"missing"`
	Extra             int                   `json:"extra"`
	OutOfOrder        int                   `json:"outOfOrder"`
	BadTimestamps     int                   `json:"badTimestamps"`
	ShortPages        []int                 `json:"shortPages,omitempty"`
	TotalCountChanged int                   `json:"totalCountChanged"`
	Problems          []string              `json:"problems,omitempty"`
	Server            *measure.ServerMemory `json:"server,omitempty"`
}

// walkStretch is the mean page latency over pages [FromPage, ToPage].
type walkStretch struct {
	FromPage int     `json:"fromPage"`
	ToPage   int     `json:"toPage"`
	MeanMs   float64 `json:"meanMs"`
}

// finish fills the report from the walk's page latencies (in page order) and its check.
func (r *walkReport) finish(elapsed time.Duration, pageTimes measure.Latencies, c *walkCheck) {
	r.Pages, r.Messages, r.DistinctIDs, r.TotalCount = len(pageTimes), c.messages, len(c.seen), c.totalCount
	r.Complete = c.complete && r.StoppedShort == ""
	r.Seconds = measure.Round2(elapsed.Seconds())
	if elapsed > 0 {
		r.PagesPerSecond = measure.Round2(float64(len(pageTimes)) / elapsed.Seconds())
		r.MessagesPerSecond = measure.Round2(float64(c.messages) / elapsed.Seconds())
	}
	if len(pageTimes) > 0 {
		r.FirstPageMs, r.LastPageMs = measure.MS(pageTimes[0]), measure.MS(pageTimes[len(pageTimes)-1])
		slowest := 0
		for i, d := range pageTimes {
			if d > pageTimes[slowest] {
				slowest = i
			}
		}
		r.SlowestPage, r.SlowestPageMs = slowest, measure.MS(pageTimes[slowest])
		for tenth := range 10 {
			from, to := tenth*len(pageTimes)/10, (tenth+1)*len(pageTimes)/10
			if from == to {
				continue
			}
			var sum time.Duration
			for _, d := range pageTimes[from:to] {
				sum += d
			}
			r.ByTenth = append(r.ByTenth, walkStretch{FromPage: from, ToPage: to - 1, MeanMs: measure.MS(sum / time.Duration(to-from))})
		}
		s := measure.Summarize(slices.Clone(pageTimes))
		r.P50, r.P95, r.P99, r.Mean = measure.MS(s.P50), measure.MS(s.P95), measure.MS(s.P99), measure.MS(s.Mean)
	}
	r.Duplicates, r.OutOfOrder, r.BadTimestamps, r.ShortPages = c.duplicates, c.outOfOrder, c.badTimestamps, c.shortPages
	r.TotalCountChanged, r.Problems = c.totalCountChanged, c.examples
	if r.Complete {
		// Only a whole walk can be missing anything.
		r.Missing, r.Extra = max(0, c.totalCount-len(c.seen)), max(0, len(c.seen)-c.totalCount)
	}
}

// failure says why the walk failed, or "" when it did not.
func (r *walkReport) failure() string {
	var why []string
	if r.StoppedShort != "" {
		why = append(why, "stopped short: "+r.StoppedShort)
	} else if !r.Complete {
		why = append(why, "no page said hasMore: false")
	}
	for _, p := range []struct {
		n    int
		what string
	}{{r.Duplicates, "duplicate"}, {r.Missing, "missing"}, {r.Extra, "unexpected (beyond totalCount)"},
		{r.OutOfOrder, "out of order"}, {r.BadTimestamps, "with an unreadable createdAt"}, {len(r.ShortPages), "short page(s)"}} {
		if p.n > 0 {
			why = append(why, fmt.Sprintf("%d %s", p.n, p.what))
		}
	}
	if len(why) == 0 {
		return ""
	}
	if r.TotalCountChanged > 0 {
		why = append(why, fmt.Sprintf("(totalCount changed on %d pages: the data changed during the walk)", r.TotalCountChanged))
	}
	return "walk: " + strings.Join(why, "; ")
}

// writeText writes the report for people.
func (r *walkReport) writeText(w io.Writer) {
	state := "complete"
	if !r.Complete {
		state = "STOPPED SHORT: " + r.StoppedShort
	}
	fmt.Fprintf(w, "walk of GET /v1/messages, %d a page: %s\n", r.Limit, state)
	fmt.Fprintf(w, "  %d pages, %d messages (%d distinct ids, first totalCount %d) in %.2f s: %.1f pages/s, %.0f messages/s\n",
		r.Pages, r.Messages, r.DistinctIDs, r.TotalCount, r.Seconds, r.PagesPerSecond, r.MessagesPerSecond)
	fmt.Fprintf(w, "  page latency p50 %.2f ms, p95 %.2f ms, p99 %.2f ms, mean %.2f ms; first %.2f ms, last %.2f ms, slowest page %d: %.2f ms\n",
		r.P50, r.P95, r.P99, r.Mean, r.FirstPageMs, r.LastPageMs, r.SlowestPage, r.SlowestPageMs)
	if len(r.ByTenth) > 0 {
		fmt.Fprint(w, "  mean by tenth of the walk:")
		for _, s := range r.ByTenth {
			fmt.Fprintf(w, " %.1f", s.MeanMs)
		}
		fmt.Fprintln(w, " ms")
	}
	fmt.Fprintf(w, "  check: %d duplicates, %d missing, %d extra, %d out of order, %d bad createdAt, %d short pages, totalCount changed on %d pages\n",
		r.Duplicates, r.Missing, r.Extra, r.OutOfOrder, r.BadTimestamps, len(r.ShortPages), r.TotalCountChanged)
	for _, p := range r.Problems {
		fmt.Fprintf(w, "    %s\n", p)
	}
	if r.Server != nil {
		fmt.Fprintf(w, "  server pid %d: peak RSS during the walk %s, VmHWM %s\n", r.Server.PID, report.MB(r.Server.PeakRSSMB), report.MB(r.Server.HWMMB))
	}
}
