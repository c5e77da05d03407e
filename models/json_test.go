package models

import (
	"strings"
	"testing"
)

func TestJSONDepth(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
	}{
		{`1`, 0},
		{`{}`, 1},
		{`{"a":[1,{"b":2}]}`, 3},
		{`{"a":"{[[[\"]]]"}`, 1},
		{`[[],[[]]]`, 3},
		{strings.Repeat("[", 100) + strings.Repeat("]", 100), 100},
	} {
		if got := JSON(tc.in).Depth(); got != tc.want {
			t.Errorf("Depth(%s) = %d, want %d", tc.in, got, tc.want)
		}
	}
}
