package wire

import (
	"bytes"
	"encoding/json"
	"testing"

	jsonv1 "github.com/go-json-experiment/json/v1"
)

// The appenders compact stored JSON through jsonv1, encoding/json's semantics on its v2
// implementation. This holds it to encoding/json itself on any bytes: the same bytes,
// and an error for the same inputs.

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
}

func FuzzCompactIsEncodingJSON(f *testing.F) {
	for _, s := range jsonSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var got, want bytes.Buffer
		gotErr, wantErr := jsonv1.Compact(&got, b), json.Compact(&want, b)
		if (gotErr != nil) != (wantErr != nil) {
			t.Fatalf("compact %q: error %v, encoding/json's %v", b, gotErr, wantErr)
		}
		if wantErr == nil && !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Fatalf("compact %q:\n got %q\nwant %q", b, got.Bytes(), want.Bytes())
		}
	})
}
