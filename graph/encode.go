package graph

import (
	"context"
	"math"
	"reflect"
	"strconv"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"messages/models"
)

// The records of a list query are written straight from the store's structs by encoders
// compiled once from the schema and the Go types gqlgen binds it to (gqlgen.yml: autobind
// by JSON name), instead of by gqlgen's executor, which for every field of every message
// builds a field context, runs the field middleware, boxes the value and, for lists,
// starts a goroutine per element. What is written is what gqlgen writes, byte for byte
// (encode_test.go holds it to that on random selections and records); a value the
// encoders cannot write exactly (null where the schema forbids it) is declined, and
// gqlgen's own marshaller writes the whole field instead.

// objectEncoder writes one GraphQL object type from one Go struct type.
type objectEncoder struct {
	name string
	// satisfies names the type and its interfaces, for fragments' type conditions.
	satisfies []string
	// typename is the value of __typename, quoted.
	typename []byte
	// fields by GraphQL name; a field gqlgen resolves in a way these encoders do not know
	// is absent, and a selection of it is left to gqlgen.
	fields map[string]*fieldEncoder
}

// fieldEncoder writes one field of an object.
type fieldEncoder struct {
	// index is the struct field holding the value, when resolve is nil.
	index []int
	// resolve computes a field gqlgen serves with a resolver method (a Node's id).
	resolve func(ctx context.Context, obj reflect.Value) (string, error)
	value   *valueEncoder
}

// valueKind is how a value is written.
type valueKind int

const (
	kindString valueKind = iota // String, ID and the enums (models' MarshalGQL): gqlgen's quoting
	kindInt
	kindFloat
	kindBool
	kindTime
	kindJSON
	kindList
	kindObject
)

// valueEncoder writes a value at one place of the schema: a field's type or a list's
// element type.
type valueEncoder struct {
	kind    valueKind
	nonNull bool
	// pointer: the Go value is a pointer, nil being null.
	pointer bool
	// emptyIsNull: "" is written as null, as emptyAsNull answers for a nullable text field.
	emptyIsNull bool
	elem        *valueEncoder  // kindList
	object      *objectEncoder // kindObject
}

// encoders compiles the encoders of the object types reachable from roots.
type encoders struct {
	schema    *ast.Schema
	resolvers map[string]func(ctx context.Context, obj reflect.Value) (string, error)
	// resolved names the fields gqlgen serves with resolver methods, "Type.field".
	resolved map[string]bool
	objects  map[encoderKey]*objectEncoder
}

type encoderKey struct {
	name string
	typ  reflect.Type
}

// newEncoders compiles an encoder for each root: a GraphQL object type and the Go
// struct type its resolver returns.
func newEncoders(schema *ast.Schema, r ResolverRoot, roots map[string]reflect.Type) map[string]*objectEncoder {
	c := &encoders{
		schema:   schema,
		resolved: resolverFields(reflect.TypeOf((*ResolverRoot)(nil)).Elem()),
		objects:  map[encoderKey]*objectEncoder{},
		resolvers: map[string]func(context.Context, reflect.Value) (string, error){
			"Message.id": func(ctx context.Context, v reflect.Value) (string, error) {
				return r.Message().ID(ctx, v.Addr().Interface().(*models.Message))
			},
			"Subscriber.id": func(ctx context.Context, v reflect.Value) (string, error) {
				return r.Subscriber().ID(ctx, v.Addr().Interface().(*models.Subscriber))
			},
			"Template.id": func(ctx context.Context, v reflect.Value) (string, error) {
				return r.Template().ID(ctx, v.Addr().Interface().(*models.Template))
			},
		},
	}
	out := make(map[string]*objectEncoder, len(roots))
	for name, typ := range roots {
		out[name] = c.object(schema.Types[name], typ)
	}
	return out
}

// resolverFields lists the fields gqlgen serves with resolver methods: each method of
// each XResolver interface the root returns is one field of type X.
func resolverFields(root reflect.Type) map[string]bool {
	out := map[string]bool{}
	for i := range root.NumMethod() {
		m := root.Method(i)
		iface := m.Type.Out(0)
		for j := range iface.NumMethod() {
			out[m.Name+"."+strings.ToLower(iface.Method(j).Name)] = true
		}
	}
	return out
}

