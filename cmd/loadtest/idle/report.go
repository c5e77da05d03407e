package idle

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

// The targets of this server's idle sockets: 10,000 under 200 MB and under 2% of a core
// with keep-alive pings on, under 20 KB a socket at any count. CPU is judged up to
// 10,000 sockets: the pings, and their cost, grow with the sockets (on both servers), so
// above that it is reported beside the reference's, not held to a fixed share.
const (
	targetRSSMBAt10k    = 200
	targetKBPerSocket   = 20
	targetCPUPercent    = 2
	targetRSSSocketsAt  = 10_000
	referenceGoroutines = "-" // Node has one event loop, no goroutines
)

// idleReport is the outcome of `loadtest idle`: one row a side and socket count.
type idleReport struct {
	StartedAt time.Time `json:"startedAt"`
	Ping      string    `json:"serverPing"`
	Settle    string    `json:"settle"`
	Window    string    `json:"window"`
	Rows      []idleRow `json:"rows"`
}

// idleRow is one server with a number of idle sockets open.
type idleRow struct {
	Side        string  `json:"side"` // server or reference
	Sockets     int     `json:"sockets"`
	Opened      int     `json:"opened"`
	OpenSeconds float64 `json:"openSeconds"`
	// OpenAtEnd are the subscriptions still open after the window (keep-alive pings
	// answered, nothing dropped); Received those that got anything, which none should.
	OpenAtEnd   int     `json:"openAtEnd"`
	Received    int     `json:"received"`
	RSSBeforeMB float64 `json:"rssBeforeMB"`
	RSSMB       float64 `json:"rssMB"`
	KBPerSocket float64 `json:"kbPerSocket"`
	// Goroutines are this server's (0 for the reference), GoroutinesPerSocket the growth
	// over the sockets opened.
	GoroutinesBefore    int     `json:"goroutinesBefore,omitempty"`
	Goroutines          int     `json:"goroutines,omitempty"`
	GoroutinesPerSocket float64 `json:"goroutinesPerSocket,omitempty"`
	Threads             int     `json:"threads"`
	// CPU is percent of one core over the window with the sockets open; CPUBefore over
	// the settle window before they opened.
	CPUBefore float64 `json:"cpuBeforePercent"`
	CPU       float64 `json:"cpuPercent"`
	Note      string  `json:"note,omitempty"`
}

// measured reports whether the row holds figures.
func (r idleRow) measured() bool { return r.Opened > 0 && r.RSSMB > 0 }

// verdict is whether this server's row meets the targets; empty for the reference's.
func (r idleRow) verdict() string {
	if r.Side == sideReference || !r.measured() {
		return ""
	}
	met := r.Opened == r.Sockets && r.OpenAtEnd == r.Opened && r.KBPerSocket < targetKBPerSocket
	if r.Sockets <= targetRSSSocketsAt {
		met = met && r.CPU < targetCPUPercent
	}
	if r.Sockets == targetRSSSocketsAt {
		met = met && r.RSSMB < targetRSSMBAt10k
	}
	if met {
		return "met"
	}
	return "NOT MET"
}

// summary is the row on one line, for the log as it runs.
func (r idleRow) summary() string {
	return fmt.Sprintf("  %s, %d sockets: %d opened, %d open at the end; RSS %.1f MB (%.1f before), %.1f KB a socket; CPU %.2f%% (%.2f%% before); goroutines %d (%d before); threads %d",
		r.Side, r.Sockets, r.Opened, r.OpenAtEnd, r.RSSMB, r.RSSBeforeMB, r.KBPerSocket, r.CPU, r.CPUBefore, r.Goroutines, r.GoroutinesBefore, r.Threads)
}

func (rep *idleReport) writeTable(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "SOCKETS\tSIDE\tOPEN\tRSS\tRSS BEFORE\tPER SOCKET\tGOROUTINES/SOCKET\tIDLE CPU\tCPU BEFORE\tTHREADS\tx REFERENCE\tVERDICT\t")
	ref := map[int]idleRow{}
	for _, r := range rep.Rows {
		if r.Side == sideReference && r.measured() {
			ref[r.Sockets] = r
		}
	}
	for _, r := range rep.Rows {
		if !r.measured() {
			fmt.Fprintf(tw, "%d\t%s\t-\t\t\t\t\t\t\t\t\t\tnot measured: %s\n", r.Sockets, r.Side, r.Note)
			continue
		}
		perSocket, ratio := fmt.Sprintf("%.1f KB", r.KBPerSocket), ""
		if other, ok := ref[r.Sockets]; ok && r.Side != sideReference && other.KBPerSocket > 0 {
			ratio = fmt.Sprintf("%.2fx", r.KBPerSocket/other.KBPerSocket)
		}
		gps := referenceGoroutines
		if r.Side != sideReference {
			gps = fmt.Sprintf("%.2f", r.GoroutinesPerSocket)
		}
		fmt.Fprintf(tw, "%d\t%s\t%d/%d\t%.0f MB\t%.0f MB\t%s\t%s\t%.2f%%\t%.2f%%\t%d\t%s\t%s\t\n",
			r.Sockets, r.Side, r.OpenAtEnd, r.Sockets, r.RSSMB, r.RSSBeforeMB, perSocket, gps, r.CPU, r.CPUBefore, r.Threads, ratio, r.verdict())
	}
	_ = tw.Flush()
	fmt.Fprintf(w, "\nOPEN: subscriptions still open after the window, of those asked for. PER SOCKET: (RSS - RSS BEFORE) / sockets opened. x REFERENCE: this server's bytes a socket over the reference's.\n"+
		"Targets (this server): under %d KB a socket at every count, under %d%% of a core up to %d sockets and under %d MB at %d. Keep-alive pings: this server every %s, the reference every 12s (graphql-ws's default). CPU over %s with the sockets open, %s before.\n",
		targetKBPerSocket, targetCPUPercent, targetRSSSocketsAt, targetRSSMBAt10k, targetRSSSocketsAt, rep.Ping, rep.Window, rep.Settle)
}
