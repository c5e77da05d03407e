package measure

import (
	"bufio"
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestPercentileNearestRank(t *testing.T) {
	// 1..100 ms, shuffled: the p-th percentile is p ms.
	var l Latencies
	for i := 1; i <= 100; i++ {
		l = append(l, time.Duration(i)*time.Millisecond)
	}
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(l), func(i, j int) { l[i], l[j] = l[j], l[i] })
	got := Summarize(l)
	want := Summary{N: 100, P50: 50 * time.Millisecond, P95: 95 * time.Millisecond, P99: 99 * time.Millisecond,
		Max: 100 * time.Millisecond, Mean: 50500 * time.Microsecond}
	if got != want {
		t.Errorf("Summarize = %+v, want %+v", got, want)
	}
}

func TestPercentileSmallSets(t *testing.T) {
	tests := []struct {
		name    string
		samples []time.Duration
		p       float64
		want    time.Duration
	}{
		{"empty", nil, 50, 0},
		{"one", []time.Duration{7}, 99, 7},
		{"twoMedianIsLower", []time.Duration{1, 2}, 50, 1},
		{"twoP95IsUpper", []time.Duration{1, 2}, 95, 2},
		{"tenP50", []time.Duration{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 50, 5},
		{"tenP95", []time.Duration{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 95, 10},
		{"tenP90", []time.Duration{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 90, 9},
		{"p100IsMax", []time.Duration{3, 9, 4}, 100, 9},
		{"p0IsMin", []time.Duration{3, 9, 4}, 0, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := Latencies(tt.samples)
			Summarize(l) // sorts
			if got := Percentile(l, tt.p); got != tt.want {
				t.Errorf("Percentile(%v, %v) = %v, want %v", tt.samples, tt.p, got, tt.want)
			}
		})
	}
}

func TestRunStopsAtMaxRequests(t *testing.T) {
	var calls atomic.Int64
	op := func(context.Context, int64) error {
		if calls.Add(1)%4 == 0 {
			return errors.New("every fourth fails")
		}
		return nil
	}
	m := Run(t.Context(), op, Limits{Concurrency: 3, Duration: time.Minute, MaxRequests: 40, RequestTimeout: time.Second})
	if m.Requests != 40 || m.Errors != 10 || m.Latencies.N != 30 || calls.Load() != 40 {
		t.Errorf("requests %d, errors %d, samples %d, calls %d; want 40, 10, 30, 40", m.Requests, m.Errors, m.Latencies.N, calls.Load())
	}
	if m.FirstError != "every fourth fails" {
		t.Errorf("FirstError = %q", m.FirstError)
	}
}

func TestRunStopsAtDuration(t *testing.T) {
	op := func(ctx context.Context, _ int64) error {
		time.Sleep(5 * time.Millisecond)
		return nil
	}
	begin := time.Now()
	m := Run(t.Context(), op, Limits{Concurrency: 2, Duration: 100 * time.Millisecond, MaxRequests: 1_000_000, RequestTimeout: time.Second})
	if took := time.Since(begin); took > 2*time.Second {
		t.Errorf("took %s", took)
	}
	if m.Requests < 4 || m.Requests > 60 || m.Errors != 0 {
		t.Errorf("requests %d errors %d; want a few dozen at most, no errors", m.Requests, m.Errors)
	}
	if m.Latencies.P50 < 5*time.Millisecond {
		t.Errorf("p50 %s below the 5 ms each request sleeps", m.Latencies.P50)
	}
}

func TestMedian(t *testing.T) {
	for _, tt := range []struct {
		in   []float64
		want float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{9, 5, 6}, 6}, {[]float64{4, 1, 3, 2}, 2.5}, {[]float64{1, 1.005}, 1}} {
		if got := Median(tt.in); got != tt.want {
			t.Errorf("Median(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestParseMemoryStatus(t *testing.T) {
	status := "Name:\tserver\nVmPeak:\t 1234 kB\nVmHWM:\t   98304 kB\nVmRSS:\t   65536 kB\nThreads:\t9\n"
	got, err := parseMemoryStatus(bufio.NewScanner(strings.NewReader(status)))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(MemoryStatus{RSSKB: 65536, HWMKB: 98304}, got); diff != "" {
		t.Error(diff)
	}
	if _, err := parseMemoryStatus(bufio.NewScanner(strings.NewReader("Name:\tkthread\n"))); err == nil {
		t.Error("a status without VmRSS parsed")
	}
}

func TestParseThreads(t *testing.T) {
	if got, err := parseThreads("Name:\tnode\nVmRSS:\t 65536 kB\nThreads:\t11\nSigQ:\t0/1\n"); err != nil || got != 11 {
		t.Errorf("parseThreads = %d, %v; want 11", got, err)
	}
	if _, err := parseThreads("Name:\tnode\n"); err == nil {
		t.Error("a status without Threads parsed")
	}
}

// utime and stime are fields 14 and 15, counted after the command name, which may hold
// spaces and parentheses.
func TestParseCPUTicks(t *testing.T) {
	tests := []struct {
		name, stat string
		want       int64
		wantErr    bool
	}{
		{"plain", "1234 (server) S 1 1234 1234 0 -1 4194560 9000 0 0 0 250 75 0 0 20 0 12 0 100 0 0", 325, false},
		{"nameWithSpacesAndParens", "77 (my (odd) name) R 1 77 77 0 -1 0 0 0 0 0 3 4 0 0", 7, false},
		{"short", "77 (x) R 1 2", 0, true},
		{"noName", "77 x R", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseCPUTicks(tt.stat)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("ParseCPUTicks = %d, %v; want %d, error %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestCPUPercent(t *testing.T) {
	if got := CPUPercent(150, 30*time.Second); got != 5 { // 1.5 s of CPU in 30 s
		t.Errorf("CPUPercent = %v, want 5", got)
	}
	if got := CPUPercent(10, 0); got != 0 {
		t.Errorf("CPUPercent over no time = %v, want 0", got)
	}
}

func TestParseGauges(t *testing.T) {
	text := "# HELP go_goroutines Number of goroutines.\n# TYPE go_goroutines gauge\ngo_goroutines 20045\n" +
		"go_memstats_heap_inuse_bytes 4.90995712e+08\ngo_gc_duration_seconds{quantile=\"0\"} 1e-05\ngo_goroutines_other 1\n"
	got := ParseGauges(text, "go_goroutines", "go_memstats_heap_inuse_bytes", "go_gc_duration_seconds")
	want := map[string]float64{"go_goroutines": 20045, "go_memstats_heap_inuse_bytes": 490995712}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("gauges (-want +got):\n%s", diff)
	}
}