// object compiles the encoder of def written from the struct type typ.
func (c *encoders) object(def *ast.Definition, typ reflect.Type) *objectEncoder {
	key := encoderKey{def.Name, typ}
	if e, ok := c.objects[key]; ok {
		return e
	}
	e := &objectEncoder{
		name:      def.Name,
		satisfies: append([]string{def.Name}, def.Interfaces...),
		typename:  strconv.AppendQuote(nil, def.Name),
		fields:    map[string]*fieldEncoder{},
	}
	c.objects[key] = e // before the fields: types refer to each other
	jsonNames := map[string][]int{}
	for _, f := range reflect.VisibleFields(typ) {
		if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name != "" && name != "-" && f.IsExported() {
			jsonNames[name] = f.Index
		}
	}
	for _, fd := range def.Fields {
		if strings.HasPrefix(fd.Name, "__") {
			continue
		}
		qualified := def.Name + "." + fd.Name
		if c.resolved[def.Name+"."+strings.ToLower(fd.Name)] {
			if resolve := c.resolvers[qualified]; resolve != nil && isText(fd.Type) {
				e.fields[fd.Name] = &fieldEncoder{resolve: resolve, value: &valueEncoder{kind: kindString, nonNull: fd.Type.NonNull}}
			}
			continue
		}
		index, ok := jsonNames[goFieldNames[qualified]]
		if !ok {
			index, ok = jsonNames[fd.Name]
		}
		if !ok {
			continue
		}
		if v := c.value(fd.Type, typ.FieldByIndex(index).Type, true); v != nil {
			e.fields[fd.Name] = &fieldEncoder{index: index, value: v}
		}
	}
	return e
}

// goFieldNames are gqlgen.yml's fieldName bindings, by the JSON name of the Go field.
var goFieldNames = map[string]string{"Subscriber._v": "__v"}

// isText reports whether t is a non-list String or ID.
func isText(t *ast.Type) bool {
	return t.Elem == nil && (t.NamedType == "String" || t.NamedType == "ID")
}

// value compiles the encoder of a value of GraphQL type t held in Go type typ, or nil
// when the two do not match in a way these encoders write. field says the value is a
// field's, which emptyAsNull applies to, rather than a list element.
func (c *encoders) value(t *ast.Type, typ reflect.Type, field bool) *valueEncoder {
	v := &valueEncoder{nonNull: t.NonNull}
	if typ.Kind() == reflect.Pointer {
		v.pointer, typ = true, typ.Elem()
	}
	if t.Elem != nil {
		if typ.Kind() != reflect.Slice || v.pointer {
			return nil
		}
		v.kind, v.elem = kindList, c.value(t.Elem, typ.Elem(), false)
		if v.elem == nil {
			return nil
		}
		return v
	}
	def := c.schema.Types[t.NamedType]
	switch {
	case def == nil:
		return nil
	case def.Kind == ast.Object && typ.Kind() == reflect.Struct:
		v.kind, v.object = kindObject, c.object(def, typ)
		return v
	case (def.Kind == ast.Enum || t.NamedType == "String" || t.NamedType == "ID") && typ.Kind() == reflect.String:
		v.kind = kindString
	case t.NamedType == "Int" && typ.Kind() == reflect.Int:
		v.kind = kindInt
	case t.NamedType == "Float" && typ.Kind() == reflect.Float64:
		v.kind = kindFloat
	case t.NamedType == "Boolean" && typ.Kind() == reflect.Bool:
		v.kind = kindBool
	case t.NamedType == "DateTime" && typ == reflect.TypeFor[models.Time]():
		v.kind = kindTime
	case t.NamedType == "JSON" && typ == reflect.TypeFor[models.JSON]() && !v.pointer:
		v.kind = kindJSON
	default:
		return nil
	}
	v.emptyIsNull = field && !t.NonNull && !v.pointer && emptyText(reflect.Zero(typ).Interface())
	return v
}

// selection is what an operation selects of one object type: compiled once per request
// from the selection set, then written for every record.
type selection struct {
	object *objectEncoder
	fields []selectedField
}

