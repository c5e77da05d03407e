package models_test

import (
	"testing"

	"messages/models"
)

// A member given twice in one object is found at any depth, in any letter case; the
// same name in different objects, in strings, or as a value is not a repeat.
func TestRepeatedMember(t *testing.T) {
	for _, tt := range []struct {
		raw, want string
		ok        bool
	}{
		{`{"a":1,"b":2}`, "", false},
		{`{"a":1,"a":2}`, "a", true},
		{`{"read":true,"READ":false}`, "READ", true},
		{`{"tags":{"or":["x"],"Or":[]}}`, "Or", true},
		{`{"tags":{"and":[{"or":["x"]},{"or":["y"]}]}}`, "", false},
		{`{"and":[{"or":["x"],"or":[]}]}`, "or", true},
		{`[{"a":1},{"a":2}]`, "", false},
		{`{"a":"a","b":{"a":1}}`, "", false},
		{`{"a":["a","a"]}`, "", false},
		{`{"k":"\u212a","\u212a":1}`, "\u212a", true}, // the Kelvin sign folds to k, as encoding/json matches it
		{`{"a":1,`, "", false},
		{`null`, "", false},
	} {
		name, ok := models.RepeatedMember([]byte(tt.raw))
		if name != tt.want || ok != tt.ok {
			t.Errorf("RepeatedMember(%s) = %q, %v; want %q, %v", tt.raw, name, ok, tt.want, tt.ok)
		}
	}
}
