package graph_test

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestPackageImports holds the packages below graph to their one job each: what they may
// import besides the standard library. None imports graph, which composes them with the
// schema; the transports hand a streamed mutation's claim to the idempotency extension,
// and nothing imports the transports. The answers' buffer pool imports nothing of ours.
func TestPackageImports(t *testing.T) {
	gqlgen := []string{"github.com/99designs/gqlgen/graphql", "github.com/vektah/gqlparser/v2/"}
	allowed := map[string][]string{
		"errcode": {"messages/models"},
		"extension": append([]string{"messages/models", "messages/graph/errcode",
			"github.com/prometheus/client_golang/prometheus", "go.opentelemetry.io/otel/"}, gqlgen...),
		"transport": append([]string{"messages/models", "messages/graph/errcode", "messages/graph/extension",
			"messages/graph/internal/buffers", "github.com/lesismal/nbio", "github.com/lesismal/nbio/"}, gqlgen...),
		"internal/buffers": nil,
		"manifest":         nil,
	}
	for dir, may := range allowed {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: no Go files (%v)", dir, err)
		}
		for _, name := range files {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, spec := range f.Imports {
				if path, _ := strconv.Unquote(spec.Path.Value); !mayImport(may, path) {
					t.Errorf("%s imports %s, which package %s may not", name, path, dir)
				}
			}
		}
	}
}

// mayImport reports whether path is in the standard library or in may, whose entries
// ending in a slash stand for every package below them.
func mayImport(may []string, path string) bool {
	if !strings.Contains(strings.Split(path, "/")[0], ".") && !strings.HasPrefix(path, "messages/") {
		return true
	}
	return slices.ContainsFunc(may, func(p string) bool {
		return path == p || strings.HasSuffix(p, "/") && strings.HasPrefix(path, p)
	})
}
