package main

import (
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"messages/models/dbtest"
)

// manifestFile writes v as JSON into a file of the test's and returns its path.
func manifestFile(t *testing.T, name string, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func hexSum(sum []byte) string { return hex.EncodeToString(sum) }

// documents add takes each client tool's manifest as written; an invalid document, an id
// that is not its text's digest or an id trusted for another text refuses the whole
// command (exit 1, naming the file, the id and the error) and adds nothing of any file;
// list shows what was added, and remove takes it away, by its id or its sha256.
func TestDocumentsCommands(t *testing.T) {
	const (
		inbox = `query Inbox { messages(limit: 5) { totalCount data { _id } } }`
		count = `query Count { messages { totalCount } }`
		bad   = `query Bad { messages { noSuchField } }`
	)
	md5Of := func(s string) string { sum := md5.Sum([]byte(s)); return hexSum(sum[:]) }
	shaOf := func(s string) string { sum := sha256.Sum256([]byte(s)); return hexSum(sum[:]) }
	for _, dialect := range dbtest.Dialects {
		t.Run(dialect, func(t *testing.T) {
			t.Setenv("DATABASE_URL", dbtest.URL(t, dialect))
			relay := manifestFile(t, "relay.json", map[string]string{md5Of(inbox): inbox})
			apollo := manifestFile(t, "apollo.json", map[string]any{"format": "apollo-persisted-query-manifest", "version": 1,
				"operations": []map[string]any{{"id": shaOf(count), "name": "Count", "type": "query", "body": count}}})
			invalid := manifestFile(t, "invalid.json", map[string]string{shaOf(count): count, shaOf(bad): bad})
			misnamed := manifestFile(t, "misnamed.json", map[string]string{shaOf(inbox): count})
			conflict := manifestFile(t, "conflict.json", map[string]string{"inbox-v1": inbox})
			conflict2 := manifestFile(t, "conflict2.json", map[string]string{"inbox-v1": count})
			list := func() string {
				t.Helper()
				code, stdout, stderr := runCLI(t, "", "documents", "list")
				if code != 0 {
					t.Fatalf("documents list exited %d: %s", code, stderr)
				}
				return stdout
			}
			refused := []struct {
				name  string
				files []string
				says  []string
			}{
				{"add1InvalidDocumentRefusesAllFiles", []string{relay, invalid}, []string{"invalid.json", shaOf(bad), "noSuchField", "nothing was added"}},
				{"add1IdNotDigestOfText", []string{misnamed}, []string{"misnamed.json", shaOf(inbox), "not the SHA-256 of its text"}},
				{"add1NotAManifest", []string{manifestFile(t, "list.json", []string{inbox})}, []string{"list.json", "not a manifest"}},
				{"add1SameIdOtherTextInOneCommand", []string{conflict, conflict2}, []string{"conflict2.json", `"inbox-v1" is already trusted with another text`}},
			}
			for _, tt := range refused {
				code, _, stderr := runCLI(t, "", append([]string{"documents", "add"}, tt.files...)...)
				if code != 1 {
					t.Errorf("%s: exited %d, want 1: %s", tt.name, code, stderr)
				}
				for _, s := range tt.says {
					if !strings.Contains(stderr, s) {
						t.Errorf("%s: stderr must say %q:\n%s", tt.name, s, stderr)
					}
				}
				if out := list(); strings.Count(out, "\n") != 1 {
					t.Fatalf("%s: something was added:\n%s", tt.name, out)
				}
			}
			if code, _, stderr := runCLI(t, "", "documents", "add"); code != 2 {
				t.Errorf("documents add without files exited %d, want 2: %s", code, stderr)
			}

			code, _, stderr := runCLI(t, "", "documents", "add", relay, apollo)
			if code != 0 || !strings.Contains(stderr, "relay.json (map): 1 trusted, 1 new") || !strings.Contains(stderr, "apollo.json (apollo-persisted-query-manifest): 1 trusted, 1 new") {
				t.Fatalf("documents add exited %d:\n%s", code, stderr)
			}
			if code, _, stderr := runCLI(t, "", "documents", "add", relay); code != 0 || !strings.Contains(stderr, "1 trusted, 0 new") {
				t.Errorf("adding a manifest again exited %d:\n%s", code, stderr)
			}
			out := list()
			for _, s := range []string{md5Of(inbox), shaOf(inbox), "Inbox", "relay.json", shaOf(count), "Count", "apollo.json"} {
				if !strings.Contains(out, s) {
					t.Errorf("documents list must show %q:\n%s", s, out)
				}
			}
			if code, _, stderr := runCLI(t, "", "documents", "remove", md5Of(inbox)); code != 0 || !strings.Contains(stderr, "removed 1 document") {
				t.Errorf("remove by id exited %d: %s", code, stderr)
			}
			if code, _, stderr := runCLI(t, "", "documents", "remove", "sha256:"+shaOf(count)); code != 0 || !strings.Contains(stderr, "removed 1 document") {
				t.Errorf("remove by sha256 exited %d: %s", code, stderr)
			}
			if code, _, stderr := runCLI(t, "", "documents", "remove", "sha256:"+shaOf(count)); code != 1 || !strings.Contains(stderr, "not found") {
				t.Errorf("removing again exited %d, want 1 (not found): %s", code, stderr)
			}
			if out := list(); strings.Count(out, "\n") != 1 {
				t.Errorf("left after removing both:\n%s", out)
			}
		})
	}
}
