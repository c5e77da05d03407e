package report

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFigures(t *testing.T) {
	got := []string{MS(0), MS(1.234), MS(12.34), MS(1234.4), MB(0), MB(41.6), Ratio(-1), Ratio(1.5), Clip(" a\n b  c ", 3), Clip("abc", 3)}
	want := []string{"-", "1.23 ms", "12.3 ms", "1234 ms", "-", "42 MB", "-", "1.50x", "a b...", "abc"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
