package store_test

import (
	"context"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"messages/models"
	"messages/models/dbtest"
	"messages/models/store"
)

// Each statement is a client span under the caller's, named by operation and table,
// carrying the SQL without its values, the rows it affected and its error.
func TestTraceSpans(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		exp := tracetest.NewInMemoryExporter()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
		if err := s.Trace(tp); err != nil {
			t.Fatal(err)
		}
		tn := dbtest.NewTenant(t, s, "trace")
		tn.Subscriber(t, "traced-subscriber")
		exp.Reset()

		ctx, request := tp.Tracer("test").Start(context.Background(), "request")
		db := s.DB().WithContext(ctx)
		var subscribers []models.Subscriber
		if err := db.Where("environment_id = ?", tn.Env.ID).Find(&subscribers).Error; err != nil {
			t.Fatal(err)
		}
		if err := db.Model(&models.Subscriber{}).Where("environment_id = ?", tn.Env.ID).Update("locale", "fr").Error; err != nil {
			t.Fatal(err)
		}
		quiet := db.Session(&gorm.Session{Logger: logger.Discard}) // the error is expected
		if err := quiet.Exec("UPDATE no_such_table SET x = 1").Error; err == nil {
			t.Fatal("an update of a missing table succeeded")
		}
		request.End()

		spans := map[string]tracetest.SpanStub{}
		for _, sp := range exp.GetSpans() {
			if sp.InstrumentationScope.Name == store.TraceScope {
				spans[sp.Name] = sp
				if sp.Parent.SpanID() != request.SpanContext().SpanID() || sp.SpanKind != trace.SpanKindClient {
					t.Errorf("%s: want a client span under the caller's", sp.Name)
				}
				if text := spanAttr(sp, "db.query.text"); text == "" || strings.Contains(text, tn.Env.ID) {
					t.Errorf("%s: db.query.text %q, want the statement without its values", sp.Name, text)
				}
			}
		}
		if sp, ok := spans["select subscribers"]; !ok || spanAttr(sp, "db.operation.name") != "select" || spanAttr(sp, "db.collection.name") != "subscribers" {
			t.Errorf("no select span with its operation and table: %v", exp.GetSpans())
		}
		if sp, ok := spans["update subscribers"]; !ok || spanAttr(sp, "db.rows_affected") != "1" {
			t.Errorf("no update span with db.rows_affected 1: %v", sp.Attributes)
		}
		var failed bool
		for _, sp := range spans {
			failed = failed || (sp.Status.Code == codes.Error && len(sp.Events) > 0)
		}
		if !failed {
			t.Errorf("the failing statement's span records no error: %v", exp.GetSpans())
		}
	})
}

func spanAttr(s tracetest.SpanStub, key string) string {
	for _, kv := range s.Attributes {
		if string(kv.Key) == key {
			return kv.Value.Emit()
		}
	}
	return ""
}
