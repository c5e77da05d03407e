package models

import (
	"database/sql/driver"
	"fmt"
	"io"
	"strconv"
	"time"
)

// TimeLayout is the wire form of every timestamp: ISO-8601 in UTC with milliseconds,
// as the platform's SDKs expect (2025-03-01T08:00:00.000Z).
const TimeLayout = "2006-01-02T15:04:05.000Z07:00"

// Time is a UTC instant with millisecond precision. It marshals in TimeLayout for JSON
// and GraphQL and is stored as DATETIME(3).
type Time struct{ time.Time }

// NewTime truncates t to milliseconds in UTC, the precision the API and the database keep.
func NewTime(t time.Time) Time { return Time{t.UTC().Truncate(time.Millisecond)} }

// TimePtr is NewTime returning a pointer, for optional timestamps.
func TimePtr(t time.Time) *Time { v := NewTime(t); return &v }

// String renders the wire form.
func (t Time) String() string { return t.UTC().Format(TimeLayout) }

// ParseTime reads an RFC 3339 timestamp (any precision and offset) into a Time.
func ParseTime(s string) (Time, error) {
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return Time{}, fmt.Errorf("%q is not an ISO-8601 timestamp", s)
	}
	return NewTime(v), nil
}

// MarshalJSON writes the wire form.
func (t Time) MarshalJSON() ([]byte, error) {
	return []byte(`"` + t.String() + `"`), nil
}

// UnmarshalJSON reads any RFC 3339 timestamp.
func (t *Time) UnmarshalJSON(b []byte) error {
	s, err := strconv.Unquote(string(b))
	if err != nil {
		return fmt.Errorf("timestamp must be a string, got %s", b)
	}
	v, err := ParseTime(s)
	if err != nil {
		return err
	}
	*t = v
	return nil
}

// MarshalGQL writes the wire form as a GraphQL string.
func (t Time) MarshalGQL(w io.Writer) { _, _ = w.Write(t.AppendGQL(nil)) }

// AppendGQL appends what MarshalGQL writes (the wire form, quoted: it has nothing to
// escape), for graph's generated list encoders, which write without an io.Writer.
func (t Time) AppendGQL(b []byte) []byte {
	b = append(b, '"')
	b = t.UTC().AppendFormat(b, TimeLayout)
	return append(b, '"')
}

// UnmarshalGQL reads a GraphQL string timestamp.
func (t *Time) UnmarshalGQL(v any) error {
	s, ok := v.(string)
	if !ok {
		return fmt.Errorf("timestamp must be a string")
	}
	p, err := ParseTime(s)
	if err != nil {
		return err
	}
	*t = p
	return nil
}

// Value stores the instant in UTC with millisecond precision.
func (t Time) Value() (driver.Value, error) { return t.UTC().Truncate(time.Millisecond), nil }

// Scan reads a stored instant; drivers hand back time.Time (MySQL with parseTime, SQLite).
func (t *Time) Scan(src any) error {
	switch v := src.(type) {
	case time.Time:
		*t = NewTime(v)
		return nil
	case nil:
		*t = Time{}
		return nil
	default:
		return fmt.Errorf("models.Time: cannot scan %T", src)
	}
}

// GormDataType makes GORM treat Time as a timestamp column.
func (Time) GormDataType() string { return "time" }
