package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"text/tabwriter"
	"time"

	"messages/cmd/loadtest/measure"
	"messages/cmd/loadtest/report"
)

// benchReport is the outcome of a run: the table and the JSON file.
type benchReport struct {
	StartedAt time.Time             `json:"startedAt"`
	BaseURL   string                `json:"baseUrl"`
	Settings  settings              `json:"settings"`
	Dataset   dataset               `json:"dataset"`
	Scenarios []*result             `json:"scenarios"`
	Floors    []*result             `json:"floors,omitempty"`
	Server    *measure.ServerMemory `json:"server,omitempty"`
	// Baseline names the file of the baseline figures, when one was given.
	Baseline string `json:"baseline,omitempty"`
	// Runs is how many runs a combined report is the median of (0: one run).
	Runs int `json:"runs,omitempty"`
}

// settings are the run's bounds.
type settings struct {
	Duration       string `json:"duration"`
	Warmup         string `json:"warmup"`
	Concurrency    int    `json:"concurrency"`
	MaxRequests    int    `json:"maxRequests"`
	PageSize       int    `json:"pageSize"`
	DeepPage       int    `json:"deepPage"`
	CursorDepth    int    `json:"cursorDepth"`
	FarCursorDepth int    `json:"farCursorDepth"`
	// NaiveConcurrency is the workers of the naive floors, when measured.
	NaiveConcurrency int  `json:"naiveConcurrency,omitempty"`
	Gzip             bool `json:"gzip"`
}

// result is one scenario's or floor's figures; latencies are in milliseconds.
type result struct {
	Name        string  `json:"name"`
	About       string  `json:"about"`
	Unavailable string  `json:"unavailable,omitempty"`
	Requests    int     `json:"requests"`
	Errors      int     `json:"errors"`
	FirstError  string  `json:"firstError,omitempty"`
	Seconds     float64 `json:"seconds"`
	PerSecond   float64 `json:"requestsPerSecond"`
	P50         float64 `json:"p50Ms"`
	P95         float64 `json:"p95Ms"`
	P99         float64 `json:"p99Ms"`
	Max         float64 `json:"maxMs"`
	Mean        float64 `json:"meanMs"`
	// Floor is the raw floor of the same read; RatioToFloor is p50 over the floor's p50.
	Floor        string  `json:"floor,omitempty"`
	FloorP50     float64 `json:"floorP50Ms,omitempty"`
	RatioToFloor float64 `json:"ratioToFloor,omitempty"`
	// FloorNoCount is the same read without totalCount, for scenarios that count.
	FloorNoCount        string  `json:"floorNoCount,omitempty"`
	RatioToFloorNoCount float64 `json:"ratioToFloorNoCount,omitempty"`
	PeakRSSMB           float64 `json:"peakRssMB,omitempty"`
	// BaselineP50 is the p50 of the same name in the --baseline file; BaselineFailed says
	// every request of that row failed there.
	BaselineP50    float64 `json:"baselineP50Ms,omitempty"`
	BaselineFailed bool    `json:"baselineAllFailed,omitempty"`
	// Runs is how many runs a combined row is the median of.
	Runs int `json:"runs,omitempty"`
	// Concurrency is the number of workers, when it differs from the run's (naive floors).
	Concurrency int `json:"concurrency"`
}

// newResult is the row of a scenario or floor that measured m with concurrency workers.
func newResult(name, about string, m measure.Measurement, concurrency int) *result {
	return &result{Concurrency: concurrency,
		Name: name, About: about, Requests: m.Requests, Errors: m.Errors, FirstError: m.FirstError,
		Seconds: math.Round(m.Elapsed.Seconds()*100) / 100, PerSecond: math.Round(m.PerSecond()*10) / 10,
		P50: measure.MS(m.Latencies.P50), P95: measure.MS(m.Latencies.P95), P99: measure.MS(m.Latencies.P99),
		Max: measure.MS(m.Latencies.Max), Mean: measure.MS(m.Latencies.Mean),
	}
}

