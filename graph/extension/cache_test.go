package extension

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
	"github.com/vektah/gqlparser/v2/validator"
)

// The document cache is charged astBytesPerByte per byte of text: no less than what a
// parsed and validated document within the limits really holds, measured on the heap for
// the shapes that hold the most tree per byte of text.
func TestDocumentCostCoversSyntaxTree(t *testing.T) {
	schema := loadSchema(t)
	shapes := map[string]func(i int) string{
		"aliased fields": func(i int) string {
			var b strings.Builder
			fmt.Fprintf(&b, "query Q%d { messages { data { ", i)
			for j := range DefaultLimits.Aliases {
				fmt.Fprintf(&b, "a%d: _id ", j)
			}
			b.WriteString("} } }")
			return b.String()
		},
		"fragment spreads": func(i int) string {
			return fmt.Sprintf("query Q%d { messages { data { %s} } } fragment F on Message { _id }", i, strings.Repeat("...F ", 990))
		},
		"nested fields": func(i int) string {
			return fmt.Sprintf("query Q%d { messages { data { %s } } }", i, strings.TrimSpace(strings.Repeat("_id subscriber { _id } template { _id } cta { type } ", 9)))
		},
	}
	for name, shape := range shapes {
		const docs = 200
		texts := make([]string, docs)
		for i := range texts {
			texts[i] = shape(i)
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		kept := make([]*ast.QueryDocument, docs)
		textBytes := 0
		for i, q := range texts {
			doc, err := parser.ParseQuery(&ast.Source{Input: q})
			if err != nil {
				t.Fatal(err)
			}
			if errs := validator.Validate(schema, doc); len(errs) > 0 {
				t.Fatalf("%s: %v", name, errs)
			}
			kept[i] = doc
			textBytes += len(q)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(kept)
		perByte := float64(after.HeapAlloc-before.HeapAlloc) / float64(textBytes)
		t.Logf("%s: a parsed document holds %.1f bytes per byte of its text", name, perByte)
		if perByte > astBytesPerByte {
			t.Errorf("%s: documents hold %.1f bytes per byte of text, more than the %d the cache charges", name, perByte, astBytesPerByte)
		}
	}
}

// Adding past the limit drops the least recently used entries until the cost is within
// it; an entry costing more than the whole cache is not kept at all.
func TestByteLRUEvictsByCost(t *testing.T) {
	c := NewByteLRU(10_000, func(k string, v []byte) int { return len(v) })
	for i := range 20 {
		c.Add(fmt.Sprint(i), make([]byte, 1_000))
		if c.Bytes() > 10_000 {
			t.Fatalf("after %d entries the cache holds %d bytes, over its limit", i+1, c.Bytes())
		}
	}
	if _, ok := c.Get("19"); !ok {
		t.Error("the newest entry was dropped")
	}
	if _, ok := c.Get("0"); ok {
		t.Error("the oldest entry was kept past the limit")
	}
	c.Add("huge", make([]byte, 20_000))
	if _, ok := c.Get("huge"); ok || c.Bytes() > 10_000 {
		t.Errorf("an entry over the whole limit was kept (%d bytes held)", c.Bytes())
	}
}

// loadSchema reads the API's schema, which the documents the caches hold are validated
// against.
func loadSchema(t testing.TB) *ast.Schema {
	t.Helper()
	b, err := os.ReadFile("../../schema.graphqls")
	if err != nil {
		t.Fatal(err)
	}
	schema, gqlErr := gqlparser.LoadSchema(&ast.Source{Name: "schema.graphqls", Input: string(b)})
	if gqlErr != nil {
		t.Fatal(gqlErr)
	}
	return schema
}
