package measure

import (
	"slices"
	"strconv"
	"strings"
)

// ParseGauges reads the named unlabelled samples of a Prometheus text exposition, such
// as the server's /metrics.
func ParseGauges(text string, names ...string) map[string]float64 {
	out := map[string]float64{}
	for _, line := range strings.Split(text, "\n") {
		name, value, ok := strings.Cut(line, " ")
		if !ok || !slices.Contains(names, name) {
			continue
		}
		if f, err := strconv.ParseFloat(strings.TrimSpace(value), 64); err == nil {
			out[name] = f
		}
	}
	return out
}
