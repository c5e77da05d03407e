package measure

import (
	"math"
	"slices"
)

// Median of values: the middle one, or the mean of the two middle ones (to two
// decimals).
func Median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return Round2((s[len(s)/2-1] + s[len(s)/2]) / 2)
}

// Round2 rounds x to two decimals, as every figure of a report is.
func Round2(x float64) float64 { return math.Round(x*100) / 100 }
