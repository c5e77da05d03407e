package models

import (
	"encoding/json"
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

// A JSON column reads back what was stored, also where SQLite's numeric affinity hands
// the driver a number instead of the text.
func TestJSONScan(t *testing.T) {
	for _, tc := range []struct {
		name string
		src  any
		want string // "" for no value
		err  bool
	}{
		{"text", `{"a":1}`, `{"a":1}`, false},
		{"bytes", []byte(`[1,2]`), `[1,2]`, false},
		{"null", nil, "", false},
		{"jsonNull", `null`, "", false},
		{"sqliteInteger", int64(-7), `-7`, false},
		{"sqliteReal", 2.5, `2.5`, false},
		{"sqliteLargeReal", 1e21, `1e+21`, false},
		{"bool", true, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var j JSON
			err := j.Scan(tc.src)
			if (err != nil) != tc.err || string(j) != tc.want {
				t.Errorf("Scan(%#v) = %q, %v; want %q (error %v)", tc.src, j, err, tc.want, tc.err)
			}
		})
	}
}

// An enum value is written as a GraphQL String, JSON even when the stored value is not
// one of the enum's (strconv.Quote would write "\x01", which is not JSON).
func TestEnumMarshalGQLIsJSON(t *testing.T) {
	for _, v := range []string{"done", "", "\x01\x7f", `q"b\`, "é\u2028"} {
		var b strings.Builder
		MessageActionStatus(v).MarshalGQL(&b)
		var back string
		if err := json.Unmarshal([]byte(b.String()), &back); err != nil || back != v {
			t.Errorf("%q written as %s: reads back %q, %v", v, b.String(), back, err)
		}
	}
}
