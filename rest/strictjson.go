package rest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"

	"messages/models"
)

// A filter this server cannot apply is refused, never dropped: dropped, it would turn a
// narrow bulk change into one over everything. decodeStrict reads the inbox API's filters
// so that nothing of them is ignored.

// decodeStrict decodes raw, one JSON value, into v, refusing (422, naming the member)
// what v would otherwise ignore or read as something else: a member v has no field for,
// a member given twice (the last would win, in any letter case), a value of the wrong
// JSON type. fields names what v takes, for the refusal of an unknown member. Syntax
// errors are malformed (400).
func decodeStrict(raw []byte, v any, fields string) error {
	if name, ok := models.RepeatedMember(raw); ok {
		name = quotedKey(name)
		return models.Invalid(name, nil, fmt.Sprintf("%s is given twice: give each member once", name))
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return decodeError(err, reflect.TypeOf(v), fields)
	}
	if _, err := dec.Token(); err != io.EOF {
		return models.Errorf(models.EMALFORMED, "request body has data after the JSON value")
	}
	return nil
}

// decodeError is err of encoding/json, decoding into a value of type t, in the
// documented error body: a member of the wrong type or an unknown one is 422 naming it;
// anything else is malformed JSON (400). A refusal of a member's own decoder (a
// *models.Error) is kept as it is.
func decodeError(err error, t reflect.Type, fields string) error {
	var coded *models.Error
	if errors.As(err, &coded) {
		return coded
	}
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) && typeErr.Field != "" {
		want := typeErr.Type
		if member := memberType(t, typeErr.Field); member != nil {
			want = member // the member's type, not its element's
		}
		return models.Invalid(typeErr.Field, nil,
			fmt.Sprintf("%s must be %s, not %s", typeErr.Field, jsonTypeName(want), jsonTypeOf(typeErr.Value)))
	}
	// encoding/json names an unknown member only in its message: json: unknown field "x".
	if name, ok := strings.CutPrefix(err.Error(), `json: unknown field "`); ok {
		name = strings.TrimSuffix(name, `"`)
		return models.Invalid(quotedKey(name), nil, fmt.Sprintf("unknown member %q: this server takes %s", quotedKey(name), fields))
	}
	return models.Errorf(models.EMALFORMED, "request body is not valid JSON")
}

// jsonTypeOf is the JSON type an UnmarshalTypeError's value had, in JSON's words.
func jsonTypeOf(value string) string {
	switch {
	case value == "number" || strings.HasPrefix(value, "number "):
		return "a number"
	case value == "bool":
		return "true or false"
	case value == "string":
		return "a string"
	}
	return "an " + value
}

// memberType is the type of the member at path (names joined by dots, as
// UnmarshalTypeError.Field has them) of a value of type t, or nil.
func memberType(t reflect.Type, path string) reflect.Type {
	for name := range strings.SplitSeq(path, ".") {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			return nil
		}
		found := false
		for i := range t.NumField() {
			f := t.Field(i)
			if tag, _, _ := strings.Cut(f.Tag.Get("json"), ","); tag == name {
				t, found = f.Type, true
				break
			}
		}
		if !found {
			return nil
		}
	}
	return t
}

// jsonTypeName is a Go type a member decodes into, as the JSON a client must send.
func jsonTypeName(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Bool:
		return "true or false"
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array of " + strings.TrimPrefix(strings.TrimPrefix(jsonTypeName(t.Elem()), "a "), "an ") + "s"
	}
	return "an object"
}
