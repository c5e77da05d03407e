package extension

import (
	"context"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"go.opentelemetry.io/otel/attribute"
	otelcodes "go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
)

// Tracing is a gqlgen extension that traces each operation, and within it each root
// field (Query.messages, Mutation.markMessageAction), so the SQL spans of the store nest
// under the resolver that issued them. The fields below the root are computed from what
// the root resolver read (a Node's id, an event's cursor) and get no span of their own:
// one per message would bury the request's few spans, and the list encoders
// (graph/listquery.go) do not run them as fields.
type Tracing struct {
	tracer trace.Tracer
}

var (
	_ graphql.HandlerExtension     = Tracing{}
	_ graphql.OperationInterceptor = Tracing{}
	_ graphql.FieldInterceptor     = Tracing{}
)

// rootTypes are the operation types, whose fields are the root fields.
var rootTypes = map[string]bool{"Query": true, "Mutation": true, "Subscription": true}

// NewTracing returns the extension, creating spans with tp.
func NewTracing(tp trace.TracerProvider) Tracing {
	return Tracing{tracer: tp.Tracer("messages/graph")}
}

// ExtensionName names the extension in gqlgen's stats.
func (Tracing) ExtensionName() string { return "Tracing" }

// Validate accepts every schema.
func (Tracing) Validate(graphql.ExecutableSchema) error { return nil }

// InterceptOperation spans an operation from dispatch to its response, named
// "query ListMessages" (or just "query" when anonymous).
func (t Tracing) InterceptOperation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	oc := graphql.GetOperationContext(ctx)
	typ, name := operationType(oc), operationName(oc)
	spanName := typ
	attrs := []attribute.KeyValue{semconv.GraphQLOperationTypeKey.String(typ)}
	if name != "" {
		spanName += " " + name
		attrs = append(attrs, semconv.GraphQLOperationName(name))
	}
	ctx, span := t.tracer.Start(ctx, spanName, trace.WithAttributes(attrs...))
	respond := next(ctx)
	var once sync.Once
	return func(ctx context.Context) *graphql.Response {
		resp := respond(ctx)
		once.Do(func() {
			if resp != nil && len(resp.Errors) > 0 {
				span.SetAttributes(attribute.Int("graphql.errors", len(resp.Errors)))
				span.SetStatus(otelcodes.Error, resp.Errors[0].Message)
			}
			span.End()
		})
		return resp
	}
}

// InterceptField spans the root fields; the fields below them pass untouched.
func (t Tracing) InterceptField(ctx context.Context, next graphql.Resolver) (any, error) {
	fc := graphql.GetFieldContext(ctx)
	if fc == nil || !fc.IsResolver || !rootTypes[fc.Object] {
		return next(ctx)
	}
	ctx, span := t.tracer.Start(ctx, fc.Object+"."+fc.Field.Name, trace.WithAttributes(
		attribute.String("graphql.field.name", fc.Field.Name),
		attribute.String("graphql.field.path", fc.Path().String()),
	))
	defer span.End()
	res, err := next(ctx)
	if err != nil {
		span.RecordError(err)
		span.SetStatus(otelcodes.Error, err.Error())
	}
	return res, err
}
