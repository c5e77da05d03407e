package graph

import (
	"io"
	"math"
	"slices"
	"strconv"
	"sync/atomic"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"messages/graph/internal/buffers"
)

// The records of a list query are written straight from the store's structs by encoders
// that gqlgen's plugin of graph/internal/listencoders writes from gqlgen's own binding
// of the schema (listencoders.generated.go), instead of by gqlgen's executor, which for
// every field of every message builds a field context, runs the field middleware, boxes
// the value and, for lists, starts a goroutine per element. What is written is what
// gqlgen writes, byte for byte (listquery_test.go holds them to that on random
// selections and records); a value the encoders cannot write exactly (null where the
// schema forbids it, an error) is declined, and gqlgen's executor writes the whole root
// field instead. A resolver field below the root (a Node's id) is called where the
// executor calls it, with the root field's context rather than a field context of its
// own: building those is part of what the encoders save. This file holds what the
// generated encoders share: the plans, the buffer and the scalar appenders.

// listSelection is what an operation selects of one object type: planned once per
// operation from its selection set, then written for every record.
type listSelection struct {
	fields []listField
	// written is the length of the value last written with this selection, at a root
	// field: the size of the next one's buffer.
	written atomic.Int64
}

// listField is one field of a selection.
type listField struct {
	// key is `"alias":`, with a leading comma after the first field.
	key []byte
	// field is the field's number in its type's generated encoder; 0 is __typename.
	field int
	// sub is the selection of an object (or list of objects) field.
	sub *listSelection
}

// planSelection plans what set selects of an object whose type and interfaces are
// satisfies; field numbers each collected field and plans its selection. It reports
// false when a field has no encoder or is deferred (gqlgen answers those).
func planSelection(oc *graphql.OperationContext, set ast.SelectionSet, satisfies []string,
	field func(graphql.CollectedField) (int, *listSelection, bool)) (*listSelection, bool) {
	collected := graphql.CollectFields(oc, set, satisfies)
	s := &listSelection{fields: make([]listField, 0, len(collected))}
	seen := make(map[string]bool, len(collected))
	for _, f := range collected {
		if len(f.Deferrables) > 0 {
			return nil, false
		}
		if seen[f.Alias] {
			continue
		}
		seen[f.Alias] = true
		n, sub, ok := field(f)
		if !ok {
			return nil, false
		}
		var key []byte
		if len(s.fields) > 0 {
			key = append(key, ',')
		}
		key = append(appendQuotedString(key, f.Alias), ':')
		s.fields = append(s.fields, listField{key: key, field: n, sub: sub})
	}
	return s, true
}

// planRoots plans the root fields of set (of the root type whose names are satisfies)
// that plan accepts, by alias.
func planRoots(oc *graphql.OperationContext, set ast.SelectionSet, satisfies []string,
	plan func(graphql.CollectedField) (*listSelection, bool)) map[string]*listSelection {
	var out map[string]*listSelection
	for _, f := range graphql.CollectFields(oc, set, satisfies) {
		if len(f.Deferrables) > 0 {
			continue
		}
		if s, ok := plan(f); ok {
			if out == nil {
				out = map[string]*listSelection{}
			}
			out[f.Alias] = s
		}
	}
	return out
}

// listWriter is the JSON of one root field's value as the encoders write it; gqlgen's
// executor takes it as the field's answer (a graphql.Marshaler), which it writes into the
// response once. Its buffer comes from a pool and goes back once written.
type listWriter struct {
	b   []byte
	buf *[]byte
}

var _ graphql.Marshaler = (*listWriter)(nil)

// fieldBuffers are the buffers of the list encoders, kept up to 1 MiB (bufferSize).
var fieldBuffers = buffers.New(2<<10, 1<<20)

// newListWriter returns a writer whose buffer holds size bytes without growing.
func newListWriter(size int) *listWriter {
	buf := fieldBuffers.Get()
	return &listWriter{b: slices.Grow(*buf, size), buf: buf}
}

// MarshalGQL writes the value into the response, and gives the buffer back.
func (w *listWriter) MarshalGQL(out io.Writer) {
	_, _ = out.Write(w.b)
	w.release()
}

// release gives the buffer back to the pool; the writer holds nothing after.
func (w *listWriter) release() {
	if w.buf != nil {
		fieldBuffers.Put(w.buf, w.b)
	}
	w.b, w.buf = nil, nil
}

// Write appends p, for the marshallers of scalars (models.Time, models.JSON, the enums).
func (w *listWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

// WriteString appends s, for marshallers writing through io.WriteString.
func (w *listWriter) WriteString(s string) (int, error) {
	w.b = append(w.b, s...)
	return len(s), nil
}

// The appenders below write what gqlgen's marshallers of the built-in scalars write
// (the plugin's appenders table names which is which), without boxing the value.

// appendString appends a String or ID as graphql.MarshalString does.
func appendString(b []byte, s string) ([]byte, bool) { return appendQuotedString(b, s), true }

// appendInt appends an Int as graphql.MarshalInt does.
func appendInt(b []byte, i int) ([]byte, bool) { return strconv.AppendInt(b, int64(i), 10), true }

// appendBoolean appends a Boolean as graphql.MarshalBoolean does.
func appendBoolean(b []byte, v bool) ([]byte, bool) { return strconv.AppendBool(b, v), true }

// appendFloat appends a Float as graphql.MarshalFloatContext does (%g), and declines
// what it refuses: what JSON cannot hold.
func appendFloat(b []byte, f float64) ([]byte, bool) {
	return strconv.AppendFloat(b, f, 'g', -1, 64), !math.IsInf(f, 0) && !math.IsNaN(f)
}

// appendQuotedString appends s quoted as gqlgen quotes a String: only '"', '\\' and
// control characters are escaped, and every other byte is written as it is.
func appendQuotedString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '\t':
			b = append(b, `\t`...)
		case '\r':
			b = append(b, `\r`...)
		case '\n':
			b = append(b, `\n`...)
		case '\\', '"':
			b = append(b, '\\', c)
		default:
			b = append(b, `\u00`...)
			b = append(b, hexDigits[c>>4], hexDigits[c&0xf])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

const hexDigits = "0123456789ABCDEF"
