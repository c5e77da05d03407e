package graph

import (
	"log/slog"
	"sync"

	"github.com/vektah/gqlparser/v2/ast"

	"messages/graph/extension"
)

// schema is the parsed schema of /graphql, built once on first use.
var schema = sync.OnceValue(func() *ast.Schema {
	return NewExecutableSchema(Config{Resolvers: &Resolver{}}).Schema()
})

// CompileDocument parses a document and validates it against the schema within the
// default limits, as a request's document is checked: `documents add` refuses a manifest
// with one that fails. It returns the name of its first operation.
func CompileDocument(body string) (string, error) {
	doc, err := extension.CompileDocument(schema(), DefaultLimits, body)
	if err != nil {
		return "", err
	}
	return doc.Operations[0].Name, nil
}

// NewTrustedSet returns the trusted documents of source compiled against the schema,
// empty until its first Refresh.
func NewTrustedSet(source extension.TrustedSource, logger *slog.Logger) *extension.TrustedSet {
	return extension.NewTrustedSet(schema(), DefaultLimits, source, logger)
}
