package graph

import (
	"context"
	"io"
	"reflect"
	"sync/atomic"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"messages/graph/model"
	"messages/models"
)

// listQueries answers the queries frontends send most, those that only list messages
// (messages, messagesConnection and __typename at the root), with the encoders of
// encode.go. Everything else about the operation is gqlgen's as usual: parsing,
// validation, limits, argument coercion, the field context, the field and root field
// middleware, error presentation and panic recovery (graphql.ResolveField). Only writing
// the resolver's result differs. An operation selecting anything else, or deferring a
// fragment, is executed by gqlgen whole.
type listQueries struct {
	es *executableSchema
	// plans keeps the plans of operations whose selections do not depend on their
	// variables (no @include or @skip on one), by the parsed operation, which gqlgen's
	// query cache hands out again for the same text. Each is charged its operation's
	// syntax tree, which it keeps alive, and its plan, about as large.
	plans *byteLRU[*ast.OperationDefinition, *listPlan]
	pages *objectEncoder // MessagesPage
	conns *objectEncoder // MessageConnection
	// answered, when set, counts the queries answered here.
	answered *atomic.Int64
}

var (
	_ graphql.OperationInterceptor = listQueries{}
	_ graphql.ResponseInterceptor  = listQueries{}
)

func newListQueries(es *executableSchema, r ResolverRoot, answered *atomic.Int64) listQueries {
	roots := newEncoders(es.Schema(), r, map[string]reflect.Type{
		"MessagesPage":      reflect.TypeFor[models.MessagesPage](),
		"MessageConnection": reflect.TypeFor[model.MessageConnection](),
	})
	plans := newByteLRU(planCacheBytes, func(op *ast.OperationDefinition, _ *listPlan) int { return 2 * operationBytes(op) })
	return listQueries{es: es, plans: plans, pages: roots["MessagesPage"], conns: roots["MessageConnection"], answered: answered}
}

// ExtensionName names the extension in gqlgen's stats.
func (listQueries) ExtensionName() string { return "ListQueries" }

// Validate accepts every schema.
func (listQueries) Validate(graphql.ExecutableSchema) error { return nil }

// variableDirectives reports whether a directive in set (fragments followed, each once)
// takes a variable, so that what set selects depends on the request's variables.
func variableDirectives(set ast.SelectionSet, fragments ast.FragmentDefinitionList, seen map[string]bool) bool {
	takesVariable := func(ds ast.DirectiveList) bool {
		for _, d := range ds {
			for _, a := range d.Arguments {
				if a.Value != nil && a.Value.Kind == ast.Variable {
					return true
				}
			}
		}
		return false
	}
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			if takesVariable(s.Directives) || variableDirectives(s.SelectionSet, fragments, seen) {
				return true
			}
		case *ast.InlineFragment:
			if takesVariable(s.Directives) || variableDirectives(s.SelectionSet, fragments, seen) {
				return true
			}
		case *ast.FragmentSpread:
			if takesVariable(s.Directives) {
				return true
			}
			if seen[s.Name] {
				continue
			}
			seen[s.Name] = true
			if f := fragments.ForName(s.Name); f != nil && (takesVariable(f.Directives) || variableDirectives(f.SelectionSet, fragments, seen)) {
				return true
			}
		}
	}
	return false
}

// listPlan is what a list query selects of each root field (nil for __typename).
type listPlan struct {
	roots []graphql.CollectedField
	plans []*selection
}

type listPlanKey struct{}

// listRun is one planned operation being answered.
type listRun struct {
	plan     *listPlan
	answered atomic.Bool
}

// InterceptOperation plans an operation the encoders can answer, for InterceptResponse.
func (q listQueries) InterceptOperation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	if p := q.plan(graphql.GetOperationContext(ctx)); p != nil {
		ctx = context.WithValue(ctx, listPlanKey{}, &listRun{plan: p})
	}
	return next(ctx)
}

// plan returns the plan of a list query, or nil for any other operation.
func (q listQueries) plan(oc *graphql.OperationContext) *listPlan {
	if oc.Operation == nil || oc.Operation.Operation != ast.Query {
		return nil
	}
	if p, ok := q.plans.get(oc.Operation); ok {
		return p
	}
	p := q.compile(oc)
	if p != nil && !variableDirectives(oc.Operation.SelectionSet, oc.Doc.Fragments, map[string]bool{}) {
		q.plans.add(oc.Operation, p)
	}
	return p
}

// compile plans what a list query selects, or returns nil when it is not one.
func (q listQueries) compile(oc *graphql.OperationContext) *listPlan {
	roots := graphql.CollectFields(oc, oc.Operation.SelectionSet, queryImplementors)
	p := &listPlan{roots: roots, plans: make([]*selection, len(roots))}
	for i, f := range roots {
		if len(f.Deferrables) > 0 {
			return nil
		}
		ok := true
		switch f.Name {
		case "__typename":
		case "messages":
			p.plans[i], ok = q.pages.plan(oc, f.Selections)
		case "messagesConnection":
			p.plans[i], ok = q.conns.plan(oc, f.Selections)
		default:
			ok = false
		}
		if !ok {
			return nil
		}
	}
	return p
}

