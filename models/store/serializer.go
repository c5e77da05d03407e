package store

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"reflect"

	"gorm.io/gorm/schema"
)

func init() { schema.RegisterSerializer("jsontext", jsonTextSerializer{}) }

// jsonTextSerializer stores a field as JSON text like GORM's "json" serializer, but
// without HTML escaping, so "<&>" inside a stored payload comes back as "<&>".
type jsonTextSerializer struct{}

// Scan decodes the column into the field. A value that is not what the field reads (not
// JSON, or JSON of another shape), which only another writer can store, leaves the
// field's zero value and is noted for the statement's warning (brokenjson.go) instead of
// failing the whole read.
func (jsonTextSerializer) Scan(ctx context.Context, field *schema.Field, dst reflect.Value, dbValue any) error {
	v := reflect.New(field.FieldType)
	var b []byte
	ok := true
	switch d := dbValue.(type) {
	case nil:
	case []byte:
		b = d
	case string:
		b = []byte(d)
	default:
		ok = false // a number, which SQLite hands back for one another writer stored
	}
	if ok && len(bytes.TrimSpace(b)) > 0 {
		ok = json.Unmarshal(b, v.Interface()) == nil
	}
	if !ok {
		v.Elem().SetZero() // what a failed decode left half set
		if !noteBrokenField(ctx, dst, field) {
			// Read outside the store's query callbacks (a Raw scan): contained all the
			// same, and said without the row's id.
			slog.WarnContext(ctx, brokenJSONMessage, "table", field.Schema.Table, "columns", []string{field.DBName})
		}
	}
	field.ReflectValueOf(ctx, dst).Set(v.Elem())
	return nil
}

// Value encodes the field as JSON text.
func (jsonTextSerializer) Value(_ context.Context, _ *schema.Field, _ reflect.Value, fieldValue any) (any, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(fieldValue); err != nil {
		return nil, err
	}
	return string(bytes.TrimSuffix(buf.Bytes(), []byte("\n"))), nil
}
