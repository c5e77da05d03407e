package bench

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"messages/cmd/loadtest/measure"
)

func TestLinkFloors(t *testing.T) {
	r := &benchReport{
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
	run := func(p50, floorP50 float64, errs int, rss float64) *benchReport {
		return &benchReport{
			Scenarios: []*result{{Name: "rest-first-page", Requests: 100, Errors: errs, P50: p50, PeakRSSMB: rss, Floor: floorFirstPageNoCount},
				{Name: "graphql-cursor-deep", Unavailable: "no cursor"}},
			Floors: []*result{{Name: floorFirstPageNoCount, Requests: 100, P50: floorP50}},
			Server: &measure.ServerMemory{PID: 1, PeakRSSMB: rss, HWMMB: rss},
		}
	}
	got := medianReport([]*benchReport{run(9, 3, 0, 40), run(5, 2, 1, 60), run(6, 4, 2, 50)})
	s := got.Scenarios[0]
	if s.P50 != 6 || s.Errors != 3 || s.PeakRSSMB != 60 || s.RatioToFloor != 2 || s.Runs != 3 {
		t.Errorf("combined scenario %+v", s)
	}
	if got.Scenarios[1].Unavailable != "no cursor" || got.Server.PeakRSSMB != 60 || got.Runs != 3 {
		t.Errorf("combined report %+v, server %+v", got.Scenarios[1], got.Server)
	}
}
