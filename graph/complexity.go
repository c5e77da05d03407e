package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"

	"messages/models"
)

// pagedSchema prices each root field that takes a page size (messages' limit,
// messagesConnection's first) as its page size times what one item selects, read from
// the field's arguments by name, so a new filter argument changes nothing here. Every
// other field keeps gqlgen's price.
type pagedSchema struct{ graphql.ExecutableSchema }

// Complexity is the price of one field, for the complexity limit.
func (p pagedSchema) Complexity(ctx context.Context, typeName, field string, child int, args map[string]any) (int, bool) {
	if typeName == p.Schema().Query.Name {
		for _, name := range [...]string{"limit", "first"} {
			raw, ok := args[name]
			if !ok {
				continue
			}
			n := models.DefaultPageSize
			if v, err := graphql.UnmarshalInt(raw); err == nil && v > 0 {
				n = v
			}
			return 1 + n*child, true
		}
	}
	return p.ExecutableSchema.Complexity(ctx, typeName, field, child, args)
}
