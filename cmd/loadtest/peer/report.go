package peer

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"messages/cmd/loadtest/measure"
	"messages/cmd/loadtest/report"
)

// peerReport is the outcome of `loadtest peer`: every measurement and their medians.
type peerReport struct {
	StartedAt   time.Time   `json:"startedAt"`
	Messages    int         `json:"messages,omitempty"`
	Depth       int         `json:"depth"`
	PageSize    int         `json:"pageSize"`
	Rounds      int         `json:"rounds"`
	Connections []int       `json:"connections"`
	Duration    string      `json:"duration"`
	Warmup      string      `json:"warmup"`
	Tables      []peerTable `json:"tables"`
	// RoundTrips are this server's database round trips per request of each shape, when
	// counted (roundtrips.go).
	RoundTrips []serverRoundTrips `json:"roundTrips,omitempty"`
	Samples    []peerSample       `json:"samples"`
}

// peerTable is the server against one peer.
type peerTable struct {
	Peer  string    `json:"peer"` // the peer's side in the samples: pg4, pg5
	Label string    `json:"label"`
	Rows  []peerRow `json:"rows"`
}

// peerSample is one measurement: a shape on one side at one connection count, one round.
// Latencies are in milliseconds.
type peerSample struct {
	Shape       string  `json:"shape"`
	Side        string  `json:"side"` // server, or a peer: pg4, pg5
	Connections int     `json:"connections"`
	Round       int     `json:"round"`
	Requests    int     `json:"requests"`
	Errors      int     `json:"errors"`
	FirstError  string  `json:"firstError,omitempty"`
	PerSecond   float64 `json:"perSecond"`
	P50         float64 `json:"p50Ms"`
	P95         float64 `json:"p95Ms"`
	// CPUMS is the side's CPU time per request (application and database processes), in
	// milliseconds; Statements its SQL statements per request. -1: not measured.
	CPUMS      float64 `json:"cpuMsPerRequest"`
	Statements float64 `json:"statementsPerRequest"`
}

// peerFigures are the medians over the rounds of one side at one connection count.
type peerFigures struct {
	Rounds    int     `json:"rounds"`
	Errors    int     `json:"errors"`
	PerSecond float64 `json:"perSecond"`
	P50       float64 `json:"p50Ms"`
	P95       float64 `json:"p95Ms"`
	// Medians of the samples' CPUMS and Statements; -1 when not measured.
	CPUMS      float64 `json:"cpuMsPerRequest"`
	Statements float64 `json:"statementsPerRequest"`
}

// peerCell is one shape at one connection count, both sides, and the server's figures
// over the peer's.
type peerCell struct {
	Connections  int          `json:"connections"`
	Server       *peerFigures `json:"server,omitempty"`
	Peer         *peerFigures `json:"peer,omitempty"`
	P50Ratio     float64      `json:"p50Ratio,omitempty"`     // server p50 / peer p50: under 1, the server is faster
	PerSecRatio  float64      `json:"perSecRatio,omitempty"`  // server req/s / peer req/s: over 1, the server is faster
	ServerSameAs string       `json:"serverSameAs,omitempty"` // the shape whose server figures these are
}

// peerRow is one shape of the table.
type peerRow struct {
	Shape string     `json:"shape"`
	About string     `json:"about"`
	Cells []peerCell `json:"cells"`
}

// peerRows combines the samples of the server and of the peer whose side is peer into
// the medians of each shape, side and connection count, in the order of shapes and
// connections. A shape without a server side takes the server figures of the shape it
// names.
func peerRows(shapes []string, connections []int, samples []peerSample, peer string) []peerRow {
	figures := func(shape, side string, conns int) *peerFigures {
		var p50, p95, rps, cpu, statements []float64
		errs := 0
		for _, s := range samples {
			if s.Shape != shape || s.Side != side || s.Connections != conns {
				continue
			}
			errs += s.Errors
			if s.Requests > s.Errors {
				p50, p95, rps = append(p50, s.P50), append(p95, s.P95), append(rps, s.PerSecond)
				cpu, statements = append(cpu, s.CPUMS), append(statements, s.Statements)
			}
		}
		if len(p50) == 0 && errs == 0 {
			return nil
		}
		return &peerFigures{Rounds: len(p50), Errors: errs, P50: measure.Median(p50), P95: measure.Median(p95), PerSecond: measure.Median(rps),
			CPUMS: measure.Median(cpu), Statements: measure.Median(statements)}
	}
	var out []peerRow
	for _, name := range shapes {
		shape := peerShapeByName(name)
		row := peerRow{Shape: name, About: shape.about}
		for _, conns := range connections {
			cell := peerCell{Connections: conns, Peer: figures(name, peer, conns)}
			serverShape := name
			if shape.server == nil {
				serverShape, cell.ServerSameAs = shape.serverAs, shape.serverAs
			}
			cell.Server = figures(serverShape, "server", conns)
			if cell.Server != nil && cell.Peer != nil {
				cell.P50Ratio = ratio(cell.Server.P50, cell.Peer.P50)
				cell.PerSecRatio = ratio(cell.Server.PerSecond, cell.Peer.PerSecond)
			}
			row.Cells = append(row.Cells, cell)
		}
		out = append(out, row)
	}
	return out
}

