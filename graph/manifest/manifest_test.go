package manifest_test

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"messages/graph/manifest"
)

const doc = `query Inbox { messages { totalCount } }`

func hexOf(sum []byte) string { return hex.EncodeToString(sum) }

var (
	sha256Sum = func() string { s := sha256.Sum256([]byte(doc)); return hexOf(s[:]) }()
	sha1Sum   = func() string { s := sha1.Sum([]byte(doc)); return hexOf(s[:]) }()
	md5Sum    = func() string { s := md5.Sum([]byte(doc)); return hexOf(s[:]) }()
)

// Each tool's manifest as it writes it is read, ids of a digest's length checked against
// the text; anything else is refused with what is wrong.
func TestRead(t *testing.T) {
	tests := []struct {
		name    string
		data    string
		format  manifest.Format
		entries []manifest.Entry
		err     string
	}{
		{"apollo", `{"format":"apollo-persisted-query-manifest","version":1,"operations":[{"id":"` + sha256Sum + `","name":"Inbox","type":"query","body":"` + doc + `"}]}`,
			manifest.Apollo, []manifest.Entry{{ID: sha256Sum, SHA256: sha256Sum, Body: doc, Name: "Inbox"}}, ""},
		{"relayMD5", `{"` + md5Sum + `":"` + doc + `"}`, manifest.Map, []manifest.Entry{{ID: md5Sum, SHA256: sha256Sum, Body: doc}}, ""},
		{"relaySHA1", `{"` + sha1Sum + `":"` + doc + `"}`, manifest.Map, []manifest.Entry{{ID: sha1Sum, SHA256: sha256Sum, Body: doc}}, ""},
		{"codegenSHA256", `{"` + sha256Sum + `":"` + doc + `"}`, manifest.Map, []manifest.Entry{{ID: sha256Sum, SHA256: sha256Sum, Body: doc}}, ""},
		{"codegenPrefixed", `{"sha256:` + sha256Sum + `":"` + doc + `"}`, manifest.Map, []manifest.Entry{{ID: "sha256:" + sha256Sum, SHA256: sha256Sum, Body: doc}}, ""},
		{"refusedPrefixedOfAnotherText", `{"sha256:` + sha256Sum + `":"{ a }"}`, "", nil, "not the SHA-256 of its text"},
		{"customId", `{"inbox-v1":"` + doc + `"}`, manifest.Map, []manifest.Entry{{ID: "inbox-v1", SHA256: sha256Sum, Body: doc}}, ""},
		{"refusedDigestOfAnotherText", `{"` + sha256Sum + `":"{ a }"}`, "", nil, "not the SHA-256 of its text"},
		{"refusedMD5OfAnotherText", `{"` + md5Sum + `":"{ a }"}`, "", nil, "not the MD5 of its text"},
		{"refusedApolloVersion2", `{"format":"apollo-persisted-query-manifest","version":2,"operations":[]}`, "", nil, "version 2"},
		{"refusedApolloUnknownMember", `{"format":"apollo-persisted-query-manifest","version":1,"operations":[],"extra":1}`, "", nil, "unknown field"},
		{"refusedEmpty", `{}`, "", nil, "no documents"},
		{"refusedArray", `["` + doc + `"]`, "", nil, "expected a JSON object"},
		{"refusedNotText", `{"a":1}`, "", nil, "object of document ids to document texts"},
		{"refusedEmptyBody", `{"a":""}`, "", nil, "has no text"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			format, entries, err := manifest.Read([]byte(tt.data))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one saying %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if format != tt.format {
				t.Errorf("format %q, want %q", format, tt.format)
			}
			if diff := cmp.Diff(tt.entries, entries); diff != "" {
				t.Errorf("entries (-want +got):\n%s", diff)
			}
		})
	}
}
