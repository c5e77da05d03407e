package store

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	"gorm.io/gorm/schema"
)

func init() { schema.RegisterSerializer("jsontext", jsonTextSerializer{}) }

// jsonTextSerializer stores a field as JSON text like GORM's "json" serializer, but
// without HTML escaping, so "<&>" inside a stored payload comes back as "<&>".
type jsonTextSerializer struct{}

// Scan decodes the column into the field.
func (jsonTextSerializer) Scan(ctx context.Context, field *schema.Field, dst reflect.Value, dbValue any) error {
	v := reflect.New(field.FieldType)
	var b []byte
	switch d := dbValue.(type) {
	case nil:
	case []byte:
		b = d
	case string:
		b = []byte(d)
	default:
		return fmt.Errorf("column %s: cannot read JSON from %T", field.DBName, dbValue)
	}
	if len(b) > 0 {
		if err := json.Unmarshal(b, v.Interface()); err != nil {
			return fmt.Errorf("column %s: %w", field.DBName, err)
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
