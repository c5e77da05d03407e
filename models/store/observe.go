package store

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
	"gorm.io/gorm"
)

// TraceScope is the instrumentation scope of the store's SQL spans.
const TraceScope = "messages/models"

// Trace makes every query of the store a client span of tp, a child of the span in the
// query's context, named like "select messages" and carrying the SQL text with its
// placeholders, never the values bound to them, so no message data or key hash leaves in
// a trace. Call it once, before serving and after UseReplicas: replicas' queries are
// traced too.
//
// It is a handful of GORM callbacks rather than gorm.io/plugin/opentelemetry, which links
// the ClickHouse and PostgreSQL drivers into the binary whatever the dialect.
func (s *Store) Trace(tp trace.TracerProvider) error {
	t := sqlTracer{tracer: tp.Tracer(TraceScope), system: dbSystem(s.dialect)}
	dbs := []*gorm.DB{s.db}
	if s.replicas != nil {
		for _, r := range s.replicas.replicas {
			dbs = append(dbs, r.db)
		}
	}
	for _, db := range dbs {
		if err := t.register(db); err != nil {
			return err
		}
	}
	return nil
}

// register adds the tracer's callbacks to one handle: the primary's or a replica's.
func (t sqlTracer) register(db *gorm.DB) error {
	cb := db.Callback()
	// Each step's span opens just before GORM's own callback runs the SQL and closes
	// just after.
	type register = func(name string, fn func(*gorm.DB)) error
	for _, step := range []struct {
		name          string
		before, after register
	}{
		{"create", cb.Create().Before("gorm:create").Register, cb.Create().After("gorm:create").Register},
		{"query", cb.Query().Before("gorm:query").Register, cb.Query().After("gorm:query").Register},
		{"update", cb.Update().Before("gorm:update").Register, cb.Update().After("gorm:update").Register},
		{"delete", cb.Delete().Before("gorm:delete").Register, cb.Delete().After("gorm:delete").Register},
		{"row", cb.Row().Before("gorm:row").Register, cb.Row().After("gorm:row").Register},
		{"raw", cb.Raw().Before("gorm:raw").Register, cb.Raw().After("gorm:raw").Register},
	} {
		if err := step.before("trace:before_"+step.name, t.start("gorm."+step.name)); err != nil {
			return fmt.Errorf("trace %s: %w", step.name, err)
		}
		if err := step.after("trace:after_"+step.name, t.end); err != nil {
			return fmt.Errorf("trace %s: %w", step.name, err)
		}
	}
	return nil
}

// sqlTracer starts a span before each statement and ends it after.
type sqlTracer struct {
	tracer trace.Tracer
	system attribute.KeyValue
}

// spanContext is the statement's context while its span is open, remembering the
// caller's so end can put it back: GORM reuses a Statement across calls of one session.
type spanContext struct {
	context.Context
	caller context.Context
}

// start opens a span named name (renamed by end once the table is known).
func (t sqlTracer) start(name string) func(*gorm.DB) {
	return func(tx *gorm.DB) {
		ctx, _ := t.tracer.Start(tx.Statement.Context, name, trace.WithSpanKind(trace.SpanKindClient))
		tx.Statement.Context = spanContext{Context: ctx, caller: tx.Statement.Context}
	}
}

// end records the statement, the rows it affected and its error, and closes the span.
func (t sqlTracer) end(tx *gorm.DB) {
	sc, ok := tx.Statement.Context.(spanContext)
	if !ok {
		return // start did not run: another callback stopped the chain first
	}
	tx.Statement.Context = sc.caller
	span := trace.SpanFromContext(sc.Context)
	defer span.End()
	if !span.IsRecording() {
		return
	}
	query := tx.Statement.SQL.String()
	operation := sqlOperation(query)
	span.SetAttributes(t.system, semconv.DBQueryText(query), semconv.DBOperationName(operation))
	if table := tx.Statement.Table; table != "" {
		summary := operation + " " + table
		span.SetAttributes(semconv.DBCollectionName(table), semconv.DBQuerySummary(summary))
		span.SetName(summary)
	}
	if tx.Statement.RowsAffected != -1 {
		span.SetAttributes(attribute.Int64("db.rows_affected", tx.Statement.RowsAffected))
	}
	if err := tx.Error; err != nil && !errors.Is(err, gorm.ErrRecordNotFound) {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
}

// sqlOperation is the statement's first word in lower case: select, insert, update...
func sqlOperation(query string) string {
	query = strings.TrimLeft(query, " \t\r\n;(")
	end := strings.IndexFunc(query, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	})
	if end >= 0 {
		query = query[:end]
	}
	return strings.ToLower(query)
}

// dbSystem names the database product in the semantic conventions' words.
func dbSystem(dialect string) attribute.KeyValue {
	if dialect == DialectSQLite {
		return semconv.DBSystemNameSQLite
	}
	return semconv.DBSystemNameMySQL
}
