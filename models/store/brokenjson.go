package store

import (
	"context"
	"fmt"
	"log/slog"
	"messages/models"
	"reflect"
	"sync"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	lru "github.com/hashicorp/golang-lru/v2"
	"gorm.io/gorm"
	"gorm.io/gorm/schema"
)

// A column of JSON text (a message's payload, overrides, cta, content, delivery times and
// device tokens, the last mark's payload; a subscriber's data, channels and topics; a
// template's data, tags, steps, triggers and the rest) holds what this server wrote, but
// on MySQL and SQLite it is text to any other writer: an UPDATE in plain SQL can leave
// 'xxx' in it. Such a value is contained where the row is read, once, so that everything
// downstream only ever sees valid JSON: the field reads as no value (null, or omitted
// where the record omits it) and a warning names the table, the column and the row, never
// the content. The message scan checks its columns itself (jsonColumn); every read
// through GORM is checked by the callbacks below and the jsontext serializer.

// Broken values are logged once per row per brokenJSONLogEvery, and no more than
// brokenJSONLogBurst rows' warnings a brokenJSONLogEvery in all: a page read every second
// with a broken row, or an export of a million, must not flood the log. The rows not
// logged are counted in the next warning.
const (
	brokenJSONLogEvery = 10 * time.Minute
	brokenJSONLogBurst = 100
	// brokenJSONRowsKept bounds the rows remembered as logged: a key is a table name and
	// a 24-character id, so about 100 bytes an entry.
	brokenJSONRowsKept = 4096
)

// lenientJSON checks JSON as encoding/json reads it (duplicate names and invalid UTF-8
// are accepted), through jsontext, about three times quicker than json.Valid.
var lenientJSON = []jsontext.Options{jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)}

// isJSON reports whether j is one JSON value; no value (nil) is not a broken one.
func isJSON(j models.JSON) bool {
	return len(j) == 0 || jsontext.Value(j).IsValid(lenientJSON...)
}

// jsonFaults logs the rows read with a JSON column that held no JSON, rate limited.
type jsonFaults struct {
	log *slog.Logger
	now func() time.Time

	mu sync.Mutex
	// logged is when each row (table, id) was last logged.
	logged *lru.Cache[brokenRow, time.Time]
	// windowStart, windowLogged and unlogged limit the warnings of a window of
	// brokenJSONLogEvery to brokenJSONLogBurst, counting the rows left out.
	windowStart  time.Time
	windowLogged int
	unlogged     int
}

// brokenRow names a row by table and id.
type brokenRow struct{ table, id string }

func newJSONFaults(o openOptions) *jsonFaults {
	log := o.logger
	if log == nil {
		log = slog.Default()
	}
	return &jsonFaults{log: log, now: o.now, logged: newLRU[brokenRow, time.Time](brokenJSONRowsKept)}
}

// report warns that the row id of table was read with columns holding no JSON, unless
// the row was logged within brokenJSONLogEvery or the window's warnings are spent.
func (f *jsonFaults) report(table, id string, columns []string) {
	now := f.now()
	f.mu.Lock()
	if last, ok := f.logged.Get(brokenRow{table, id}); ok && now.Sub(last) < brokenJSONLogEvery {
		f.mu.Unlock()
		return
	}
	if now.Sub(f.windowStart) >= brokenJSONLogEvery {
		f.windowStart, f.windowLogged = now, 0
	}
	if f.windowLogged >= brokenJSONLogBurst {
		f.unlogged++
		f.mu.Unlock()
		return
	}
	f.windowLogged++
	f.logged.Add(brokenRow{table, id}, now)
	unlogged := f.unlogged
	f.unlogged = 0
	f.mu.Unlock()

	attrs := []any{"table", table, "columns", columns, "id", id}
	if unlogged > 0 {
		attrs = append(attrs, "rows_not_logged", unlogged)
	}
	f.log.Warn(brokenJSONMessage, attrs...)
}

// brokenJSONMessage is the warning of a row read with a JSON column holding no JSON.
const brokenJSONMessage = "stored JSON is not valid, answered as null: the row was written by another program"

// brokenJSONKey is the context key of a statement's brokenFields while GORM scans it.
type brokenJSONKey struct{}