// InterceptResponse runs a planned list query's root fields as gqlgen's executor would,
// one after the other, writing their results with the encoders. It must be the innermost
// response interceptor, since it answers without calling next; requests refused before
// running have no plan and pass.
func (q listQueries) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	run, ok := ctx.Value(listPlanKey{}).(*listRun)
	if !ok {
		return next(ctx)
	}
	if run.answered.Swap(true) {
		// A query has one response: transports that read a stream of them (WebSocket,
		// SSE) ask again until nil, which ends it.
		return nil
	}
	p := run.plan
	if q.answered != nil {
		q.answered.Add(1)
	}
	roots, plans := p.roots, p.plans
	oc := graphql.GetOperationContext(ctx)
	ec := newExecutionContext(oc, q.es, nil)
	ctx = graphql.WithFieldContext(ctx, &graphql.FieldContext{Object: "Query"})
	w := &dataWriter{b: make([]byte, 0, 2048)}
	w.b = append(w.b, '{')
	invalid := false
	seen := make(map[string]bool, len(roots))
	for i, f := range roots {
		if seen[f.Alias] {
			continue
		}
		if len(seen) > 0 {
			w.b = append(w.b, ',')
		}
		seen[f.Alias] = true
		w.b = append(appendQuotedString(w.b, f.Alias), ':')
		if f.Name == "__typename" {
			w.b = append(w.b, `"Query"`...)
			continue
		}
		rctx := graphql.WithRootFieldContext(ctx, &graphql.RootFieldContext{Object: f.Name, Field: f})
		mark := len(w.b)
		res := oc.RootResolverMiddleware(rctx, func(ctx context.Context) (res graphql.Marshaler) {
			defer func() {
				if r := recover(); r != nil {
					ec.Error(ctx, ec.Recover(ctx, r))
					res = graphql.Null
				}
			}()
			return q.resolve(ctx, ec, f, plans[i], w)
		})
		if res == graphql.Null {
			invalid = true
		}
		if res != written {
			w.b = w.b[:mark]
			res.MarshalGQL(w)
		}
	}
	w.b = append(w.b, '}')

	resp := &graphql.Response{Data: w.b}
	if invalid {
		resp.Data = []byte("null")
	}
	resp.Errors = graphql.GetErrors(ctx)
	resp.Extensions = graphql.GetExtensions(ctx)
	return resp
}

// resolve runs the root field f through graphql.ResolveField, as the generated
// _Query_messages and _Query_messagesConnection do, but appends the result to w with
// plan; when the encoders decline the value, gqlgen's marshaller writes it.
func (q listQueries) resolve(ctx context.Context, ec *executionContext, f graphql.CollectedField, plan *selection, w *dataWriter) graphql.Marshaler {
	oc := ec.OperationContext
	switch f.Name {
	case "messages":
		return graphql.ResolveField(ctx, oc, f, ec.fieldContext_Query_messages,
			func(ctx context.Context) (any, error) {
				a := graphql.GetFieldContext(ctx).Args
				return ec.Resolvers.Query().Messages(ctx, a["channel"].(*models.ChannelType), a["subscriberId"].(*string),
					a["transactionId"].([]string), a["page"].(*int), a["limit"].(*int))
			}, nil,
			func(ctx context.Context, sel ast.SelectionSet, v *models.MessagesPage) graphql.Marshaler {
				if v != nil && w.encode(ctx, plan, reflect.ValueOf(v).Elem()) {
					return written
				}
				return ec.marshalNMessagesPage2ᚖmessagesᚋmodelsᚐMessagesPage(ctx, sel, v)
			}, true, true)
	default: // messagesConnection
		return graphql.ResolveField(ctx, oc, f, ec.fieldContext_Query_messagesConnection,
			func(ctx context.Context) (any, error) {
				a := graphql.GetFieldContext(ctx).Args
				return ec.Resolvers.Query().MessagesConnection(ctx, a["channel"].(*models.ChannelType), a["subscriberId"].(*string),
					a["transactionId"].([]string), a["first"].(*int), a["after"].(*string))
			}, nil,
			func(ctx context.Context, sel ast.SelectionSet, v *model.MessageConnection) graphql.Marshaler {
				if v != nil && w.encode(ctx, plan, reflect.ValueOf(v).Elem()) {
					return written
				}
				return ec.marshalNMessageConnection2ᚖmessagesᚋgraphᚋmodelᚐMessageConnection(ctx, sel, v)
			}, true, true)
	}
}

// dataWriter is the response's data as it is written.
type dataWriter struct{ b []byte }

// Write appends p, for the marshallers of gqlgen.
func (w *dataWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

// encode appends obj as plan selects it, or appends nothing and reports false when the
// encoders decline a value.
func (w *dataWriter) encode(ctx context.Context, plan *selection, obj reflect.Value) bool {
	mark := len(w.b)
	b, ok := plan.encode(ctx, w.b, obj)
	if !ok {
		w.b = b[:mark]
		return false
	}
	w.b = b
	return true
}

// written stands for a value the encoders have already appended to the data.
var written graphql.Marshaler = appended{}

type appended struct{}

func (appended) MarshalGQL(io.Writer) {}
