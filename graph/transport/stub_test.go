package transport_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"

	"messages/graph/extension"
	"messages/graph/transport"
)

// stub is a schema whose queries all answer its current value and whose one mutation
// changes it, so that the transports are tested on what they do with an answer, without
// the API's resolvers or a database.
type stub struct {
	schema *ast.Schema

	mu    sync.Mutex
	value int
	ran   int // operations executed
}

func newStub() *stub {
	return &stub{schema: gqlparser.MustLoadSchema(&ast.Source{Name: "stub.graphqls", Input: `
		type Query { value: Int! }
		type Mutation { change: Int! }
	`})}
}

// exec runs one operation: a mutation changes the value; every operation answers it.
func (s *stub) exec(ctx context.Context) graphql.ResponseHandler {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ran++
	if graphql.GetOperationContext(ctx).Operation.Operation == ast.Mutation {
		s.value++
	}
	return graphql.OneShot(&graphql.Response{Data: []byte(fmt.Sprintf(`{"value":%d}`, s.value))})
}

// runs is how many operations the stub has executed.
func (s *stub) runs() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ran
}

// handler serves the stub with the HTTP transports and the document limits (for an
// operation refused by an extension), as the API's handler does.
func (s *stub) handler() http.Handler {
	srv := handler.New(&graphql.ExecutableSchemaMock{
		SchemaFunc: func() *ast.Schema { return s.schema },
		ExecFunc:   s.exec,
		ComplexityFunc: func(context.Context, string, string, int, map[string]any) (int, bool) {
			return 0, false
		},
	})
	srv.AddTransport(transport.GET{})
	srv.AddTransport(transport.POST{})
	srv.Use(extension.QueryLimits{Limits: extension.DefaultLimits, Introspection: true})
	return srv
}

// serve starts h on a real port and returns its URL.
func serve(t testing.TB, h http.Handler) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL + "/graphql"
}
