package extension

import (
	"context"
	"fmt"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"messages/models"
)

// TrustedMode is how /graphql treats trusted documents (TRUSTED_DOCUMENTS).
type TrustedMode int

// The modes, from the least to the most strict.
const (
	// TrustedOff ignores the trusted documents: a request by documentId is refused with
	// PERSISTED_QUERY_NOT_SUPPORTED, and any document runs.
	TrustedOff TrustedMode = iota
	// TrustedAllow answers known ids with their document, parsed and validated once; any
	// document still runs.
	TrustedAllow
	// TrustedRequire lets a subscriber session run only trusted documents, by id or by a
	// text that is one; an API key may still send any document.
	TrustedRequire
)

var trustedModes = []string{"off", "allow", "require"}

// ParseTrustedMode reads off, allow or require.
func ParseTrustedMode(s string) (TrustedMode, error) {
	for i, name := range trustedModes {
		if strings.EqualFold(s, name) {
			return TrustedMode(i), nil
		}
	}
	return 0, fmt.Errorf("must be off, allow or require, got %q", s)
}

func (m TrustedMode) String() string {
	if int(m) < len(trustedModes) {
		return trustedModes[m]
	}
	return fmt.Sprintf("TrustedMode(%d)", int(m))
}

// The extensions.code of a refusal. Apollo Client's persisted query link knows
// PERSISTED_QUERY_NOT_FOUND (it sends the text next) and PERSISTED_QUERY_NOT_SUPPORTED
// (it stops sending ids); Apollo's router names a text outside the list
// PERSISTED_QUERY_NOT_IN_LIST.
const (
	CodeDocumentNotFound     = "PERSISTED_QUERY_NOT_FOUND"
	CodeDocumentsUnsupported = "PERSISTED_QUERY_NOT_SUPPORTED"
	CodeDocumentNotTrusted   = "PERSISTED_QUERY_NOT_IN_LIST"
)

type documentIDKey struct{}

// WithDocumentID returns ctx carrying the documentId a request named (GraphQL over HTTP's
// persisted documents): the transports read it beside the query, and TrustedDocuments
// resolves it, since gqlgen's parameters have no place for it.
func WithDocumentID(ctx context.Context, id string) context.Context {
	if id == "" {
		return ctx
	}
	return context.WithValue(ctx, documentIDKey{}, id)
}

// DocumentID returns the documentId ctx carries, "" when the request named none.
func DocumentID(ctx context.Context) string {
	id, _ := ctx.Value(documentIDKey{}).(string)
	return id
}

// TrustedDocuments is the gqlgen extension that resolves a request's documentId, or
// Apollo's extensions.persistedQuery.sha256Hash, to a trusted document, and in
// TrustedRequire refuses a subscriber session's document that is not one. It runs before
// the text is parsed, on every transport; gqlgen's automatic persisted queries come after
// it, for hashes it does not know (never for a restricted session).
type TrustedDocuments struct {
	Documents *TrustedSet
	Mode      TrustedMode
}

var _ graphql.OperationParameterMutator = TrustedDocuments{}

// ExtensionName names the extension in gqlgen's stats.
func (TrustedDocuments) ExtensionName() string { return "TrustedDocuments" }

// Validate accepts every schema.
func (TrustedDocuments) Validate(graphql.ExecutableSchema) error { return nil }

// MutateOperationParameters puts the text of the document a request names by id in its
// query, and refuses what the mode does not let the caller run.
func (t TrustedDocuments) MutateOperationParameters(ctx context.Context, p *graphql.RawParams) *gqlerror.Error {
	id := DocumentID(ctx)
	if t.Mode == TrustedOff {
		if id != "" {
			return documentError(CodeDocumentsUnsupported, "documentId is not supported: this server does not answer trusted documents (TRUSTED_DOCUMENTS=off)")
		}
		return nil
	}
	restricted := t.Mode == TrustedRequire && !apiKey(ctx)
	hash, apollo := persistedHash(p.Extensions)
	switch {
	case id != "" && p.Query != "":
		return documentError("BAD_REQUEST", "send a documentId or a query, not both")
	case id != "":
		d := t.Documents.ByID(id)
		if d == nil {
			return documentError(CodeDocumentNotFound, fmt.Sprintf("no trusted document has the id %q", clip(id, 100)))
		}
		p.Query = d.Body
		return nil
	case apollo:
		if d := t.Documents.BySHA256(hash); d != nil {
			if p.Query != "" && p.Query != d.Body {
				return documentError("BAD_REQUEST", "the query is not the text of the persisted query's sha256Hash")
			}
			p.Query = d.Body
			// Known: nothing for gqlgen's automatic persisted queries to hash or keep.
			delete(p.Extensions, "persistedQuery")
			return nil
		}
		if restricted && p.Query == "" {
			return documentError(CodeDocumentNotFound, "PersistedQueryNotFound")
		}
	}
	if restricted && t.Documents.ByText(p.Query) == nil {
		return documentError(CodeDocumentNotTrusted, "this session may run only the documents its frontend was built with (trusted documents): send one by its documentId")
	}
	return nil
}

// apiKey reports whether the caller authenticated with an API key (a server), not a
// subscriber session: an operation without a caller counts as a session, so a wiring
// mistake fails closed.
func apiKey(ctx context.Context) bool {
	c, err := models.CallerFrom(ctx)
	return err == nil && !c.Scoped()
}

// persistedHash returns Apollo's extensions.persistedQuery.sha256Hash, and whether the
// request has a persistedQuery at all.
func persistedHash(ext map[string]any) (string, bool) {
	pq, ok := ext["persistedQuery"].(map[string]any)
	if !ok {
		return "", false
	}
	hash, _ := pq["sha256Hash"].(string)
	return hash, true
}

func documentError(code, message string) *gqlerror.Error {
	return &gqlerror.Error{Message: message, Extensions: map[string]any{"code": code}}
}

// TrustedCache is the handler's query cache with the trusted documents in front: their
// texts are answered with the document parsed and validated when it was loaded, never
// evicted, and everything else goes to Next.
type TrustedCache struct {
	Documents *TrustedSet
	Next      graphql.Cache[*ast.QueryDocument]
}

var _ graphql.Cache[*ast.QueryDocument] = TrustedCache{}

// Get returns the parsed document of query.
func (c TrustedCache) Get(ctx context.Context, query string) (*ast.QueryDocument, bool) {
	if d := c.Documents.ByText(query); d != nil {
		return d.Doc, true
	}
	return c.Next.Get(ctx, query)
}

// Add keeps a parsed document that is not a trusted one.
func (c TrustedCache) Add(ctx context.Context, query string, doc *ast.QueryDocument) {
	c.Next.Add(ctx, query, doc)
}
