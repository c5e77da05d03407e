package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/urfave/cli/v3"

	"messages/cmd/loadtest/cmdline"
	"messages/cmd/loadtest/measure"
)

// MedianCommand is `loadtest median [--json out] [--baseline before.json] run1.json run2.json ...`:
// it combines the reports of repeated runs into one whose every figure is the median of
// the runs (errors are summed and peak memory is the highest), and prints it as a table.
func MedianCommand(stdout io.Writer) *cli.Command {
	return &cli.Command{
		Name:      "median",
		Usage:     "combine the JSON reports of repeated runs into their median",
		ArgsUsage: "run1.json run2.json ...",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "json", Usage: "write the combined report as JSON to this file"},
			&cli.StringFlag{Name: "baseline", Usage: "JSON results of an earlier run to show as the baseline column"},
		},
		Action: func(_ context.Context, cmd *cli.Command) error {
			return combineRuns(cmd.Args().Slice(), cmd.String("json"), cmd.String("baseline"), stdout)
		},
	}
}

// combineRuns reads the reports at paths and writes their median.
func combineRuns(paths []string, jsonPath, baseline string, stdout io.Writer) error {
	if len(paths) == 0 {
		return cmdline.Usage(errors.New("loadtest median needs the JSON reports of one or more runs"))
	}
	var runs []*benchReport
	for _, path := range paths {
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var r benchReport
		if err := json.Unmarshal(b, &r); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		runs = append(runs, &r)
	}
	rep := medianReport(runs)
	if baseline != "" {
		if err := rep.applyBaseline(baseline); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "median of %d runs\n", len(runs))
	rep.writeTable(stdout)
	if jsonPath != "" {
		return rep.writeJSONFile(jsonPath)
	}
	return nil
}

// medianReport combines runs row by row (rows are matched by name, in the first run's
// order, then any row only later runs have). A row unavailable in every run stays so.
func medianReport(runs []*benchReport) *benchReport {
	out := *runs[0]
	out.Runs = len(runs)
	out.Scenarios = medianRows(runs, func(r *benchReport) []*result { return r.Scenarios })
	out.Floors = medianRows(runs, func(r *benchReport) []*result { return r.Floors })
	out.Baseline = ""
	var servers []*measure.ServerMemory
	for _, r := range runs {
		if r.Server != nil {
			servers = append(servers, r.Server)
		}
	}
	if len(servers) > 0 {
		m := *servers[0]
		for _, s := range servers[1:] {
			m.PeakRSSMB, m.HWMMB = max(m.PeakRSSMB, s.PeakRSSMB), max(m.HWMMB, s.HWMMB)
		}
		out.Server = &m
	}
	out.linkFloors()
	return &out
}

// medianRows combines one kind of row (scenarios or floors) of runs, row by row.
func medianRows(runs []*benchReport, rows func(*benchReport) []*result) []*result {
	var names []string
	byName := map[string][]*result{}
	for _, r := range runs {
		for _, row := range rows(r) {
			if !slices.Contains(names, row.Name) {
				names = append(names, row.Name)
			}
			byName[row.Name] = append(byName[row.Name], row)
		}
	}
	var out []*result
	for _, name := range names {
		var ran []*result
		for _, row := range byName[name] {
			if row.Unavailable == "" {
				ran = append(ran, row)
			}
		}
		if len(ran) == 0 {
			out = append(out, byName[name][0])
			continue
		}
		m := *ran[0]
		m.Runs = len(ran)
		med := func(field func(*result) float64) float64 {
			v := make([]float64, len(ran))
			for i, row := range ran {
				v[i] = field(row)
			}
			return measure.Median(v)
		}
		m.Requests = int(med(func(r *result) float64 { return float64(r.Requests) }))
		m.Seconds = med(func(r *result) float64 { return r.Seconds })
		m.PerSecond = med(func(r *result) float64 { return r.PerSecond })
		m.P50 = med(func(r *result) float64 { return r.P50 })
		m.P95 = med(func(r *result) float64 { return r.P95 })
		m.P99 = med(func(r *result) float64 { return r.P99 })
		m.Max = med(func(r *result) float64 { return r.Max })
		m.Mean = med(func(r *result) float64 { return r.Mean })
		m.Errors, m.PeakRSSMB = 0, 0
		for _, row := range ran {
			m.Errors += row.Errors
			m.PeakRSSMB = max(m.PeakRSSMB, row.PeakRSSMB)
			if m.FirstError == "" {
				m.FirstError = row.FirstError
			}
		}
		m.FloorP50, m.RatioToFloor, m.RatioToFloorNoCount, m.BaselineP50, m.BaselineFailed = 0, 0, 0, 0, false
		out = append(out, &m)
	}
	return out
}