func ratio(a, b float64) float64 {
	if a <= 0 || b <= 0 {
		return 0
	}
	return measure.Round2(a / b)
}

// label names a shape as the table does, with the depth where the shape has one.
func (r *peerReport) label(row peerRow) string {
	return strings.ReplaceAll(row.About, "DEPTH", groupThousands(r.Depth))
}

// writeTable prints, for each peer, the summary (p50 at the fewest connections,
// requests/s at the most) and then every connection count in full.
func (r *peerReport) writeTable(w io.Writer) {
	fmt.Fprintf(w, "\nmedian of %d round(s), %s each after %s warmup; ratio = server / peer\n", r.Rounds, r.Duration, r.Warmup)
	for _, t := range r.Tables {
		r.writePeerTable(w, t)
	}
	for _, s := range r.Samples {
		if s.FirstError != "" {
			fmt.Fprintf(w, "first error of %s on the %s (%d conn, round %d): %s\n", s.Shape, s.Side, s.Connections, s.Round, report.Clip(s.FirstError, 300))
		}
	}
}

// writePeerTable prints the server against one peer.
func (r *peerReport) writePeerTable(w io.Writer, t peerTable) {
	lo, hi := r.Connections[0], r.Connections[len(r.Connections)-1]
	fmt.Fprintf(w, "\n=== this server and %s\n\n", t.Label)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "shape\tserver p50 @%d\tpeer p50 @%d\tratio\tserver req/s @%d\tpeer req/s @%d\tratio\t\n", lo, lo, hi, hi)
	for _, row := range t.Rows {
		a, b := row.Cells[0], row.Cells[len(row.Cells)-1]
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", r.label(row),
			fmtP50(a.Server), fmtP50(a.Peer), report.Ratio(a.P50Ratio),
			fmtRate(b.Server), fmtRate(b.Peer), report.Ratio(b.PerSecRatio))
	}
	_ = tw.Flush()
	for i, conns := range r.Connections {
		fmt.Fprintf(w, "\n%d connection(s)\n", conns)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "shape\tserver p50\tp95\treq/s\terrors\tCPU ms/req\tSQL/req\tpeer p50\tp95\treq/s\terrors\tCPU ms/req\t")
		for _, row := range t.Rows {
			c := row.Cells[i]
			fmt.Fprintf(tw, "%s\t%s%s\t%s%s\t\n", r.label(row), fmtFigures(c.Server), fmtCost(c.Server, true), fmtFigures(c.Peer), fmtCost(c.Peer, false))
		}
		_ = tw.Flush()
	}
}

func fmtP50(f *peerFigures) string {
	if f == nil || f.Rounds == 0 {
		return "-"
	}
	return report.MS(f.P50)
}

func fmtRate(f *peerFigures) string {
	if f == nil || f.Rounds == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f", f.PerSecond)
}

func fmtFigures(f *peerFigures) string {
	if f == nil {
		return "-\t-\t-\t-\t"
	}
	return fmt.Sprintf("%s\t%s\t%s\t%d\t", fmtP50(f), report.MS(f.P95), fmtRate(f), f.Errors)
}

// fmtCost writes CPU per request and, with statements, SQL statements per request.
func fmtCost(f *peerFigures, statements bool) string {
	cost := func(v float64) string {
		if f == nil || f.Rounds == 0 || v < 0 {
			return "-"
		}
		return fmt.Sprintf("%.2f", v)
	}
	var cpu float64 = -1
	var sql float64 = -1
	if f != nil {
		cpu, sql = f.CPUMS, f.Statements
	}
	if statements {
		return cost(cpu) + "\t" + cost(sql)
	}
	return cost(cpu)
}

// groupThousands writes n with thousands separated by commas: 500000 -> 500,000.
func groupThousands(n int) string {
	s := strconv.Itoa(n)
	if n < 0 {
		return "-" + groupThousands(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
