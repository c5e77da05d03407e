package main

import (
	"bufio"
	"bytes"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// layers are the import rules of docs/architecture.md: for each package of the module
// (a trailing "/..." covers a subtree), the packages of the module its production code
// may import. A package of the module that no rule covers fails the test, so a new one
// is placed deliberately; tests may import more (a parity test compares both APIs).
var layers = []struct {
	pkg     string
	imports []string
}{
	{"messages/models", nil},
	{"messages/models/keyseal", nil},
	{"messages/models/session", []string{"messages/models"}},
	{"messages/models/cluster", []string{"messages/models"}},
	{"messages/models/migrate", []string{"messages/models"}},
	{"messages/models/wire", []string{"messages/models"}},
	{"messages/models/internal/...", []string{"messages/models/internal/..."}},
	{"messages/models/store", []string{"messages/models", "messages/models/cluster", "messages/models/migrate", "messages/models/keyseal"}},
	{"messages/models/changefeed", []string{"messages/models", "messages/models/store"}},
	{"messages/models/seed", []string{"messages/models", "messages/models/store"}},
	{"messages/models/jsonl", []string{"messages/models", "messages/models/store", "messages/models/cluster", "messages/models/wire"}},
	{"messages/models/service", []string{"messages/models", "messages/models/store", "messages/models/changefeed", "messages/models/session"}},
	{"messages/models/dbtest", []string{"messages/models", "messages/models/store", "messages/models/migrate", "messages/models/jsonl", "messages/models/seed"}},
	// The GraphQL server reaches the data through the service only.
	{"messages/graph", []string{"messages/models", "messages/models/service", "messages/models/changefeed", "messages/graph/..."}},
	{"messages/graph/...", []string{"messages/models", "messages/models/service", "messages/models/changefeed", "messages/graph/..."}},
	// So does /v1, and it never reaches into GraphQL.
	{"messages/rest", []string{"messages/models", "messages/models/service", "messages/models/wire"}},
	{"messages/rest/inboxsocket", []string{"messages/models", "messages/models/service", "messages/models/changefeed", "messages/models/wire"}},
	{"messages/cmd/server/edge", []string{"messages/models"}},
	// main wires everything.
	{"messages/cmd/server", []string{"..."}},
	// The benchmarks drive the server from outside; they open its database only to
	// measure raw floors and never use its service.
	{"messages/cmd/loadtest/...", []string{"messages/cmd/loadtest/...", "messages/models", "messages/models/store", "messages/graph/gqlclient"}},
	{"messages/cmd/loadtest", []string{"messages/cmd/loadtest/..."}},
}

func covers(pattern, pkg string) bool {
	if pattern == "..." {
		return true
	}
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		return strings.HasPrefix(pkg, base+"/")
	}
	return pattern == pkg
}

// ruleOf is the most specific rule covering pkg: an exact one before a subtree's.
func ruleOf(pkg string) ([]string, bool) {
	for _, exact := range []bool{true, false} {
		for _, l := range layers {
			if strings.HasSuffix(l.pkg, "/...") != exact && covers(l.pkg, pkg) {
				return l.imports, true
			}
		}
	}
	return nil, false
}

// Every package imports only what docs/architecture.md lets it: the layers point down,
// rest/ and graph/ meet only in models/service, and no package is left unplaced.
func TestImportRules(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "messages/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	packages := 0
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		pkg, imports := fields[0], fields[1:]
		packages++
		allowed, ok := ruleOf(pkg)
		if !ok {
			t.Errorf("%s is in no layer of docs/architecture.md: add it there and to this test", pkg)
			continue
		}
		for _, imp := range imports {
			if !strings.HasPrefix(imp, "messages/") || imp == pkg {
				continue
			}
			if !slices.ContainsFunc(allowed, func(p string) bool { return covers(p, imp) }) {
				t.Errorf("%s imports %s, which docs/architecture.md does not allow", pkg, imp)
			}
		}
	}
	if packages < 20 {
		t.Fatalf("go list found %d packages: the module was not read", packages)
	}
}
