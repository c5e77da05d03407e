package models

import (
	"bytes"
	"encoding/json"
	"strings"
)

// RepeatedMember finds a member given twice in one object, anywhere in raw, comparing
// names as encoding/json matches them to struct fields (without regard to letter case):
// decoded, the last would silently win over the first. It reports nothing for input
// that is not JSON, which the decoder refuses.
func RepeatedMember(raw []byte) (name string, ok bool) {
	type level struct {
		object  bool
		wantKey bool
		names   map[string]bool
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	var stack []*level
	for {
		tok, err := dec.Token()
		if err != nil {
			return "", false
		}
		if name, isName := tok.(string); isName && len(stack) > 0 && stack[len(stack)-1].wantKey {
			top := stack[len(stack)-1]
			folded := strings.ToLower(strings.ToUpper(name))
			if top.names[folded] {
				return name, true
			}
			top.names[folded] = true
			top.wantKey = false
			continue
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &level{object: true, wantKey: true, names: map[string]bool{}})
			continue
		case json.Delim('['):
			stack = append(stack, &level{})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		// A value ended: its object's next token is a key.
		if len(stack) > 0 && stack[len(stack)-1].object {
			stack[len(stack)-1].wantKey = true
		}
	}
}
