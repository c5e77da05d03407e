package vitessbench

import (
	"context"
	"errors"
	"maps"
	"strings"
	"testing"
	"time"

	"messages/cmd/loadtest/cmdline"
)

// vtgate's /debug/vars, cut to what the benchmark reads and a neighbour it must skip.
const varsSample = `{"VttabletCall": {"TotalCount": 9, "Histograms": {
  "Execute.messages.-80.primary": {"1000000": 5, "Count": 5, "Time": 100},
  "Execute.messages.80-.primary": {"Count": 1, "Time": 10},
  "Commit.messages.-80.primary": {"Count": 2, "Time": 10},
  "Execute.messages_global.0.primary": {"Count": 1, "Time": 10}}},
 "VttabletCallErrorCount": {"Execute.messages.-80.primary.INTERNAL": 1}}`

func TestParseVarsReadsCallsByOperationAndShard(t *testing.T) {
	got, err := parseVars([]byte(varsSample))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"Execute messages/-80": 5, "Execute messages/80-": 1, "Commit messages/-80": 2, "Execute messages_global/0": 1}
	if !maps.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if _, err := parseVars([]byte("<html>")); err == nil {
		t.Fatal("a page that is not vtgate's counters was read")
	}
}

func TestPerRequestTakesOutTheBackground(t *testing.T) {
	before := map[string]int64{"Execute messages/-80": 100, "Execute messages/80-": 50}
	after := map[string]int64{"Execute messages/-80": 310, "Execute messages/80-": 60, "Execute messages_global/0": 1}
	// 10 s at 1 call/s on each shard of messages is the poll, not the requests.
	background := map[string]float64{"Execute messages/-80": 1, "Execute messages/80-": 1}
	got := perRequest(before, after, background, 10*time.Second, 100)
	want := map[string]float64{"Execute messages/-80": 2, "Execute messages_global/0": 0.01}
	if !maps.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	shards := byShard(map[string]float64{"Execute messages/-80": 2, "Commit messages/-80": 1, "Execute messages_global/0": 1})
	if want := map[string]float64{"messages/-80": 3, "messages_global/0": 1}; !maps.Equal(shards, want) {
		t.Fatalf("by shard: got %v, want %v", shards, want)
	}
}

func TestScatterIsTwoShardsOfTheShardedKeyspace(t *testing.T) {
	for _, tt := range []struct {
		shards map[string]float64
		want   bool
	}{
		{map[string]float64{"messages/-80": 2}, false},
		{map[string]float64{"messages/-80": 2, "messages_global/0": 1}, false},
		{map[string]float64{"messages/-80": 2, "messages/80-": 0.02}, false}, // noise
		{map[string]float64{"messages/-80": 1, "messages/80-": 1}, true},
	} {
		if got := scatters(tt.shards); got != tt.want {
			t.Errorf("scatters(%v) = %v, want %v", tt.shards, got, tt.want)
		}
	}
}

func TestRowsFlagASlowPathAndAScatter(t *testing.T) {
	samples := []sample{
		{Shape: "list", Side: "direct", Connections: 1, P50: 2}, {Shape: "list", Side: "vitess", Connections: 1, P50: 2.4},
		{Shape: "list", Side: "direct", Connections: 4, PerSecond: 1000}, {Shape: "list", Side: "vitess", Connections: 4, PerSecond: 800, CPUMS: 1.5},
		{Shape: "mark", Side: "direct", Connections: 1, P50: 2}, {Shape: "mark", Side: "vitess", Connections: 1, P50: 5},
	}
	shards := []shardCount{{Shape: "list", Shards: map[string]float64{"messages/-80": 2}},
		{Shape: "mark", Shards: map[string]float64{"messages/-80": 1, "messages/80-": 1}, Scatter: true}}
	rs := rows([]string{"list", "mark"}, samples, shards)
	if r := rs[0]; r.Hop != 0.4 || r.P50Ratio != 1.2 || r.RPSRatio != 0.8 || r.DeploymentCPU != 1.5 || r.Slow || r.Scatter {
		t.Fatalf("list: %+v", r)
	}
	if r := rs[1]; !r.Slow || !r.Scatter || r.P50Ratio != 2.5 {
		t.Fatalf("mark: %+v", r)
	}
	var out strings.Builder
	(&vitessReport{Rows: rs, Environments: []string{"a", "b"}}).writeTable(&out)
	for _, want := range []string{"DEFECT: mark is 2.50x", "DEFECT: mark reaches more than one shard", "messages/-80 2.00"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the table lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "DEFECT: list") {
		t.Errorf("list is flagged:\n%s", out.String())
	}
}

func TestCommandRefusesBadUsage(t *testing.T) {
	ok := []string{"vitess", "--direct-url", "http://127.0.0.1:1", "--vitess-url", "http://127.0.0.1:2", "--vars-url", "http://127.0.0.1:3/debug/vars",
		"--environments", "a,b", "--subscribers", "s,t", "--direct-keys", "k,l", "--vitess-keys", "m,n"}
	for name, args := range map[string][]string{
		"off loopback":      append(append([]string{}, ok...), "--vitess-url", "http://10.0.0.1:2"),
		"unequal lists":     append(append([]string{}, ok...), "--subscribers", "s"),
		"unknown shape":     append(append([]string{}, ok...), "--shapes", "list,nope"),
		"rounds":            append(append([]string{}, ok...), "--rounds", "0"),
		"a stray argument":  append(append([]string{}, ok...), "extra"),
		"no count requests": append(append([]string{}, ok...), "--count-requests", "0"),
		"a bad process id":  append(append([]string{}, ok...), "--vitess-pids", "12,x"),
	} {
		t.Run(name, func(t *testing.T) {
			var stderr strings.Builder
			cmd := Command(&strings.Builder{}, &stderr)
			cmd.Name = "vitess"
			err := cmd.Run(context.Background(), args)
			if !errors.As(err, new(cmdline.UsageError)) {
				t.Fatalf("got %v, want a usage error", err)
			}
		})
	}
}
