package vitessbench

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"messages/cmd/loadtest/measure"
	"messages/cmd/loadtest/report"
)

// vitessReport is the JSON of `loadtest vitess --json`.
type vitessReport struct {
	StartedAt    time.Time    `json:"startedAt"`
	Messages     int          `json:"messages,omitempty"`
	Environments []string     `json:"environments"`
	Depth        int          `json:"depth"`
	PageSize     int          `json:"pageSize"`
	Rounds       int          `json:"rounds"`
	Duration     string       `json:"duration"`
	Warmup       string       `json:"warmup"`
	Rows         []row        `json:"rows"`
	Shards       []shardCount `json:"shards"`
	Samples      []sample     `json:"samples"`
}

// row is one shape's medians on both sides, and its verdict.
type row struct {
	Shape string `json:"shape"`
	// P50 at 1 connection and requests/s at 4, by side.
	DirectP50 float64 `json:"directP50Ms"`
	VitessP50 float64 `json:"vitessP50Ms"`
	DirectRPS float64 `json:"directRequestsPerSecond"`
	VitessRPS float64 `json:"vitessRequestsPerSecond"`
	// Hop is the Vitess p50 less the direct one; P50Ratio and RPSRatio Vitess over direct.
	Hop      float64 `json:"hopMs"`
	P50Ratio float64 `json:"p50Ratio"`
	RPSRatio float64 `json:"requestsPerSecondRatio"`
	// Statements per request (the servers' db_statements_total), by side.
	DirectStatements float64 `json:"directStatementsPerRequest"`
	VitessStatements float64 `json:"vitessStatementsPerRequest"`
	// DeploymentCPU is the CPU milliseconds per request of vtgate and the tablets, at 4
	// connections (-1: not measured).
	DeploymentCPU float64 `json:"deploymentCpuMsPerRequest"`
	// Shards are vtgate's statements to each shard per request, one entry per environment
	// ("messages/-80 2.00").
	Shards []string `json:"shards"`
	// Defects: a p50 above twice the direct one, a scatter.
	Slow    bool `json:"slow"`
	Scatter bool `json:"scatter"`
	Errors  int  `json:"errors"`
}

// rows takes the medians of the samples per shape and side.
func rows(names []string, samples []sample, shards []shardCount) []row {
	median := func(shape, side string, conns int, f func(sample) float64) float64 {
		var v []float64
		for _, s := range samples {
			if s.Shape == shape && s.Side == side && s.Connections == conns {
				v = append(v, f(s))
			}
		}
		return measure.Median(v)
	}
	p50 := func(s sample) float64 { return s.P50 }
	rps := func(s sample) float64 { return s.PerSecond }
	sql := func(s sample) float64 { return s.Statements }
	cpu := func(s sample) float64 { return s.CPUMS }
	var out []row
	for _, name := range names {
		r := row{Shape: name,
			DirectP50: median(name, "direct", 1, p50), VitessP50: median(name, "vitess", 1, p50),
			DirectRPS: median(name, "direct", 4, rps), VitessRPS: median(name, "vitess", 4, rps),
			DirectStatements: median(name, "direct", 1, sql), VitessStatements: median(name, "vitess", 1, sql),
			DeploymentCPU: median(name, "vitess", 4, cpu)}
		r.Hop = measure.Round2(r.VitessP50 - r.DirectP50)
		if r.DirectP50 > 0 {
			r.P50Ratio = measure.Round2(r.VitessP50 / r.DirectP50)
		}
		if r.DirectRPS > 0 {
			r.RPSRatio = measure.Round2(r.VitessRPS / r.DirectRPS)
		}
		r.Slow = r.P50Ratio > 2
		for _, s := range samples {
			if s.Shape == name {
				r.Errors += s.Errors
			}
		}
		for _, sc := range shards {
			if sc.Shape != name {
				continue
			}
			r.Scatter = r.Scatter || sc.Scatter
			var parts []string
			for _, shard := range slices.Sorted(maps.Keys(sc.Shards)) {
				parts = append(parts, fmt.Sprintf("%s %.2f", shard, sc.Shards[shard]))
			}
			r.Shards = append(r.Shards, strings.Join(parts, ", "))
		}
		out = append(out, r)
	}
	return out
}

// writeTable prints the table of the rows and the defects.
func (r *vitessReport) writeTable(w io.Writer) {
	fmt.Fprintf(w, "\nthe same requests on MariaDB directly and through Vitess (vtgate, 2 shards), %s messages over %d environments;\n",
		count(r.Messages), len(r.Environments))
	fmt.Fprintf(w, "median of %d rounds of %s, page %d, cursor %d rows deep; p50 at 1 connection, req/s at 4\n\n", r.Rounds, r.Duration, r.PageSize, r.Depth)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "shape\tdirect p50\tVitess p50\thop\tratio\tdirect req/s\tVitess req/s\tratio\tSQL/req\tVitess CPU/req\tcalls per request by shard (one line per environment)\t")
	for _, x := range r.Rows {
		shards := strings.Join(x.Shards, " | ")
		fmt.Fprintf(tw, "%s\t%s\t%s\t%+.2f ms\t%s\t%.0f\t%.0f\t%s\t%.2f / %.2f\t%s\t%s\t\n", x.Shape, report.MS(x.DirectP50), report.MS(x.VitessP50),
			x.Hop, report.Ratio(x.P50Ratio), x.DirectRPS, x.VitessRPS, report.Ratio(x.RPSRatio), x.DirectStatements, x.VitessStatements,
			report.MS(x.DeploymentCPU), shards)
	}
	_ = tw.Flush()
	for _, x := range r.Rows {
		if x.Slow {
			fmt.Fprintf(w, "DEFECT: %s is %.2fx its direct p50 on Vitess (above 2x)\n", x.Shape, x.P50Ratio)
		}
		if x.Scatter {
			fmt.Fprintf(w, "DEFECT: %s reaches more than one shard of %s for one environment's request\n", x.Shape, shardedKeyspace)
		}
	}
}

// count writes n with thousands separators; "?" for none.
func count(n int) string {
	if n <= 0 {
		return "?"
	}
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