// brokenFields are the serialized fields of a statement's rows that the jsontext
// serializer found holding no JSON.
type brokenFields struct {
	mu     sync.Mutex
	fields []brokenField
}

// brokenField is one of them: the row (the struct the field was set in) and the field.
type brokenField struct {
	row   reflect.Value
	field *schema.Field
}

// noteBrokenField records that field of row held no JSON, in the statement's
// brokenFields; false when ctx has none (a scan outside the store's callbacks).
func noteBrokenField(ctx context.Context, row reflect.Value, field *schema.Field) bool {
	b, ok := ctx.Value(brokenJSONKey{}).(*brokenFields)
	if !ok {
		return false
	}
	b.mu.Lock()
	b.fields = append(b.fields, brokenField{row, field})
	b.mu.Unlock()
	return true
}

// jsonType is the type of the free-form JSON fields the callbacks check.
var jsonType = reflect.TypeFor[models.JSON]()

// containJSON registers on db (the primary's handle or a replica's) the callbacks that
// contain JSON columns holding no JSON in every query through GORM: before the query,
// the statement gets the brokenFields the jsontext serializer notes its failures in;
// after the scan, before AfterFind (which copies the last mark's payload into the cta),
// each models.JSON field of the rows read is checked, a broken one set to no value, and
// every row with a broken column is reported.
func (s *Store) containJSON(db *gorm.DB) error {
	begin := func(db *gorm.DB) {
		if db.Statement.Context == nil {
			db.Statement.Context = context.Background()
		}
		db.Statement.Context = context.WithValue(db.Statement.Context, brokenJSONKey{}, &brokenFields{})
	}
	end := func(db *gorm.DB) {
		if db.Error != nil || db.Statement.Schema == nil {
			return
		}
		broken := map[brokenRow][]string{}
		var order []brokenRow
		note := func(r brokenRow, column string) {
			if _, ok := broken[r]; !ok {
				order = append(order, r)
			}
			broken[r] = append(broken[r], column)
		}
		ctx := db.Statement.Context
		table := db.Statement.Table
		if b, ok := ctx.Value(brokenJSONKey{}).(*brokenFields); ok {
			for _, f := range b.fields {
				note(brokenRow{table, rowID(ctx, f.field.Schema, f.row)}, f.field.DBName)
			}
		}
		sch := db.Statement.Schema
		var fields []*schema.Field
		for _, f := range sch.Fields {
			if f.FieldType == jsonType && f.DBName != "" {
				fields = append(fields, f)
			}
		}
		if len(fields) > 0 {
			eachRow(db.Statement.ReflectValue, sch.ModelType, func(row reflect.Value) {
				for _, f := range fields {
					v := f.ReflectValueOf(ctx, row)
					if j := v.Interface().(models.JSON); !isJSON(j) {
						v.SetZero()
						note(brokenRow{table, rowID(ctx, sch, row)}, f.DBName)
					}
				}
			})
		}
		for _, r := range order {
			s.jsonFaults.report(r.table, r.id, broken[r])
		}
	}
	cb := db.Callback().Query()
	if err := cb.Before("gorm:query").Register("messages:json_begin", begin); err != nil {
		return err
	}
	return cb.After("gorm:query").Before("gorm:after_query").Register("messages:json_contain", end)
}

// eachRow calls f with each struct of type t that v (a struct, a pointer to one, or a
// slice of either) holds; nothing when v holds another type.
func eachRow(v reflect.Value, t reflect.Type, f func(row reflect.Value)) {
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return
		}
		v = v.Elem()
	}
	switch {
	case v.Kind() == reflect.Slice || v.Kind() == reflect.Array:
		for i := range v.Len() {
			eachRow(v.Index(i), t, f)
		}
	case v.Type() == t:
		f(v)
	}
}

// rowID is the primary key of row as text, "" when its schema has none.
func rowID(ctx context.Context, sch *schema.Schema, row reflect.Value) string {
	if sch == nil || sch.PrioritizedPrimaryField == nil {
		return ""
	}
	v, _ := sch.PrioritizedPrimaryField.ValueOf(ctx, row)
	return fmt.Sprint(v)
}
