package inbox

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The table at the top of inbox.css: a pair of colour variables, the ratio it needs, and
// each theme's two colours with their ratio.
var contrastRow = regexp.MustCompile(`(?m)^ \* (--[a-z-]+) on (--[a-z-]+) .*?(\d(?:\.\d)?)\s+` +
	`(#[0-9a-f]{6})/(#[0-9a-f]{6})\s+(\d+\.\d\d)\s+(#[0-9a-f]{6})/(#[0-9a-f]{6})\s+(\d+\.\d\d)$`)

var colourVar = regexp.MustCompile(`(--[a-z-]+):\s*(#[0-9a-f]{6})`)

// TestContrastTableHoldsTheColours keeps the ratios written in inbox.css true: each row's
// colours are the variables' values in the light and the dark theme, its ratios are
// theirs, and each meets what the row needs.
func TestContrastTableHoldsTheColours(t *testing.T) {
	b, err := files.ReadFile("inbox.css")
	if err != nil {
		t.Fatal(err)
	}
	css := string(b)
	light, dark, ok := strings.Cut(css[strings.Index(css, "*/"):], "@media (prefers-color-scheme: dark)")
	if !ok {
		t.Fatal("inbox.css has no dark theme")
	}
	dark, _, _ = strings.Cut(dark, "}\n}")
	themes := []struct {
		name string
		vars map[string]string
	}{{"light", vars(light)}, {"dark", vars(dark)}}

	rows := contrastRow.FindAllStringSubmatch(css, -1)
	if len(rows) < 8 {
		t.Fatalf("%d rows in the contrast table of inbox.css", len(rows))
	}
	for _, r := range rows {
		fg, bg, need := r[1], r[2], parseFloat(t, r[3])
		for i, theme := range themes {
			hexFG, hexBG, written := r[4+3*i], r[5+3*i], parseFloat(t, r[6+3*i])
			if theme.vars[fg] != hexFG || theme.vars[bg] != hexBG {
				t.Errorf("%s on %s, %s: the table says %s/%s, the variables are %s/%s", fg, bg, theme.name, hexFG, hexBG, theme.vars[fg], theme.vars[bg])
			}
			if got := contrast(t, hexFG, hexBG); got != written {
				t.Errorf("%s on %s, %s: the table says %.2f, the colours give %.2f", fg, bg, theme.name, written, got)
			}
			if written < need {
				t.Errorf("%s on %s, %s: %.2f:1, below the %.1f:1 it needs", fg, bg, theme.name, written, need)
			}
		}
	}
}

func vars(block string) map[string]string {
	m := map[string]string{}
	for _, v := range colourVar.FindAllStringSubmatch(block, -1) {
		m[v[1]] = v[2]
	}
	return m
}

func parseFloat(t *testing.T, s string) float64 {
	t.Helper()
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// contrast is WCAG 2's contrast ratio of two sRGB colours, rounded down to 2 decimals.
func contrast(t *testing.T, a, b string) float64 {
	t.Helper()
	la, lb := luminance(t, a), luminance(t, b)
	if la < lb {
		la, lb = lb, la
	}
	return math.Floor((la+0.05)/(lb+0.05)*100) / 100
}

func luminance(t *testing.T, hex string) float64 {
	t.Helper()
	n, err := strconv.ParseUint(hex[1:], 16, 32)
	if err != nil {
		t.Fatal(err)
	}
	var l float64
	for i, weight := range []float64{0.2126, 0.7152, 0.0722} {
		c := float64(n>>(16-8*i)&0xff) / 255
		if c <= 0.04045 {
			c /= 12.92
		} else {
			c = math.Pow((c+0.055)/1.055, 2.4)
		}
		l += weight * c
	}
	return l
}
