package transport

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/google/go-cmp/cmp"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// encodeResponse writes what json.Marshal writes, but for the HTML characters (and U+2028,
// U+2029) json.Marshal escapes in data: the same JSON value, byte for byte where data has
// none of them.
func TestEncodeResponseIsJSONMarshal(t *testing.T) {
	yes := true
	withErrors := gqlerror.List{{
		Message:    `a "quoted" <error>`,
		Path:       ast.Path{ast.PathName("messages"), ast.PathIndex(0)},
		Extensions: map[string]any{"code": "UNAVAILABLE", "data": nil},
	}}
	for name, res := range map[string]*graphql.Response{
		"data":                {Data: json.RawMessage(`{"messages":{"data":[{"_id":"1","title":"t"}],"hasMore":false}}`)},
		"null data":           {Data: json.RawMessage(`null`)},
		"no data":             {},
		"errors and data":     {Errors: withErrors, Data: json.RawMessage(`{"messages":null}`)},
		"errors without data": {Errors: withErrors},
		"every member": {Errors: withErrors, Data: json.RawMessage(`{"a":[1,2.5,"x"]}`), Label: "l",
			Path: ast.Path{ast.PathName("p")}, HasNext: &yes, Extensions: map[string]any{"complexity": 3}},
		"html in data": {Data: json.RawMessage(`{"title":"<b>&amp;</b>\u2028"}`)},
	} {
		got, err := encodeResponse(res)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want, err := json.Marshal(res)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var gotValue, wantValue any
		if err := json.Unmarshal(got, &gotValue); err != nil {
			t.Fatalf("%s: not JSON: %s", name, got)
		}
		if err := json.Unmarshal(want, &wantValue); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(wantValue, gotValue); diff != "" {
			t.Errorf("%s: another value than json.Marshal's (-want +got):\n%s", name, diff)
		}
		if name != "html in data" && !bytes.Equal(got, want) {
			t.Errorf("%s:\n got %s\nwant %s", name, got, want)
		}
	}
}

// A member gqlgen adds to its Response must be added to responseTail, or it is lost.
func TestResponseTailHasEveryOtherMember(t *testing.T) {
	full, tail := reflect.TypeFor[graphql.Response](), reflect.TypeFor[responseTail]()
	var want []string
	for i := range full.NumField() {
		if f := full.Field(i); f.Name != "Errors" && f.Name != "Data" {
			want = append(want, f.Name+" "+f.Type.String()+" "+string(f.Tag))
		}
	}
	var got []string
	for i := range tail.NumField() {
		f := tail.Field(i)
		got = append(got, f.Name+" "+f.Type.String()+" "+string(f.Tag))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("responseTail differs from graphql.Response after data (-response +tail):\n%s", diff)
	}
}
