// Package report writes what every benchmark's report shares: figures rendered for a
// table (milliseconds, megabytes, ratios), long text clipped to a cell, and the JSON file.
package report

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// MS renders milliseconds with the precision their size deserves; "-" for none.
func MS(v float64) string {
	switch {
	case v <= 0:
		return "-"
	case v < 10:
		return fmt.Sprintf("%.2f ms", v)
	case v < 1000:
		return fmt.Sprintf("%.1f ms", v)
	default:
		return fmt.Sprintf("%.0f ms", v)
	}
}

// MB renders megabytes without decimals; "-" for none.
func MB(v float64) string {
	if v <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f MB", v)
}

// Ratio renders a ratio as "1.25x"; "-" for none.
func Ratio(v float64) string {
	if v <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", v)
}

// Clip joins s onto one line and cuts it after n bytes, for a table cell.
func Clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// WriteJSON writes v to path as indented JSON.
func WriteJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
