package events

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"messages/cmd/loadtest/measure"
	"messages/cmd/loadtest/report"
)

// eventsReport is the outcome of `loadtest events`: one row a measure.
type eventsReport struct {
	StartedAt time.Time   `json:"startedAt"`
	BaseURL   string      `json:"baseUrl"`
	WriterURL string      `json:"writerUrl"`
	Rows      []eventsRow `json:"rows"`
}

// eventsRow is one measure of one scenario, with its target when the issue sets one.
type eventsRow struct {
	Scenario string  `json:"scenario"`
	Measure  string  `json:"measure"`
	Value    float64 `json:"value"`
	Unit     string  `json:"unit,omitempty"` // ms, MB, %, /s, or empty for a count
	// Target is the bound the value must stay under; 0: none.
	Target float64 `json:"target,omitempty"`
	// Expect is a target that is not a bound (an exact count); OK is its verdict.
	Expect string `json:"expect,omitempty"`
	OK     *bool  `json:"ok,omitempty"`
	Note   string `json:"note,omitempty"`
}

// ratio is the value over its target, 0 without one.
func (r eventsRow) ratio() float64 {
	if r.Target <= 0 {
		return 0
	}
	return measure.Round2(r.Value / r.Target)
}

// verdict is "met", "NOT MET", or empty when the row has no target.
func (r eventsRow) verdict() string {
	ok := r.OK
	if r.Target > 0 {
		met := r.Value < r.Target
		ok = &met
	}
	switch {
	case ok == nil:
		return ""
	case *ok:
		return "met"
	default:
		return "NOT MET"
	}
}

// target is how the table shows the row's target.
func (r eventsRow) target() string {
	if r.Target > 0 {
		return "< " + fmtEventValue(r.Target, r.Unit)
	}
	return r.Expect
}

// fmtEventValue renders a value in its unit.
func fmtEventValue(v float64, unit string) string {
	switch unit {
	case "ms":
		switch {
		case v < 10:
			return fmt.Sprintf("%.2f ms", v)
		case v < 1000:
			return fmt.Sprintf("%.1f ms", v)
		default:
			return fmt.Sprintf("%.0f ms", v)
		}
	case "MB":
		return fmt.Sprintf("%.1f MB", v)
	case "KB":
		return fmt.Sprintf("%.1f KB", v)
	case "%":
		return fmt.Sprintf("%.2f%%", v)
	case "/s":
		return fmt.Sprintf("%.1f/s", v)
	case "x":
		return fmt.Sprintf("%.2fx", v)
	case "":
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%g %s", v, unit)
}

func (rep *eventsReport) writeTable(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SCENARIO\tMEASURE\tVALUE\tTARGET\tx TARGET\tVERDICT\tNOTE\t")
	for _, r := range rep.Rows {
		value := fmtEventValue(r.Value, r.Unit)
		if r.Measure == "not measured" {
			value = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", r.Scenario, r.Measure, value, r.target(),
			report.Ratio(r.ratio()), r.verdict(), r.Note)
	}
	_ = tw.Flush()
}

func boolPtr(b bool) *bool { return &b }
