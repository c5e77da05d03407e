package extension

import (
	"context"
	"regexp"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/prometheus/client_golang/prometheus"
)

// Operation outcomes, the outcome label of graphql_operations_total.
const (
	OutcomeOK      = "ok"      // ran and answered without errors
	OutcomeError   = "error"   // ran and answered with at least one error
	OutcomeRefused = "refused" // refused before running: unparsable, invalid or over a limit
)

// DefaultMaxOperationNames is how many distinct operation names get a label of their own
// before further names are counted as "other".
const DefaultMaxOperationNames = 50

// MetricsOptions configure Metrics.
type MetricsOptions struct {
	// KnownOperations always get a label of their own, whatever was seen before them.
	KnownOperations []string
	// MaxOperationNames caps the other names that get a label, first seen first served;
	// 0 means DefaultMaxOperationNames.
	MaxOperationNames int
}

// Metrics is a gqlgen extension that counts and times operations for Prometheus:
// graphql_operations_total{operation,type,outcome} and
// graphql_operation_duration_seconds{operation,type}. Operation names are client text,
// so only a bounded set of them become label values.
type Metrics struct {
	operations *prometheus.CounterVec
	duration   *prometheus.HistogramVec
	names      *operationNames
}

var (
	_ graphql.HandlerExtension     = (*Metrics)(nil)
	_ graphql.OperationInterceptor = (*Metrics)(nil)
	_ graphql.ResponseInterceptor  = (*Metrics)(nil)
)

// NewMetrics registers the GraphQL metrics on reg.
func NewMetrics(reg prometheus.Registerer, o MetricsOptions) (*Metrics, error) {
	if o.MaxOperationNames <= 0 {
		o.MaxOperationNames = DefaultMaxOperationNames
	}
	m := &Metrics{
		operations: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "graphql_operations_total",
			Help: "GraphQL operations by name (bounded; \"other\" past the cap), type and outcome (ok, error, refused).",
		}, []string{"operation", "type", "outcome"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "graphql_operation_duration_seconds",
			Help:    "Time from receiving a GraphQL operation to its response, of operations that ran.",
			Buckets: prometheus.DefBuckets,
		}, []string{"operation", "type"}),
		names: newOperationNames(o.KnownOperations, o.MaxOperationNames),
	}
	for _, c := range []prometheus.Collector{m.operations, m.duration} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// ExtensionName names the extension in gqlgen's stats.
func (*Metrics) ExtensionName() string { return "Metrics" }

// Validate accepts every schema.
func (*Metrics) Validate(graphql.ExecutableSchema) error { return nil }

// ranKey marks the context of an operation that passed validation and runs.
type ranKey struct{}

// InterceptOperation times an operation that runs, from its arrival to its response.
func (m *Metrics) InterceptOperation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	oc := graphql.GetOperationContext(ctx)
	start := oc.Stats.OperationStart
	if start.IsZero() {
		start = time.Now()
	}
	name, typ := m.names.admit(operationName(oc)), operationType(oc)
	respond := next(context.WithValue(ctx, ranKey{}, true))
	var once sync.Once
	return func(ctx context.Context) *graphql.Response {
		resp := respond(ctx)
		once.Do(func() {
			outcome := OutcomeOK
			if resp == nil || len(resp.Errors) > 0 {
				outcome = OutcomeError
			}
			m.operations.WithLabelValues(name, typ, outcome).Inc()
			m.duration.WithLabelValues(name, typ).Observe(time.Since(start).Seconds())
		})
		return resp
	}
}

// InterceptResponse counts the operations refused before running: gqlgen answers those
// without InterceptOperation, so no ranKey is in their context.
func (m *Metrics) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	resp := next(ctx)
	if ctx.Value(ranKey{}) != nil {
		return resp
	}
	name, typ := "", "unknown"
	if graphql.HasOperationContext(ctx) {
		oc := graphql.GetOperationContext(ctx)
		name, typ = operationName(oc), operationType(oc)
	}
	// Only a name that already has a label keeps it, so refused junk never takes a place.
	m.operations.WithLabelValues(m.names.lookup(name), typ, OutcomeRefused).Inc()
	return resp
}

// operationName is the name the client gave the operation, "" for an anonymous one.
func operationName(oc *graphql.OperationContext) string {
	if oc.Operation != nil {
		return oc.Operation.Name
	}
	return oc.OperationName
}

// operationType is query, mutation or subscription; unknown before parsing.
func operationType(oc *graphql.OperationContext) string {
	if oc.Operation == nil {
		return "unknown"
	}
	return string(oc.Operation.Operation)
}

// Operation label values besides the names themselves.
const (
	anonymousOperation = "anonymous"
	otherOperation     = "other"
)

// graphqlName is the grammar of a GraphQL name, kept short for a label.
var graphqlName = regexp.MustCompile(`^[_A-Za-z][_0-9A-Za-z]{0,63}$`)

// operationNames bounds the operation label: known names, then the first max names of
// operations that ran; everything else is "other".
type operationNames struct {
	mu    sync.RWMutex
	known map[string]bool
	seen  map[string]bool
	max   int
}

func newOperationNames(known []string, max int) *operationNames {
	n := &operationNames{known: map[string]bool{}, seen: map[string]bool{}, max: max}
	for _, k := range known {
		n.known[k] = true
	}
	return n
}

// admit returns the label of an operation that ran, taking its name while there is room.
func (n *operationNames) admit(name string) string {
	if label := n.lookup(name); label != otherOperation || !graphqlName.MatchString(name) {
		return label
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.seen[name] || len(n.seen) < n.max {
		n.seen[name] = true
		return name
	}
	return otherOperation
}

// lookup returns the label of a name without taking a place for it.
func (n *operationNames) lookup(name string) string {
	if name == "" {
		return anonymousOperation
	}
	n.mu.RLock()
	defer n.mu.RUnlock()
	if n.known[name] || n.seen[name] {
		return name
	}
	return otherOperation
}
