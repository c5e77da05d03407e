package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"

	"messages/models"
)

// listOptions reads which parts of a MessagesPage a GraphQL query selects, so the store
// skips the count and the embedded records nobody asked for. Outside a GraphQL operation
// (the /v1 shim calls resolvers directly) everything is returned.
func listOptions(ctx context.Context) models.ListOptions {
	if !graphql.HasOperationContext(ctx) || graphql.GetFieldContext(ctx) == nil {
		return models.Everything
	}
	op := graphql.GetOperationContext(ctx)
	var o models.ListOptions
	for _, f := range graphql.CollectFieldsCtx(ctx, nil) {
		switch f.Name {
		case "totalCount":
			o.Count = true
		case "data":
			embeddedOptions(op, f.Selections, &o)
		}
	}
	return o
}
