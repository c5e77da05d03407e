package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"messages/models"
)

// What a query selects of a page decides what the store reads: the count, and the
// subscribers and templates embedded in the messages, only when asked for.

// listParts reads which parts of a MessagesPage the query selects.
func listParts(ctx context.Context) models.ListOptions {
	op := graphql.GetOperationContext(ctx)
	var o models.ListOptions
	for _, f := range graphql.CollectFieldsCtx(ctx, nil) {
		switch f.Name {
		case "totalCount":
			o.Count = true
		case "data":
			embeddedParts(op, f.Selections, &o)
		}
	}
	return o
}

// connectionParts reads which parts of a MessageConnection the query selects: totalCount,
// and subscriber and template under edges.node.
func connectionParts(ctx context.Context) models.ListOptions {
	op := graphql.GetOperationContext(ctx)
	var o models.ListOptions
	for _, f := range graphql.CollectFieldsCtx(ctx, nil) {
		switch f.Name {
		case "totalCount":
			o.Count = true
		case "edges":
			for _, e := range graphql.CollectFields(op, f.Selections, nil) {
				if e.Name == "node" {
					embeddedParts(op, e.Selections, &o)
				}
			}
		}
	}
	return o
}

// nodeParts reads whether the selection of node or nodes asks a Message for its
// subscriber and its template, so a message found by id pays for them only then.
func nodeParts(ctx context.Context) (subscribers, templates bool) {
	var o models.ListOptions
	embeddedParts(graphql.GetOperationContext(ctx), graphql.GetFieldContext(ctx).Field.Selections, &o)
	return o.Subscribers, o.Templates
}

// embeddedParts records which embedded records a selection on Message asks for.
func embeddedParts(op *graphql.OperationContext, message ast.SelectionSet, o *models.ListOptions) {
	for _, d := range graphql.CollectFields(op, message, nil) {
		switch d.Name {
		case "subscriber":
			o.Subscribers = true
		case "template":
			o.Templates = true
		}
	}
}
