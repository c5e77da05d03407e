package graph

import (
	"bytes"
	"context"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"
)

// Every field a list query can select has an encoder: a field without one is left to
// gqlgen's executor, whole operation and all, which is correct but slow, so a schema or
// model change that loses one must be noticed here rather than in a benchmark.
func TestEncodersCoverListQueries(t *testing.T) {
	es := NewExecutableSchema(Config{Resolvers: &Resolver{}}).(*executableSchema)
	q := newListQueries(es, &Resolver{}, nil)
	seen := map[*objectEncoder]bool{}
	var missing []string
	var walk func(e *objectEncoder)
	walk = func(e *objectEncoder) {
		if seen[e] {
			return
		}
		seen[e] = true
		for _, f := range es.Schema().Types[e.name].Fields {
			fe := e.fields[f.Name]
			switch {
			case strings.HasPrefix(f.Name, "__"):
			case fe == nil:
				missing = append(missing, e.name+"."+f.Name)
			case fe.value.objectType() != nil:
				walk(fe.value.objectType())
			}
		}
	}
	walk(q.pages)
	walk(q.conns)
	if len(missing) > 0 {
		t.Errorf("fields without an encoder: %v", missing)
	}
	for _, name := range []string{"Message", "Subscriber", "Template", "ContentBlock", "MessageCTA", "PageInfo", "MessageEdge", "StepMetadata"} {
		if !hasObject(seen, name) {
			t.Errorf("%s is not reached from the list queries' roots", name)
		}
	}
}

func hasObject(seen map[*objectEncoder]bool, name string) bool {
	for e := range seen {
		if e.name == name {
			return true
		}
	}
	return false
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
		e := &valueEncoder{kind: kindFloat}
		got, ok := e.encode(context.Background(), nil, reflect.ValueOf(&f).Elem(), nil)
		if ok != (err == nil) || ok && !bytes.Equal(got, want.Bytes()) {
			t.Errorf("%v: got %s (%v), want %s (%v)", f, got, ok, want.Bytes(), err)
		}
	}
}
