package dbproxy

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/urfave/cli/v3"

	"messages/cmd/loadtest/cmdline"
)

// packet is a MySQL packet: 3-byte little-endian length, sequence id, payload.
func packet(seq byte, payload ...byte) []byte {
	n := len(payload)
	return append([]byte{byte(n), byte(n >> 8), byte(n >> 16), seq}, payload...)
}

// The counter counts commands (sequence id 0) by their first byte, however the stream
// is cut into writes, and not the handshake or a command's continuation packets.
func TestCommandCounter(t *testing.T) {
	var stream []byte
	stream = append(stream, packet(1, 0x85, 0xa6, 0x03, 0x00, 0x03)...) // handshake response: its first byte is not a command
	stream = append(stream, packet(0, comQuery, 'S', 'E', 'L')...)
	stream = append(stream, packet(0, comStmtPrepare, 'S')...)
	stream = append(stream, packet(0, comStmtExecute, 1, 0, 0, 0)...)
	stream = append(stream, packet(0, 0x19, 1, 0, 0, 0)...) // COM_STMT_CLOSE
	stream = append(stream, packet(0)...)                   // empty: no command
	stream = append(stream, packet(1, comQuery)...)         // a continuation, not a command
	stream = append(stream, packet(0, comQuery, ';')...)
	want := Snapshot{Commands: 5, Queries: 2, Prepares: 1, Executes: 1}
	for _, cut := range []int{1, 2, 3, 5, 7, len(stream)} {
		counts := &counters{}
		c := &commandCounter{counts: counts}
		for b := stream; len(b) > 0; {
			k := min(cut, len(b))
			if n, err := c.Write(b[:k]); n != k || err != nil {
				t.Fatalf("Write = %d, %v", n, err)
			}
			b = b[k:]
		}
		if diff := cmp.Diff(want, counts.snapshot()); diff != "" {
			t.Errorf("writes of %d bytes: counts (-want +got):\n%s", cut, diff)
		}
	}
	if got := want.Statements(); got != 3 {
		t.Errorf("Statements = %d, want 3 (queries and executes)", got)
	}
}

// The proxy refuses addresses off loopback.
func TestProxyRefusesOffLoopback(t *testing.T) {
	var stderr bytes.Buffer
	root := &cli.Command{Name: "loadtest", Commands: []*cli.Command{Command()}}
	code := cmdline.Run(t.Context(), root, []string{"proxy", "--upstream", "192.0.2.1:3306"}, &stderr)
	if code != 2 || !bytes.Contains(stderr.Bytes(), []byte("not loopback")) {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}
}
