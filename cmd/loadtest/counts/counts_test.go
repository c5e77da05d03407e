package counts

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/urfave/cli/v3"

	"messages/cmd/loadtest/cmdline"
)

// The count request's filters are the inbox client's, each one the counters cannot
// answer alone (tags or a creation range), so the request measures the rows' count.
func TestCountFilters(t *testing.T) {
	var filters []map[string]any
	if err := json.Unmarshal([]byte(countFilters(30, 0)), &filters); err != nil || len(filters) != 30 {
		t.Fatalf("%d filters, %v; want 30", len(filters), err)
	}
	for i, f := range filters {
		_, tags := f["tags"]
		_, created := f["createdGte"]
		if !tags && !created {
			t.Errorf("filter %d %v: neither tags nor createdGte", i, f)
		}
	}
}

// The command refuses bad settings with a usage error before it measures anything.
func TestCountsUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"noKey", []string{"counts"}, "--api-key is required"},
		{"unknownPart", []string{"counts", "--api-key", "a", "--parts", "cpu"}, `unknown part "cpu"`},
		{"filtersNeedApplication", []string{"counts", "--api-key", "a", "--parts", "filters"}, "--application"},
		{"noSubscriptions", []string{"counts", "--api-key", "a", "--parts", "fanout", "--subscriptions", "0"}, "at least 1"},
		{"offLoopback", []string{"counts", "--api-key", "a", "--parts", "fanout", "--base-url", "http://10.1.1.1"}, "not loopback"},
		{"arguments", []string{"counts", "--api-key", "a", "--parts", "fanout", "extra"}, "unexpected arguments"},
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
