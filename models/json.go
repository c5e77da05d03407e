package models

import (
	"bytes"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
)

// JSON is a free-form JSON value (payload, overrides, data) kept byte for byte as
// stored, so clients get back exactly what they sent. A nil JSON means "no value".
// Every JSON a writer below sees is JSON: one from a client was parsed on its way in
// (UnmarshalJSON, UnmarshalGQL), one from the database was checked where its row was
// read, the store answering no value for text another program left that is not JSON.
type JSON json.RawMessage

// MarshalJSON writes the stored bytes; nil writes null (fields using JSON are omitempty).
func (j JSON) MarshalJSON() ([]byte, error) {
	if len(j) == 0 {
		return []byte("null"), nil
	}
	return j, nil
}

// UnmarshalJSON keeps the value compacted; null becomes "no value".
func (j *JSON) UnmarshalJSON(b []byte) error {
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		*j = nil
		return nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return err
	}
	*j = JSON(buf.Bytes())
	return nil
}

// IsObject reports whether the value is a JSON object.
func (j JSON) IsObject() bool {
	b := bytes.TrimSpace(j)
	return len(b) > 0 && b[0] == '{'
}

// MarshalGQL writes the value as it is into a GraphQL response.
func (j JSON) MarshalGQL(w io.Writer) {
	if len(j) == 0 {
		_, _ = io.WriteString(w, "null")
		return
	}
	_, _ = w.Write(j)
}

// UnmarshalGQL accepts any GraphQL input value and keeps its JSON encoding.
func (j *JSON) UnmarshalGQL(v any) error {
	if v == nil {
		*j = nil
		return nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("value is not representable as JSON: %w", err)
	}
	*j = JSON(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
	return nil
}

// Value stores the JSON text; no value stores NULL.
func (j JSON) Value() (driver.Value, error) {
	if len(j) == 0 {
		return nil, nil
	}
	return string(j), nil
}

// Scan reads JSON text from either driver.
func (j *JSON) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		*j = nil
	case []byte:
		*j = append(JSON(nil), v...)
	case string:
		*j = JSON(v)
	case int64:
		// SQLite gives a JSON column numeric affinity: a stored number comes back as one.
		*j = strconv.AppendInt(nil, v, 10)
	case float64:
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return errors.New("models.JSON: a number JSON cannot hold")
		}
		*j = strconv.AppendFloat(nil, v, 'g', -1, 64)
	default:
		return errors.New("models.JSON: unsupported column type")
	}
	if bytes.Equal(*j, []byte("null")) {
		*j = nil
	}
	return nil
}

// GormDataType declares JSON columns for both dialects.
func (JSON) GormDataType() string { return "json" }

// MaxActionPayloadBytes bounds the payload a client stores with a mark: what a button's
// result carries (a form's answers, a choice) is a few hundred bytes, and every later page
// holding the message carries it again.
const MaxActionPayloadBytes = 64 << 10

// MaxJSONDepth bounds how deeply a stored free-form value may nest: far beyond any real
// payload, low enough that no reader of it recurses dangerously.
const MaxJSONDepth = 64

// Depth returns how deeply arrays and objects nest in the value (0 for a scalar).
func (j JSON) Depth() int {
	depth, deepest, inString, escaped := 0, 0, false, false
	for _, c := range j {
		switch {
		case inString && escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		case inString:
		case c == '{' || c == '[':
			depth++
			deepest = max(deepest, depth)
		case c == '}' || c == ']':
			depth--
		}
	}
	return deepest
}

// CanonicalJSON re-encodes one JSON value with sorted keys, no insignificant whitespace
// and numbers as written, so that two spellings of the same value compare equal: an
// idempotency key's fingerprint of a request body or of GraphQL variables. Anything that
// is not exactly one JSON value is returned as it is.
func CanonicalJSON(raw []byte) []byte {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return raw
	}
	if _, err := dec.Token(); err != io.EOF {
		return raw
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return raw
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}
