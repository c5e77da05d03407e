package graph

import (
	"bytes"
	"context"
	"math"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
)

// Every field a list query can select has an encoder: a field without one is left to
// gqlgen's executor, whole root field and all, which is correct but slow, so a schema or
// model change that loses one must be noticed here rather than in a benchmark. Each field
// of each object type reachable from the list queries' roots is selected alone, under
// the path that reaches its type, and the operation must be planned.
func TestEncodersCoverListQueries(t *testing.T) {
	schema := NewExecutableSchema(Config{Resolvers: &Resolver{}}).Schema()
	// reached holds, for each object type, the selection that opens onto it from a root.
	type path struct {
		root, open string
		depth      int
	}
	reached := map[string]path{}
	var queue []string
	for _, root := range []string{"messages", "messagesConnection"} {
		name := schema.Query.Fields.ForName(root).Type.Name()
		reached[name], queue = path{root, root + " {", 1}, append(queue, name)
	}
	var missing []string
	for len(queue) > 0 {
		name := queue[0]
		queue = queue[1:]
		p := reached[name]
		for _, f := range schema.Types[name].Fields {
			if strings.HasPrefix(f.Name, "__") {
				continue
			}
			sub := schema.Types[f.Type.Name()]
			selection := f.Name
			if sub.Kind == ast.Object {
				selection += " { __typename }"
				if _, ok := reached[sub.Name]; !ok {
					reached[sub.Name], queue = path{p.root, p.open + " " + f.Name + " {", p.depth + 1}, append(queue, sub.Name)
				}
			}
			query := "{ " + p.open + " " + selection + strings.Repeat(" }", p.depth) + " }"
			if !planned(t, schema, query, p.root) {
				missing = append(missing, name+"."+f.Name)
			}
		}
	}
	if len(missing) > 0 {
		t.Errorf("fields without an encoder: %v", missing)
	}
	for _, name := range []string{"Message", "Subscriber", "Template", "ContentBlock", "MessageCTA", "PageInfo", "MessageEdge", "StepMetadata"} {
		if _, ok := reached[name]; !ok {
			t.Errorf("%s is not reached from the list queries' roots", name)
		}
	}
}

// planned reports whether the encoders plan the root field root of query.
func planned(t *testing.T, schema *ast.Schema, query, root string) bool {
	t.Helper()
	doc, errs := gqlparser.LoadQuery(schema, query)
	if len(errs) > 0 {
		t.Fatalf("%s: %v", query, errs)
	}
	oc := &graphql.OperationContext{Doc: doc, Operation: doc.Operations[0], Variables: map[string]any{}}
	return listPlanQuery(oc, oc.Operation.SelectionSet)[root] != nil
}

// appendQuotedString writes what gqlgen's MarshalString writes, for any bytes.
func FuzzQuotedStringIsGQLGen(f *testing.F) {
	for _, s := range []string{"", "plain", `q"b\`, "tab\tnl\ncr\r\b\f", "\x00\x1f\x7f", "<&>\u2028\u2029", "bad\xffutf8\xc3", "é日本🙂", "\xc3\""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var want bytes.Buffer
		graphql.MarshalString(s).MarshalGQL(&want)
		if got := appendQuotedString(nil, s); !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("%q:\n got %s\nwant %s", s, got, want.Bytes())
		}
	})
}

// A Float is written as graphql.MarshalFloatContext writes it, and one it refuses is
// declined.
func TestFloatIsGQLGen(t *testing.T) {
	for _, f := range []float64{0, -0.5, 1, 2.5, 1e20, 1e21, 1.0 / 3, -1e-7, math.MaxFloat64, math.SmallestNonzeroFloat64, math.Inf(1), math.NaN()} {
		var want bytes.Buffer
		err := graphql.MarshalFloatContext(f).MarshalGQLContext(context.Background(), &want)
		got, ok := appendFloat(nil, f)
		if ok != (err == nil) || ok && !bytes.Equal(got, want.Bytes()) {
			t.Errorf("%v: got %s (%v), want %s (%v)", f, got, ok, want.Bytes(), err)
		}
	}
}

// An Int and a Boolean are written as graphql.MarshalInt and graphql.MarshalBoolean write
// them.
func TestIntAndBooleanAreGQLGen(t *testing.T) {
	for _, i := range []int{0, 1, -1, 42, math.MaxInt, math.MinInt} {
		var want bytes.Buffer
		graphql.MarshalInt(i).MarshalGQL(&want)
		if got, ok := appendInt(nil, i); !ok || !bytes.Equal(got, want.Bytes()) {
			t.Errorf("%d: got %s, want %s", i, got, want.Bytes())
		}
	}
	for _, v := range []bool{false, true} {
		var want bytes.Buffer
		graphql.MarshalBoolean(v).MarshalGQL(&want)
		if got, ok := appendBoolean(nil, v); !ok || !bytes.Equal(got, want.Bytes()) {
			t.Errorf("%v: got %s, want %s", v, got, want.Bytes())
		}
	}
}
