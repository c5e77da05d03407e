package main

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
	var l latencies
	for i := 1; i <= 100; i++ {
		l = append(l, time.Duration(i)*time.Millisecond)
	}
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(l), func(i, j int) { l[i], l[j] = l[j], l[i] })
	got := summarize(l)
	want := summary{n: 100, p50: 50 * time.Millisecond, p95: 95 * time.Millisecond, p99: 99 * time.Millisecond,
		max: 100 * time.Millisecond, mean: 50500 * time.Microsecond}
	if got != want {
		t.Errorf("summarize = %+v, want %+v", got, want)
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
			l := latencies(tt.samples)
			summarize(l) // sorts
			if got := percentile(l, tt.p); got != tt.want {
				t.Errorf("percentile(%v, %v) = %v, want %v", tt.samples, tt.p, got, tt.want)
			}
		})
	}
}

func TestMeasureStopsAtMaxRequests(t *testing.T) {
	var calls atomic.Int64
	op := func(context.Context, int64) error {
		if calls.Add(1)%4 == 0 {
			return errors.New("every fourth fails")
		}
		return nil
	}
	m := measure(t.Context(), op, limits{concurrency: 3, duration: time.Minute, maxRequests: 40, requestTimeout: time.Second})
	if m.requests != 40 || m.errors != 10 || m.latencies.n != 30 || calls.Load() != 40 {
		t.Errorf("requests %d, errors %d, samples %d, calls %d; want 40, 10, 30, 40", m.requests, m.errors, m.latencies.n, calls.Load())
	}
	if m.firstError != "every fourth fails" {
		t.Errorf("firstError = %q", m.firstError)
	}
}

func TestMeasureStopsAtDuration(t *testing.T) {
	op := func(ctx context.Context, _ int64) error {
		time.Sleep(5 * time.Millisecond)
		return nil
	}
	begin := time.Now()
	m := measure(t.Context(), op, limits{concurrency: 2, duration: 100 * time.Millisecond, maxRequests: 1_000_000, requestTimeout: time.Second})
	if took := time.Since(begin); took > 2*time.Second {
		t.Errorf("took %s", took)
	}
	if m.requests < 4 || m.requests > 60 || m.errors != 0 {
		t.Errorf("requests %d errors %d; want a few dozen at most, no errors", m.requests, m.errors)
	}
	if m.latencies.p50 < 5*time.Millisecond {
		t.Errorf("p50 %s below the 5 ms each request sleeps", m.latencies.p50)
	}
}

func TestParseMemoryStatus(t *testing.T) {
	status := "Name:\tserver\nVmPeak:\t 1234 kB\nVmHWM:\t   98304 kB\nVmRSS:\t   65536 kB\nThreads:\t9\n"
	got, err := parseMemoryStatus(bufio.NewScanner(strings.NewReader(status)))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(memoryStatus{rssKB: 65536, hwmKB: 98304}, got, cmp.AllowUnexported(memoryStatus{})); diff != "" {
		t.Error(diff)
	}
	if _, err := parseMemoryStatus(bufio.NewScanner(strings.NewReader("Name:\tkthread\n"))); err == nil {
		t.Error("a status without VmRSS parsed")
	}
}

func TestLinkFloors(t *testing.T) {
	r := &report{
		Scenarios: []*result{
			{Name: "rest-first-page", Requests: 10, P50: 6, Floor: floorFirstPage, FloorNoCount: floorFirstPageNoCount},
			{Name: "graphql-first-page", Requests: 10, P50: 9, Floor: floorFirstPageNoCount},
			{Name: "mark-action", Requests: 10, P50: 4},
			{Name: "graphql-cursor-deep", Unavailable: "no cursor", Floor: floorCursorDeep},
		},
		Floors: []*result{
			{Name: floorFirstPage, Requests: 5, P50: 300},
			{Name: floorFirstPageNoCount, Requests: 50, P50: 3},
			{Name: floorCursorDeep, Requests: 50, P50: 3},
		},
	}
	r.linkFloors()
	type ratios struct{ FloorP50, Ratio, RatioNoCount float64 }
	var got []ratios
	for _, s := range r.Scenarios {
		got = append(got, ratios{s.FloorP50, s.RatioToFloor, s.RatioToFloorNoCount})
	}
	want := []ratios{{300, 0.02, 2}, {3, 3, 0}, {0, 0, 0}, {0, 0, 0}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Error(diff)
	}
}

func TestMedianReport(t *testing.T) {
	run := func(p50, floorP50 float64, errs int, rss float64) *report {
		return &report{
			Scenarios: []*result{{Name: "rest-first-page", Requests: 100, Errors: errs, P50: p50, PeakRSSMB: rss, Floor: floorFirstPageNoCount},
				{Name: "graphql-cursor-deep", Unavailable: "no cursor"}},
			Floors: []*result{{Name: floorFirstPageNoCount, Requests: 100, P50: floorP50}},
			Server: &serverMemory{PID: 1, PeakRSSMB: rss, HWMMB: rss},
		}
	}
	got := medianReport([]*report{run(9, 3, 0, 40), run(5, 2, 1, 60), run(6, 4, 2, 50)})
	s := got.Scenarios[0]
	if s.P50 != 6 || s.Errors != 3 || s.PeakRSSMB != 60 || s.RatioToFloor != 2 || s.Runs != 3 {
		t.Errorf("combined scenario %+v", s)
	}
	if got.Scenarios[1].Unavailable != "no cursor" || got.Server.PeakRSSMB != 60 || got.Runs != 3 {
		t.Errorf("combined report %+v, server %+v", got.Scenarios[1], got.Server)
	}
	if m := median([]float64{4, 1, 3, 2}); m != 2.5 {
		t.Errorf("median of an even count = %v", m)
	}
}
