package idle

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseCounts(t *testing.T) {
	tests := []struct {
		name, in string
		want     []int
		wantErr  bool
	}{
		{"default", "1000,10000,50000", []int{1000, 10000, 50000}, false},
		{"underscoresAndSpaces", " 1_000 , 50_000 ,", []int{1000, 50000}, false},
		{"zero", "0", nil, true},
		{"tooMany", "100001", nil, true},
		{"notANumber", "1k", nil, true},
		{"empty", " , ", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseCounts(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("error %v, want error %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("counts (-want +got):\n%s", diff)
			}
		})
	}
}

// The sides run in one order whatever the order given: this server over WebSockets, over
// event streams, then the reference.
func TestParseSides(t *testing.T) {
	got, err := parseSides("reference, server-sse, server")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{sideServer, sideServerSSE, sideReference}, got); diff != "" {
		t.Error(diff)
	}
	if _, err := parseSides("server,postgraphile"); err == nil {
		t.Error("an unknown side parsed")
	}
}

// 50,000 sockets to one server need two source addresses' ephemeral ports at least.
func TestCheckSources(t *testing.T) {
	c := config{counts: []int{50_000}, sides: []string{sideReference}, serverPort: 1, referencePort: 2, settle: 1, window: 1, dialers: 1, sources: 1}
	if err := c.check(); err == nil || !strings.Contains(err.Error(), "--sources") {
		t.Errorf("one source for 50,000 sockets: %v", err)
	}
	c.sources = 2
	if err := c.check(); err != nil {
		t.Errorf("two sources for 50,000 sockets: %v", err)
	}
}

// This server's rows get a verdict against the targets, the reference's none; the ratio
// of bytes a socket is this server's over the reference's at the same count.
func TestTable(t *testing.T) {
	rep := &idleReport{Ping: "12s", Settle: "10s", Window: "30s", Rows: []idleRow{
		{Side: sideServer, Sockets: 10_000, Opened: 10_000, OpenAtEnd: 10_000, RSSBeforeMB: 30, RSSMB: 180, KBPerSocket: 15.36, Goroutines: 20, GoroutinesPerSocket: 0, CPU: 0.5},
		{Side: sideReference, Sockets: 10_000, Opened: 10_000, OpenAtEnd: 10_000, RSSBeforeMB: 50, RSSMB: 230, KBPerSocket: 18.43, CPU: 1.2},
		{Side: sideServer, Sockets: 50_000, Opened: 50_000, OpenAtEnd: 50_000, RSSBeforeMB: 30, RSSMB: 2900, KBPerSocket: 58.8, GoroutinesPerSocket: 3, CPU: 0.9},
		{Side: sideReference, Sockets: 50_000, Note: "the reference exited"},
	}}
	var out bytes.Buffer
	rep.writeTable(&out)
	lines := strings.Split(out.String(), "\n")
	for i, want := range [][]string{
		1: {"10000", "server", "10000/10000", "180 MB", "15.4 KB", "0.83x", "met"},
		2: {"10000", "reference", "230 MB", "18.4 KB", "-"},
		3: {"50000", "server", "58.8 KB", "3.00", "NOT MET"},
		4: {"50000", "reference", "not measured: the reference exited"},
	} {
		for _, w := range want {
			if !strings.Contains(lines[i], w) {
				t.Errorf("line %d lacks %q:\n%s", i, w, out.String())
			}
		}
	}
	if strings.Contains(lines[2], "met") {
		t.Errorf("the reference's row has a verdict: %s", lines[2])
	}
}

// CPU is held to its target up to 10,000 sockets, bytes a socket at every count.
func TestVerdict(t *testing.T) {
	row := func(sockets int, kb, cpu float64) idleRow {
		return idleRow{Side: sideServer, Sockets: sockets, Opened: sockets, OpenAtEnd: sockets, RSSMB: 100, KBPerSocket: kb, CPU: cpu}
	}
	for _, c := range []struct {
		row  idleRow
		want string
	}{
		{row(1_000, 19, 1.9), "met"},
		{row(10_000, 15, 2.1), "NOT MET"},
		{row(19_000, 14.8, 2.2), "met"},
		{row(19_000, 20.5, 1.0), "NOT MET"},
		{idleRow{Side: sideServer, Sockets: 19_000, Opened: 18_000, OpenAtEnd: 18_000, RSSMB: 100, KBPerSocket: 15, CPU: 1}, "NOT MET"},
	} {
		if got := c.row.verdict(); got != c.want {
			t.Errorf("%d sockets, %.1f KB, %.1f%%: %s, want %s", c.row.Sockets, c.row.KBPerSocket, c.row.CPU, got, c.want)
		}
	}
}