// selectedField is one field of a selection.
type selectedField struct {
	// key is `"alias":`, with a leading comma after the first field.
	key   []byte
	field *fieldEncoder // nil for __typename
	sub   *selection    // the selection of an object (or list of objects) field
}

// plan compiles what set selects of e's type, or reports false when it selects a field
// the encoders do not write or defers one (gqlgen answers those).
func (e *objectEncoder) plan(oc *graphql.OperationContext, set ast.SelectionSet) (*selection, bool) {
	collected := graphql.CollectFields(oc, set, e.satisfies)
	s := &selection{object: e, fields: make([]selectedField, 0, len(collected))}
	seen := make(map[string]bool, len(collected))
	for _, f := range collected {
		if len(f.Deferrables) > 0 {
			return nil, false
		}
		if seen[f.Alias] {
			continue
		}
		seen[f.Alias] = true
		var key []byte
		if len(s.fields) > 0 {
			key = append(key, ',')
		}
		key = append(appendQuotedString(key, f.Alias), ':')
		sf := selectedField{key: key}
		if f.Name != "__typename" {
			if sf.field = e.fields[f.Name]; sf.field == nil {
				return nil, false
			}
			if obj := sf.field.value.objectType(); obj != nil {
				sub, ok := obj.plan(oc, f.Selections)
				if !ok {
					return nil, false
				}
				sf.sub = sub
			}
		}
		s.fields = append(s.fields, sf)
	}
	return s, true
}

// objectType is the object a value (or a list's elements, however nested) is.
func (v *valueEncoder) objectType() *objectEncoder {
	for v.kind == kindList {
		v = v.elem
	}
	return v.object
}

// encode appends the selection of the struct obj (addressable), or reports false when
// a value cannot be written as gqlgen would.
func (s *selection) encode(ctx context.Context, b []byte, obj reflect.Value) ([]byte, bool) {
	b = append(b, '{')
	for _, f := range s.fields {
		b = append(b, f.key...)
		var ok bool
		switch {
		case f.field == nil:
			b, ok = append(b, s.object.typename...), true
		case f.field.resolve != nil:
			text, err := f.field.resolve(ctx, obj)
			b, ok = appendQuotedString(b, text), err == nil
		default:
			b, ok = f.field.value.encode(ctx, b, obj.FieldByIndex(f.field.index), f.sub)
		}
		if !ok {
			return b, false
		}
	}
	return append(b, '}'), true
}

// encode appends the value v (addressable) of sub's type.
func (e *valueEncoder) encode(ctx context.Context, b []byte, v reflect.Value, sub *selection) ([]byte, bool) {
	if e.pointer {
		if v.IsNil() {
			return append(b, "null"...), !e.nonNull
		}
		v = v.Elem()
	}
	switch e.kind {
	case kindString:
		if s := v.String(); s != "" || !e.emptyIsNull {
			return appendQuotedString(b, s), true
		}
		return append(b, "null"...), true
	case kindInt:
		return strconv.AppendInt(b, v.Int(), 10), true
	case kindFloat:
		// %g, as graphql.MarshalFloatContext writes it; it refuses what JSON cannot hold.
		f := v.Float()
		return strconv.AppendFloat(b, f, 'g', -1, 64), !math.IsInf(f, 0) && !math.IsNaN(f)
	case kindBool:
		return strconv.AppendBool(b, v.Bool()), true
	case kindTime:
		return strconv.AppendQuote(b, v.Addr().Interface().(*models.Time).String()), true
	case kindJSON:
		if raw := v.Bytes(); len(raw) > 0 {
			return append(b, raw...), true
		}
		return append(b, "null"...), true
	case kindList:
		if v.IsNil() && !e.nonNull {
			return append(b, "null"...), true
		}
		b = append(b, '[')
		for i := range v.Len() {
			if i > 0 {
				b = append(b, ',')
			}
			var ok bool
			if b, ok = e.elem.encode(ctx, b, v.Index(i), sub); !ok {
				return b, false
			}
		}
		return append(b, ']'), true
	default: // kindObject
		return sub.encode(ctx, b, v)
	}
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
