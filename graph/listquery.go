package graph

import (
	"context"
	"sync/atomic"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"messages/graph/extension"
)

// listQueries answers the queries frontends send most, those that list messages, and the
// mutations that answer with messages (a mark), with the encoders of
// listencoders.generated.go. The operation is gqlgen's as usual: parsing,
// validation, limits, the root fields run concurrently by its executor, their arguments
// coerced and their resolvers called by its generated code, the field and root field
// middleware, error presentation and panic recovery. Only the writing of a root field's
// result differs: a root field whose type the encoders write (every Query or Mutation
// field of an object type, or a list of them: messages, messagesConnection,
// markMessageAction) and whose selection they can plan has its
// result written by them, in its field middleware, which gqlgen's executor takes as the
// field's answer (graphql.ResolveField accepts a graphql.Marshaler from the middleware
// chain). Any other root field, and a root field selecting a field the encoders do not
// write or deferring a fragment, is written by gqlgen's executor.
type listQueries struct {
	es *executableSchema
	// query and mutation are the names of the schema's root types, the parents of the
	// root fields ("" for no mutation type).
	query, mutation string
	// plans keeps the plans of operations whose selections do not depend on their
	// variables (no @include or @skip on one takes a variable), by the parsed operation,
	// which gqlgen's query cache hands out again for the same text. Each is charged its
	// operation's syntax tree, which it keeps alive, and its plan, about as large.
	plans *extension.ByteLRU[*ast.OperationDefinition, *listPlan]
	// answered, when set, counts the queries planned here.
	answered *atomic.Int64
}

var (
	_ graphql.OperationInterceptor = listQueries{}
	_ graphql.FieldInterceptor     = listQueries{}
)

// newListQueries returns the extension writing es's list root fields, counting in
// answered the operations it planned.
func newListQueries(es *executableSchema, answered *atomic.Int64) listQueries {
	plans := extension.NewByteLRU(planCacheBytes, func(op *ast.OperationDefinition, _ *listPlan) int { return 2 * extension.OperationBytes(op) })
	q := listQueries{es: es, query: es.Schema().Query.Name, plans: plans, answered: answered}
	if m := es.Schema().Mutation; m != nil {
		q.mutation = m.Name
	}
	return q
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

// listPlan is what an operation selects of the results of its root fields the encoders
// write, by alias; empty when there is none.
type listPlan struct {
	// mutation says the root fields are the mutation type's.
	mutation bool
	roots    map[string]*listSelection
}

type listPlanKey struct{}

// listRun is one planned operation being answered.
type listRun struct {
	plan *listPlan
	ec   *executionContext
}

// InterceptOperation plans a query or a mutation, for InterceptField.
func (q listQueries) InterceptOperation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	oc := graphql.GetOperationContext(ctx)
	if p := q.plan(oc); p != nil && len(p.roots) > 0 {
		if q.answered != nil {
			q.answered.Add(1)
		}
		ctx = context.WithValue(ctx, listPlanKey{}, &listRun{plan: p, ec: newExecutionContext(oc, q.es, nil)})
	}
	return next(ctx)
}

// plan returns the plan of a query or a mutation, or nil for a subscription.
func (q listQueries) plan(oc *graphql.OperationContext) *listPlan {
	if oc.Operation == nil || oc.Operation.Operation != ast.Query && oc.Operation.Operation != ast.Mutation {
		return nil
	}
	if p, ok := q.plans.Get(oc.Operation); ok {
		return p
	}
	var p *listPlan
	if oc.Operation.Operation == ast.Mutation {
		p = &listPlan{mutation: true, roots: listPlanMutation(oc, oc.Operation.SelectionSet)}
	} else {
		p = &listPlan{roots: listPlanQuery(oc, oc.Operation.SelectionSet)}
	}
	if !variableDirectives(oc.Operation.SelectionSet, oc.Doc.Fragments, map[string]bool{}) {
		q.plans.Add(oc.Operation, p)
	}
	return p
}

// InterceptField answers a planned root field: it runs the field's resolver (through
// the rest of the middleware) and writes the result with the encoders, or leaves the
// result to gqlgen when they decline it. Every other field passes untouched.
func (q listQueries) InterceptField(ctx context.Context, next graphql.Resolver) (any, error) {
	run, ok := ctx.Value(listPlanKey{}).(*listRun)
	if !ok {
		return next(ctx)
	}
	fc := graphql.GetFieldContext(ctx)
	sel, ok := run.plan.roots[fc.Field.Alias]
	root := q.query
	if run.plan.mutation {
		root = q.mutation
	}
	if !ok || fc.Object != root {
		return next(ctx)
	}
	res, err := next(ctx)
	if err != nil || res == nil {
		return res, err
	}
	if w := run.encode(ctx, run.plan.mutation, fc.Field.Name, sel, res); w != nil {
		return w, nil
	}
	return res, nil
}

// encode writes res, the result of the root field named name (of the mutation type when
// mutation is set), as sel selects it, or returns nil when the encoders decline it. A
// panic declines too: gqlgen's executor then meets it where it recovers from it.
func (run *listRun) encode(ctx context.Context, mutation bool, name string, sel *listSelection, res any) (w *listWriter) {
	defer func() {
		if recover() != nil {
			w = nil
		}
	}()
	w = newListWriter(bufferSize(sel.written.Load()))
	write := run.ec.listQuery
	if mutation {
		write = run.ec.listMutation
	}
	if !write(ctx, w, name, sel, res) {
		w.release()
		return nil
	}
	sel.written.Store(int64(len(w.b)))
	return w
}

// bufferSize is the capacity of the buffer of a value whose selection last wrote last
// bytes: an eighth more, so that a page of the same size is written without growing the
// buffer, between 2 KiB and 1 MiB (a larger one grows as it needs).
func bufferSize(last int64) int {
	return int(min(max(last+last/8, 2<<10), 1<<20))
}