// linkFloors fills in each scenario's ratios to its floors.
func (r *benchReport) linkFloors() {
	byName := map[string]*result{}
	for _, f := range r.Floors {
		if f.Unavailable == "" && f.Requests > f.Errors {
			byName[f.Name] = f
		}
	}
	for _, s := range r.Scenarios {
		if s.Unavailable != "" || s.Requests == s.Errors {
			continue
		}
		if f, ok := byName[s.Floor]; ok && f.P50 > 0 {
			s.FloorP50, s.RatioToFloor = f.P50, measure.Round2(s.P50/f.P50)
		}
		if f, ok := byName[s.FloorNoCount]; ok && f.P50 > 0 {
			s.RatioToFloorNoCount = measure.Round2(s.P50 / f.P50)
		}
	}
}

// applyBaseline reads an earlier run's JSON and sets every row's BaselineP50: the "before"
// column.
func (r *benchReport) applyBaseline(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("--baseline: %w", err)
	}
	var before benchReport
	if err := json.Unmarshal(b, &before); err != nil {
		return fmt.Errorf("--baseline %s: %w", path, err)
	}
	old := map[string]*result{}
	for _, rows := range [][]*result{before.Scenarios, before.Floors} {
		for _, row := range rows {
			if row.Unavailable == "" && row.Requests > 0 {
				old[row.Name] = row
			}
		}
	}
	for _, rows := range [][]*result{r.Scenarios, r.Floors} {
		for _, row := range rows {
			if o, ok := old[row.Name]; ok {
				row.BaselineP50, row.BaselineFailed = o.P50, o.Requests == o.Errors
			}
		}
	}
	r.Baseline = path
	return nil
}

// writeTable prints the scenarios, then the floors, as aligned columns.
func (r *benchReport) writeTable(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	before := r.Baseline != ""
	head := "SCENARIO\tREQUESTS\tREQ/S\tP50\tP95\tP99\tERRORS\tFLOOR P50\tx FLOOR\tx FLOOR NO COUNT\tPEAK RSS\t"
	if before {
		head += "BASELINE P50\t"
	}
	fmt.Fprintln(tw, head)
	for _, s := range r.Scenarios {
		if s.Unavailable != "" {
			fmt.Fprintf(tw, "%s\tunavailable: %s\t\n", s.Name, report.Clip(s.Unavailable, 100))
			continue
		}
		line := fmt.Sprintf("%s\t%d\t%.1f\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t", s.Name, s.Requests, s.PerSecond,
			report.MS(s.P50), report.MS(s.P95), report.MS(s.P99), s.Errors, report.MS(s.FloorP50), report.Ratio(s.RatioToFloor),
			report.Ratio(s.RatioToFloorNoCount), report.MB(s.PeakRSSMB))
		if before {
			line += fmtBaseline(s) + "\t"
		}
		fmt.Fprintln(tw, line)
	}
	tw.Flush()
	if len(r.Floors) > 0 {
		fmt.Fprintln(w)
		tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		head := "RAW FLOOR\tREQUESTS\tREQ/S\tP50\tP95\tP99\tERRORS\tCLIENTS\t"
		if before {
			head += "BASELINE P50\t"
		}
		fmt.Fprintln(tw, head)
		for _, f := range r.Floors {
			if f.Unavailable != "" {
				fmt.Fprintf(tw, "%s\tunavailable: %s\t\n", f.Name, report.Clip(f.Unavailable, 100))
				continue
			}
			line := fmt.Sprintf("%s\t%d\t%.1f\t%s\t%s\t%s\t%d\t%d\t", f.Name, f.Requests, f.PerSecond,
				report.MS(f.P50), report.MS(f.P95), report.MS(f.P99), f.Errors, f.Concurrency)
			if before {
				line += fmtBaseline(f) + "\t"
			}
			fmt.Fprintln(tw, line)
		}
		tw.Flush()
	}
	if r.Server != nil {
		fmt.Fprintf(w, "\nserver pid %d: peak RSS during the scenarios %s, VmHWM %s\n", r.Server.PID, report.MB(r.Server.PeakRSSMB), report.MB(r.Server.HWMMB))
	}
	for _, rows := range [][]*result{r.Scenarios, r.Floors} {
		for _, s := range rows {
			if s.Errors > 0 {
				fmt.Fprintf(w, "%s: %d failed requests; the first: %s\n", s.Name, s.Errors, report.Clip(s.FirstError, 300))
			}
		}
	}
}

// writeJSONFile writes the report to path as JSON.
func (r *benchReport) writeJSONFile(path string) error { return report.WriteJSON(path, r) }

func fmtBaseline(r *result) string {
	if r.BaselineFailed {
		return "all failed"
	}
	return report.MS(r.BaselineP50)
}
