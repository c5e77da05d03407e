package store

import (
	"bytes"
	"database/sql"
	"fmt"
	"messages/models"
	"reflect"
	"strings"

	jsonv1 "github.com/go-json-experiment/json/v1"
)

// The hot reads (every list page, cursor page and mark read-back, through readMessages)
// scan their rows here, into the records' fields directly, instead of through GORM's
// Find: Find sets each of a row's ~60 columns through reflection and decodes every JSON
// column through a reflective serializer, which was a fifth of the server's CPU per inbox
// page. The column list (messagecolumns.generated.go) is generated from the record's
// struct and GORM tags by models/internal/recordgen, each column with the field it is
// read into; scan_test.go compares it with GORM's own columns and what both ways read,
// field by field.

// column is one selected column and where a row's value of it goes.
type column[R any] struct {
	name string
	dest func(r *R) any
}

// messageSelect is the message's part of readMessages' select list, in the order
// joinedScan reads it.
var messageSelect = selectList("messages", messageColumns)

// selectList renders columns qualified by table.
func selectList[R any](table string, columns []column[R]) string {
	var b strings.Builder
	for i, c := range columns {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s.%s", table, quoteColumn(c.name))
	}
	return b.String()
}

// quoteColumn quotes the one column name that is a reserved word in MySQL ("read");
// both dialects accept backquotes.
func quoteColumn(name string) string {
	if name == "read" {
		return "`read`"
	}
	return name
}

// joinedScan is one row of readMessages' statement being read: the message, and the
// versions of its subscriber and its template when joined (zero when the record does not
// exist). The row is scanned into fields of its own, whose destinations are made once per
// statement, and the message copied out into a new record.
type joinedScan struct {
	msg                                models.Message
	subscriberVersion, templateVersion models.Stamp
	dest                               []any
	// broken are the JSON columns of the current row that held no JSON (jsonColumn),
	// reported to faults once the row is read.
	broken []string
	faults *jsonFaults
}

// newJoinedScan prepares the destinations of one row of the shape e selects; a row's
// JSON columns that hold no JSON are reported to faults.
func newJoinedScan(e embedded, faults *jsonFaults) *joinedScan {
	r := &joinedScan{faults: faults}
	for _, c := range messageColumns {
		d := c.dest(&r.msg)
		if j, ok := d.(*jsonColumn); ok {
			j.name, j.broken = c.name, &r.broken
		}
		r.dest = append(r.dest, d)
	}
	if e.Subscribers {
		r.dest = append(r.dest, &r.subscriberVersion)
	}
	if e.Templates {
		r.dest = append(r.dest, &r.templateVersion)
	}
	return r
}

// read scans the current row of rows and returns its message; the versions stay in r
// until the next row.
func (r *joinedScan) read(rows *sql.Rows) (*models.Message, error) {
	// Zero for this row: a NULL leaves a destination as it was, and the record handed out
	// keeps the slices its JSON columns were decoded into.
	r.msg, r.subscriberVersion, r.templateVersion = models.Message{}, models.Stamp{}, models.Stamp{}
	r.broken = r.broken[:0]
	if err := rows.Scan(r.dest...); err != nil {
		return nil, err
	}
	if len(r.broken) > 0 {
		r.faults.report("messages", r.msg.ID, r.broken)
	}
	m := new(models.Message)
	*m = r.msg
	m.ApplyMark()
	m.Normalize()
	return m, nil
}

// jsonColumn reads a column of JSON text into its field: decoded into v (a field stored
// with the jsontext serializer), or kept as stored in raw (a models.JSON field) once
// checked to be JSON. NULL and empty text leave the zero value. So does a value that is
// not what the field reads (not JSON, or JSON of another shape), which only another
// writer can store: the field reads as no value and the column is added to broken, so
// that one broken column costs its own field, not the page, and every API answers valid
// JSON (docs/reliability.md).
type jsonColumn struct {
	v   any
	raw *models.JSON
	// name is the column's, appended to broken when it holds no JSON; both set by
	// newJoinedScan.
	name   string
	broken *[]string
}

// Scan decodes or checks src.
func (c *jsonColumn) Scan(src any) error {
	if c.raw != nil {
		err := c.raw.Scan(src)
		if err == nil && len(bytes.TrimSpace(*c.raw)) == 0 {
			*c.raw = nil
		} else if err != nil || !isJSON(*c.raw) {
			*c.raw = nil
			c.fail()
		}
		return nil
	}
	var b []byte
	switch s := src.(type) {
	case nil:
		return nil
	case []byte:
		b = s
	case string:
		b = []byte(s)
	default:
		c.fail()
		return nil
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil
	}
	// encoding/json's semantics, from its v2 implementation (jsonv1): these columns are
	// decoded for every message of every page, where it takes less than half the time.
	if err := jsonv1.Unmarshal(b, c.v); err != nil {
		reflect.ValueOf(c.v).Elem().SetZero() // what the failed decode left half set
		c.fail()
	}
	return nil
}

// fail notes the column as broken for the current row.
func (c *jsonColumn) fail() {
	if c.broken != nil {
		*c.broken = append(*c.broken, c.name)
	}
}

// optionalTime reads a nullable timestamp into an optional Time.
type optionalTime struct{ t **models.Time }

// Scan sets the time, or nil for NULL.
func (o optionalTime) Scan(src any) error {
	if src == nil {
		*o.t = nil
		return nil
	}
	var t models.Time
	if err := t.Scan(src); err != nil {
		return err
	}
	*o.t = &t
	return nil
}
