package extension

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/parser"
	"github.com/vektah/gqlparser/v2/validator"

	"messages/models"
)

// TrustedDocument is a trusted document as an instance holds it: its text parsed and
// validated against the schema once, when it was loaded.
type TrustedDocument struct {
	models.TrustedDocument
	Doc *ast.QueryDocument
}

// TrustedSource is where the trusted documents are kept (the store).
type TrustedSource interface {
	TrustedDocumentIDs(ctx context.Context) ([]string, error)
	TrustedDocumentsByID(ctx context.Context, ids []string) ([]models.TrustedDocument, error)
}

// TrustedSet is the trusted documents an instance answers: read from its source at
// start and again every few seconds (Watch), so what `documents add` and `documents
// remove` change reaches every instance without a restart. Lookups read an immutable
// snapshot, without a lock. The zero of a *TrustedSet, nil, holds no document.
type TrustedSet struct {
	schema *ast.Schema
	limits Limits
	source TrustedSource
	logger *slog.Logger

	current atomic.Pointer[trustedIndex]
	mu      sync.Mutex // one Refresh at a time
}

// trustedIndex finds a document by the manifest's id, by the SHA-256 of its text, and by
// its text.
type trustedIndex struct {
	ids    []string // sorted
	byID   map[string]*TrustedDocument
	bySHA  map[string]*TrustedDocument
	byText map[string]*TrustedDocument
}

// NewTrustedSet returns a set of the documents in source, empty until Refresh, whose
// documents are compiled against schema within limits.
func NewTrustedSet(schema *ast.Schema, limits Limits, source TrustedSource, logger *slog.Logger) *TrustedSet {
	s := &TrustedSet{schema: schema, limits: limits, source: source, logger: logger}
	s.current.Store(&trustedIndex{})
	return s
}

// Refresh reads the ids in the source and, if they changed, the texts of the new ones,
// each compiled once. A document that no longer compiles (the schema changed since it
// was added) is logged and left out.
func (s *TrustedSet) Refresh(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids, err := s.source.TrustedDocumentIDs(ctx)
	if err != nil {
		return err
	}
	slices.Sort(ids)
	old := s.current.Load()
	if slices.Equal(ids, old.ids) {
		return nil
	}
	var fresh []string
	next := &trustedIndex{ids: ids, byID: make(map[string]*TrustedDocument, len(ids)),
		bySHA: make(map[string]*TrustedDocument, len(ids)), byText: make(map[string]*TrustedDocument, len(ids))}
	for _, id := range ids {
		if d := old.byID[id]; d != nil {
			next.add(d)
		} else if _, known := old.byID[id]; !known {
			fresh = append(fresh, id)
		}
	}
	docs, err := s.source.TrustedDocumentsByID(ctx, fresh)
	if err != nil {
		return err
	}
	for _, d := range docs {
		doc, err := CompileDocument(s.schema, s.limits, d.Body)
		if err != nil {
			s.logger.Error("trusted document does not compile against this schema: left out", "id", d.ID, "manifest", d.Manifest, "error", err.Error())
			next.byID[d.ID] = nil // remembered, so it is not read again
			continue
		}
		next.add(&TrustedDocument{TrustedDocument: d, Doc: doc})
	}
	for id, d := range old.byID {
		if d == nil && slices.Contains(ids, id) {
			next.byID[id] = nil
		}
	}
	s.current.Store(next)
	s.logger.Info("trusted documents", "documents", len(next.bySHA), "ids", len(ids))
	return nil
}

func (x *trustedIndex) add(d *TrustedDocument) {
	x.byID[d.ID] = d
	x.bySHA[d.SHA256] = d
	x.byText[d.Body] = d
}

// Watch refreshes the set every interval until ctx ends, logging a failed read (the set
// is kept as it was).
func (s *TrustedSet) Watch(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := s.Refresh(ctx); err != nil && ctx.Err() == nil {
				s.logger.Warn("reading trusted documents", "error", err.Error())
			}
		}
	}
}

// ByID returns the document a request's documentId names: "sha256:<hex>" by the hash
// of its text, anything else by the manifest's id; nil when none is trusted.
func (s *TrustedSet) ByID(id string) *TrustedDocument {
	if s == nil {
		return nil
	}
	x := s.current.Load()
	if sum, ok := models.DocumentSHA256(id); ok {
		return x.bySHA[sum]
	}
	return x.byID[id]
}

// BySHA256 returns the document whose text has this hex SHA-256, nil when none is trusted.
func (s *TrustedSet) BySHA256(sum string) *TrustedDocument {
	if s == nil {
		return nil
	}
	return s.current.Load().bySHA[sum]
}

// ByText returns the trusted document of this text, nil when none is.
func (s *TrustedSet) ByText(text string) *TrustedDocument {
	if s == nil || text == "" {
		return nil
	}
	return s.current.Load().byText[text]
}

// CompileDocument parses a document and validates it against schema, within the text's
// limits, as a request's document is: what `documents add` checks each document of a
// manifest with, and what an instance keeps of a trusted one.
func CompileDocument(schema *ast.Schema, limits Limits, body string) (*ast.QueryDocument, error) {
	if limits.QueryBytes > 0 && len(body) > limits.QueryBytes {
		return nil, fmt.Errorf("the document is %d bytes, more than the limit of %d", len(body), limits.QueryBytes)
	}
	if err := limits.scan(body); err != nil {
		return nil, errors.New(err.Message)
	}
	doc, err := parser.ParseQueryWithTokenLimit(&ast.Source{Input: body}, limits.Tokens)
	if err != nil {
		return nil, err
	}
	if len(doc.Operations) == 0 {
		return nil, errors.New("the document has no operation")
	}
	if errs := validator.ValidateWithRules(schema, doc, nil); len(errs) > 0 {
		return nil, errorList(errs)
	}
	return doc, nil
}

// errorList joins a validator's errors into one.
func errorList(errs gqlerror.List) error {
	out := make([]error, len(errs))
	for i, e := range errs {
		out[i] = e
	}
	return errors.Join(out...)
}
