package store_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	jsonv1 "github.com/go-json-experiment/json/v1"

	"messages/models"
	"messages/models/store"
)

// The hot reads decode JSON columns through jsonv1 (scan.go), encoding/json's semantics
// on its v2 implementation, and check free-form ones (models.JSON) through jsontext
// (brokenjson.go). This holds both to encoding/json itself, on the column types and on
// any bytes: the same values, an error for the same inputs, and the same bytes taken for
// JSON as json.Valid takes.

// columnTypes are the types jsonColumn decodes into: every field of the records the
// scan reads that GORM stores as JSON text, so a new one is fuzzed without a line here.
var columnTypes = func() []reflect.Type {
	var types []reflect.Type
	for _, record := range []reflect.Type{reflect.TypeFor[models.Message](), reflect.TypeFor[models.Subscriber]()} {
		for f := range record.Fields() {
			if strings.Contains(f.Tag.Get("gorm"), "serializer:jsontext") {
				types = append(types, f.Type)
			}
		}
	}
	return types
}()

// jsonSeeds are stored documents as writers leave them: canonical, spaced, escaped,
// with invalid UTF-8, null, and not JSON at all.
var jsonSeeds = []string{
	`[{"type":"text","content":"Ken, we could not charge your card.","styles":{"textAlign":"center"}}]`,
	`[ {"type" : "button", "content": "<&>\u2028", "url":"https://x"} ]`,
	`{"type":"redirect","data":{"url":"/a"},"action":{"status":"done","buttons":[{"type":"primary","content":"Ok"}],"result":{"type":"primary","payload":{"k": [1, 2.50]}}}}`,
	`["2025-01-01T00:00:07.787Z","2025-03-01T08:00:00+02:00"]`,
	`["a","b\"c","\ud83d\ude42","bad` + "\xff" + `"]`,
	`[{"providerId":"slack","credentials":{"webhookUrl":"https://h","deviceTokens":["t"]}}]`,
	`{"Type":"case","DATA":{"URL":"folded"}}`,
	`{"type":"a","type":"duplicate"}`,
	`null`, `[]`, `{}`, `[1,2]`, `{"type":3}`, `[{"type":"x"},]`, `"text"`, `tru`, ``,
	" {\"a\":1}\n", `{"a":1} {"b":2}`, `[1] x`, "\"\t\"", `1e400`, `-0`, `01`, `[` + strings.Repeat("[", 10001) + strings.Repeat("]", 10002),
}

func FuzzJSONColumnIsEncodingJSON(f *testing.F) {
	if len(columnTypes) < 6 {
		f.Fatalf("found %d JSON columns in the records, want at least Message's 4 and Subscriber's 2", len(columnTypes))
	}
	for _, s := range jsonSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := store.IsJSON(b), len(b) == 0 || json.Valid(b); got != want {
			t.Fatalf("%q: taken for JSON %v, json.Valid says %v", b, got, want)
		}
		for _, typ := range columnTypes {
			got, want := reflect.New(typ), reflect.New(typ)
			gotErr := jsonv1.Unmarshal(b, got.Interface())
			wantErr := json.Unmarshal(b, want.Interface())
			if (gotErr != nil) != (wantErr != nil) {
				t.Fatalf("%s from %q: error %v, encoding/json's %v", typ, b, gotErr, wantErr)
			}
			if wantErr == nil && !reflect.DeepEqual(got.Elem().Interface(), want.Elem().Interface()) {
				t.Fatalf("%s from %q:\n got %#v\nwant %#v", typ, b, got.Elem().Interface(), want.Elem().Interface())
			}
		}
	})
}

// BenchmarkJSONCheck is what checking a free-form column costs a row (brokenjson.go):
// the seed's payload through the check the scan runs, beside json.Valid.
func BenchmarkJSONCheck(b *testing.B) {
	payload := []byte(`{"workflow":"payment-failed","reference":"INV-2025-0042","amount":129.50,"currency":"EUR","items":[{"sku":"SKU-0042","name":"Annual plan","quantity":1}],"customer":{"firstName":"Ken","locale":"en-US","plan":"pro"},"url":"https://example.com/billing/INV-2025-0042"}`)
	b.Run("check", func(b *testing.B) {
		b.SetBytes(int64(len(payload)))
		for b.Loop() {
			if !store.IsJSON(payload) {
				b.Fatal("not JSON")
			}
		}
	})
	b.Run("json.Valid", func(b *testing.B) {
		b.SetBytes(int64(len(payload)))
		for b.Loop() {
			if !json.Valid(payload) {
				b.Fatal("not JSON")
			}
		}
	})
}
