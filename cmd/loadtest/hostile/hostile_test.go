package hostile

import (
	"bytes"
	"strings"
	"testing"

	"github.com/urfave/cli/v3"

	"messages/cmd/loadtest/cmdline"
)

// The documents built to make the validator work are distinct (no cache answers for
// them) and just under the 32 KiB a document may have.
func TestHostileDocuments(t *testing.T) {
	for name, document := range map[string]func(int) string{"repeatedFields": repeatedFields, "unknownFields": unknownFieldsDocument} {
		a, b := document(1), document(2)
		if a == b || len(a) < 31_000 || len(a) > 32<<10 {
			t.Errorf("%s: %d bytes, distinct %v; want distinct documents of 31,000 bytes to 32 KiB", name, len(a), a != b)
		}
	}
}

// The command refuses bad settings with a usage error before it attacks anything.
func TestHostileUsageErrors(t *testing.T) {
	keys := []string{"hostile", "--api-key", "a", "--other-key", "b", "--server-pid", "1"}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknownPart", append(keys, "--parts", "cpu"), `unknown part "cpu"`},
		{"memoryNeedsLargeKey", keys, "--large-key are required"},
		{"noOtherKey", []string{"hostile", "--api-key", "a", "--server-pid", "1", "--parts", "flood"}, "--other-key"},
		{"noWorkers", append(keys, "--parts", "flood", "--flood-workers", "0"), "--flood-workers"},
		{"offLoopback", append(keys, "--parts", "flood", "--base-url", "http://10.1.1.1"), "not loopback"},
		{"arguments", append(keys, "--parts", "flood", "extra"), "unexpected arguments"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			root := &cli.Command{Name: "loadtest", Commands: []*cli.Command{Command(func(string) string { return "" }, &bytes.Buffer{}, &stderr)}}
			if code := cmdline.Run(t.Context(), root, tt.args, &stderr); code != 2 || !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr.String(), tt.want)
			}
		})
	}
}
