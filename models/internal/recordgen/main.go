// Command recordgen writes the code that follows Message's fields, from the struct
// definition and its tags in models/message.go, so that a field added to the record is
// scanned and written on /v1 without a hand-kept list:
//
//   - models/store/messagecolumns.generated.go: the columns a message row is read from
//     (gorm's column name) and where each value goes;
//   - models/wire/message.generated.go: the /v1 appender, one member per JSON name in
//     the struct's order, each written as encoding/json writes its type and tag.
//
// It reads the source (go/parser), not the compiled type, so the generated code does no
// reflection at run time and models/internal imports nothing of the module. A field of a
// type it has no writer or reader for stops it with the field's name: add the case here.
// Run by go generate from models/message.go; CI fails when its output is not committed.
package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"log"
	"os"
	"path/filepath"
	"strings"
)

func main() {
	log.SetFlags(0)
	log.SetPrefix("recordgen: ")
	dir := "."
	if len(os.Args) > 1 {
		dir = os.Args[1]
	}
	rec, err := parseRecord(dir, "Message")
	if err != nil {
		log.Fatal(err)
	}
	for path, gen := range map[string]func(*record) ([]byte, error){
		filepath.Join(dir, "store", "messagecolumns.generated.go"): storeColumns,
		filepath.Join(dir, "wire", "message.generated.go"):         wireAppender,
	} {
		src, err := gen(rec)
		if err != nil {
			log.Fatal(err)
		}
		if err := os.WriteFile(path, src, 0o644); err != nil {
			log.Fatal(err)
		}
	}
}

// record is a struct of the models package as its source declares it.
type record struct {
	name   string
	fields []field
	// underlying holds the package's named types by name: "ChannelType" -> "string".
	underlying map[string]string
}

// field is one field of a record, with its type as written and its tags read.
type field struct {
	name string
	typ  string // as written in the source: "string", "*Time", "[]ContentBlock"
	// json is the JSON name ("" for the field's name, "-" for none) and whether the
	// value is omitted when empty.
	json      string
	omitEmpty bool
	// gorm's settings: the column name when given, the serializer, whether the field
	// is no column at all ("-").
	column, serializer string
	noColumn           bool
}

// parseRecord reads the struct named name from the package in dir, and the package's
// other named types.
func parseRecord(dir, name string) (*record, error) {
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	rec := &record{name: name, underlying: map[string]string{}}
	var st *ast.StructType
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, decl := range f.Decls {
			g, ok := decl.(*ast.GenDecl)
			if !ok || g.Tok != token.TYPE {
				continue
			}
			for _, spec := range g.Specs {
				ts := spec.(*ast.TypeSpec)
				rec.underlying[ts.Name.Name] = types(ts.Type)
				if s, ok := ts.Type.(*ast.StructType); ok && ts.Name.Name == name {
					st = s
				}
			}
		}
	}
	if st == nil {
		return nil, fmt.Errorf("no struct %s in %s", name, dir)
	}
	for _, f := range st.Fields.List {
		if len(f.Names) != 1 {
			return nil, fmt.Errorf("%s: embedded or grouped fields are not supported", name)
		}
		fd := field{name: f.Names[0].Name, typ: types(f.Type)}
		if !ast.IsExported(fd.name) {
			continue
		}
		if f.Tag != nil {
			tag := strings.Trim(f.Tag.Value, "`")
			jsonTag := lookup(tag, "json")
			fd.json, _, _ = strings.Cut(jsonTag, ",")
			fd.omitEmpty = strings.Contains(jsonTag, ",omitempty")
			for _, setting := range strings.Split(lookup(tag, "gorm"), ";") {
				key, value, _ := strings.Cut(setting, ":")
				switch key {
				case "-":
					fd.noColumn = true
				case "column":
					fd.column = value
				case "serializer":
					fd.serializer = value
				}
			}
		}
		if fd.json == "" {
			fd.json = fd.name
		}
		if fd.column == "" {
			fd.column = columnName(fd.name)
		}
		rec.fields = append(rec.fields, fd)
	}
	return rec, nil
}

// types renders a type expression as the source writes it.
func types(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.Ident:
		return t.Name
	case *ast.StarExpr:
		return "*" + types(t.X)
	case *ast.ArrayType:
		if t.Len == nil {
			return "[]" + types(t.Elt)
		}
	case *ast.SelectorExpr:
		return types(t.X) + "." + t.Sel.Name
	case *ast.StructType:
		return "struct"
	}
	return fmt.Sprintf("%T", e)
}

// lookup is reflect.StructTag.Get for the source's tag text.
func lookup(tag, key string) string {
	for tag != "" {
		tag = strings.TrimLeft(tag, " ")
		name, rest, ok := strings.Cut(tag, ":\"")
		if !ok {
			return ""
		}
		end := 0
		for end < len(rest) && rest[end] != '"' {
			if rest[end] == '\\' {
				end++
			}
			end++
		}
		if end >= len(rest) {
			return ""
		}
		if name == key {
			return rest[:end]
		}
		tag = rest[end+1:]
	}
	return ""
}

// columnName is gorm's default column name for a field (schema.NamingStrategy): snake
// case, an initialism kept whole ("DirectWebhookURL" -> "direct_webhook_url").
// store's TestScanColumnsAreTheRecordsColumns compares the result with gorm's own.
func columnName(field string) string {
	var b strings.Builder
	for i, r := range field {
		upper := r >= 'A' && r <= 'Z'
		if upper && i > 0 {
			prev := rune(field[i-1])
			prevLower := prev >= 'a' && prev <= 'z' || prev >= '0' && prev <= '9'
			nextLower := i+1 < len(field) && field[i+1] >= 'a' && field[i+1] <= 'z'
			if prevLower || (prev >= 'A' && prev <= 'Z' && nextLower) {
				b.WriteByte('_')
			}
		}
		if upper {
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}
