package extension

import (
	"context"
	"fmt"
	"unicode/utf8"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/lexer"
)

// Limits refuse abusive queries before they cost anything: the size of the text, what a
// pass of the lexer counts in it (tokens, selections, a name repeated in one selection
// set, aliases, directives, nesting) before it is parsed, validated or registered as a
// persisted query, and what the parsed operation expands to (depth and aliases through
// fragments, complexity) before it runs.
type Limits struct {
	// Complexity caps the cost of an operation: each field costs 1, and a list of
	// messages costs its limit times the cost of one message.
	Complexity int
	// Depth caps how deeply selections nest.
	Depth int
	// QueryBytes caps the length of the query text.
	QueryBytes int
	// Tokens caps the number of lexer tokens, bounding the parser's work.
	Tokens int
	// Selections caps the fields, fragment spreads and inline fragments written in the
	// document, bounding the validator's work (gqlparser compares the fields of one
	// response name pairwise: quadratic in them).
	Selections int
	// Repeats caps how often one response name is written in one selection set: the
	// validator's worst case, and nothing a client needs.
	Repeats int
	// Aliases caps the number of aliased fields, which repeat work under new names.
	Aliases int
	// Directives caps the directives written in the document.
	Directives int
}

// DefaultLimits admit the largest legitimate queries (a full 1000-message page with
// every field of a message and its subscriber and template selected, about 190
// selections and 450 tokens; GraphiQL's introspection query, 150 tokens and 13 levels
// deep) with room to spare, and refuse anything that nests, repeats or spreads far beyond
// them. The schema itself nests at most 8 deep; 15 leaves room for introspection's seven
// levels of ofType while bounding its recursion. graphql-armor's defaults, for comparison
// (docs/reliability.md): 1,000 tokens, 15 aliases, 50 directives, depth 6, cost 5,000.
var DefaultLimits = Limits{Complexity: 200_000, Depth: 15, QueryBytes: 32 << 10, Tokens: 2_000, Selections: 1_000,
	Repeats: 10, Aliases: 30, Directives: 50}

// QueryLimits is the gqlgen extension that applies Limits: the text's before it is
// parsed, the operation's once it is, and refuses introspection unless Introspection.
// Complexity is left to gqlgen's complexity limit, which costs fields with the schema's
// own functions.
type QueryLimits struct {
	Limits
	// Introspection admits __schema and __type; off, they are refused with
	// INTROSPECTION_DISABLED.
	Introspection bool
	// Parsed is the handler's cache of parsed documents, or nil. A text it holds passed
	// the text's limits before it was parsed and kept, so it is not scanned again: the
	// scan was the largest allocation of a request repeating a known document (6 KB of
	// a mark's 52).
	Parsed graphql.Cache[*ast.QueryDocument]
}

var (
	_ graphql.OperationParameterMutator = QueryLimits{}
	_ graphql.OperationContextMutator   = QueryLimits{}
)

// ExtensionName names the extension in gqlgen's stats.
func (QueryLimits) ExtensionName() string { return "QueryLimits" }

// Validate accepts every schema.
func (QueryLimits) Validate(graphql.ExecutableSchema) error { return nil }

// MutateOperationParameters refuses query text over the limits before it is parsed,
// validated or registered as a persisted query.
func (l QueryLimits) MutateOperationParameters(ctx context.Context, p *graphql.RawParams) *gqlerror.Error {
	if l.QueryBytes > 0 && len(p.Query) > l.QueryBytes {
		return limitError("QUERY_TOO_LARGE", fmt.Sprintf("query is %d bytes, more than the limit of %d", len(p.Query), l.QueryBytes))
	}
	if p.Query == "" {
		return nil
	}
	if l.Parsed != nil {
		if _, ok := l.Parsed.Get(ctx, p.Query); ok {
			return nil
		}
	}
	return l.scan(p.Query)
}

// MutateOperationContext refuses operations nested deeper than the limit, and
// introspection when it is off.
func (l QueryLimits) MutateOperationContext(_ context.Context, op *graphql.OperationContext) *gqlerror.Error {
	if op.Operation == nil {
		return nil
	}
	if !l.Introspection && introspects(op.Operation.SelectionSet, op.Doc.Fragments, map[string]bool{}) {
		return limitError("INTROSPECTION_DISABLED", "introspection is disabled on this server")
	}
	sh := shape{fragments: op.Doc.Fragments}
	sh.walk(op.Operation.SelectionSet, 0)
	switch {
	case sh.visits > maxVisits:
		return limitError("QUERY_TOO_COMPLEX", fmt.Sprintf("query expands to more than %d selections", maxVisits))
	case l.Depth > 0 && sh.depth > l.Depth:
		return limitError("DEPTH_LIMIT_EXCEEDED", fmt.Sprintf("query is nested deeper than the limit of %d", l.Depth))
	case l.Aliases > 0 && sh.aliases > l.Aliases:
		return limitError("ALIAS_LIMIT_EXCEEDED", fmt.Sprintf("query uses more than %d aliases", l.Aliases))
	}
	return nil
}

// scan counts, in one pass of the lexer, what the limits bound in query's text, and
// refuses it at the first limit passed. A document the lexer cannot read is left to the
// parser, which says why.
func (l Limits) scan(query string) *gqlerror.Error {
	lx := lexer.New(&ast.Source{Input: query})
	s := textScan{limits: l}
	for {
		tok, err := lx.ReadToken()
		if err != nil || tok.Kind == lexer.EOF {
			break
		}
		if tok.Kind == lexer.Comment {
			continue
		}
		if e := s.token(tok); e != nil {
			return e
		}
	}
	if s.pending != nil {
		return s.countName(s.pending.Value)
	}
	return nil
}

// textScan is what scan has counted so far of a document's text.
type textScan struct {
	limits                                  Limits
	tokens, selections, aliases, directives int
	// sets holds, for each open pair of braces, whether it is a selection set (not an
	// object value) and the response names written in it so far.
	sets []braceSet
	// parens counts open parentheses and brackets: inside them braces are values.
	parens int
	// pending is a name in a selection set not yet classified: a field, or an alias when
	// a colon follows.
	pending        *lexer.Token
	prev, previous lexer.Type // the two tokens before this one
	prevValue      string
}

// token counts one token, refusing the document when it passes a limit.
func (s *textScan) token(tok lexer.Token) *gqlerror.Error {
	if s.tokens++; s.limits.Tokens > 0 && s.tokens > s.limits.Tokens {
		return limitError("TOKEN_LIMIT_EXCEEDED", fmt.Sprintf("query has more than %d tokens", s.limits.Tokens))
	}
	inSelection := len(s.sets) > 0 && s.sets[len(s.sets)-1].selection && s.parens == 0
	if s.pending != nil {
		name := s.pending.Value
		if tok.Kind == lexer.Colon {
			s.aliases++
			if s.limits.Aliases > 0 && s.aliases > s.limits.Aliases {
				return limitError("ALIAS_LIMIT_EXCEEDED", fmt.Sprintf("query uses more than %d aliases", s.limits.Aliases))
			}
		}
		s.pending = nil
		if e := s.countName(name); e != nil {
			return e
		}
	}
	switch tok.Kind {
	case lexer.At:
		if s.directives++; s.limits.Directives > 0 && s.directives > s.limits.Directives {
			return limitError("DIRECTIVE_LIMIT_EXCEEDED", fmt.Sprintf("query uses more than %d directives", s.limits.Directives))
		}
	case lexer.ParenL, lexer.BracketL:
		s.parens++
	case lexer.ParenR, lexer.BracketR:
		s.parens = max(s.parens-1, 0)
	case lexer.BraceL:
		selection := s.parens == 0 && (len(s.sets) == 0 || s.sets[len(s.sets)-1].selection)
		s.sets = append(s.sets, braceSet{selection: selection})
		if depth := selectionDepth(s.sets); s.limits.Depth > 0 && depth > s.limits.Depth {
			return limitError("DEPTH_LIMIT_EXCEEDED", fmt.Sprintf("query is nested deeper than the limit of %d", s.limits.Depth))
		}
	case lexer.BraceR:
		if len(s.sets) > 0 {
			s.sets = s.sets[:len(s.sets)-1]
		}
	case lexer.Spread:
		if inSelection {
			if s.selections++; s.limits.Selections > 0 && s.selections > s.limits.Selections {
				return tooManySelections(s.limits.Selections)
			}
		}
	case lexer.Name:
		// A name in a selection set is a field or its alias, unless it names a fragment
		// (after ...), a type condition (after ... on), a directive (after @) or the field
		// an alias stands for (after the alias's colon).
		fragmentName := s.prev == lexer.Spread
		typeCondition := s.prev == lexer.Name && s.prevValue == "on" && s.previous == lexer.Spread
		if inSelection && !fragmentName && !typeCondition && s.prev != lexer.At && s.prev != lexer.Colon {
			t := tok
			s.pending = &t
		}
	}
	s.previous, s.prev, s.prevValue = s.prev, tok.Kind, tok.Value
	return nil
}

// braceSet is one open pair of braces of scan.
type braceSet struct {
	selection bool
	names     map[string]int
}

// countName counts a field written in the innermost selection set under its response
// name: its alias when it has one (the field's own name after the colon is not counted
// again).
func (s *textScan) countName(name string) *gqlerror.Error {
	if len(s.sets) == 0 {
		return nil
	}
	if s.selections++; s.limits.Selections > 0 && s.selections > s.limits.Selections {
		return tooManySelections(s.limits.Selections)
	}
	set := &s.sets[len(s.sets)-1]
	if set.names == nil {
		set.names = map[string]int{}
	}
	set.names[name]++
	if s.limits.Repeats > 0 && set.names[name] > s.limits.Repeats {
		return limitError("QUERY_TOO_COMPLEX", fmt.Sprintf("query selects %q more than %d times in one selection set", clip(name, 64), s.limits.Repeats))
	}
	return nil
}

func tooManySelections(limit int) *gqlerror.Error {
	return limitError("QUERY_TOO_COMPLEX", fmt.Sprintf("query writes more than %d selections", limit))
}

// selectionDepth is how many of the open braces are selection sets.
func selectionDepth(sets []braceSet) int {
	n := 0
	for _, s := range sets {
		if s.selection {
			n++
		}
	}
	return n
}

// shape is what QueryLimits measures of an operation: how deep its selections nest and
// how many aliases it uses, with fragments expanded where they are spread.
type shape struct {
	fragments ast.FragmentDefinitionList
	depth     int
	aliases   int
	// visits bounds the walk: fragments spread inside fragments can expand a small
	// document into a huge tree, and such a document is refused, not walked.
	visits int
}

// maxVisits is the most selections the walk expands before refusing the operation.
const maxVisits = 20_000

func (sh *shape) walk(set ast.SelectionSet, level int) {
	for _, sel := range set {
		if sh.visits++; sh.visits > maxVisits {
			return
		}
		switch s := sel.(type) {
		case *ast.Field:
			sh.depth = max(sh.depth, level+1)
			if s.Alias != "" && s.Alias != s.Name {
				sh.aliases++
			}
			sh.walk(s.SelectionSet, level+1)
		case *ast.InlineFragment:
			sh.walk(s.SelectionSet, level)
		case *ast.FragmentSpread:
			if f := sh.fragments.ForName(s.Name); f != nil {
				sh.walk(f.SelectionSet, level)
			}
		}
	}
}

// introspects reports whether the operation asks for __schema or __type at its root,
// directly or through fragments (each fragment followed once).
func introspects(set ast.SelectionSet, fragments ast.FragmentDefinitionList, seen map[string]bool) bool {
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			if s.Name == "__schema" || s.Name == "__type" {
				return true
			}
		case *ast.InlineFragment:
			if introspects(s.SelectionSet, fragments, seen) {
				return true
			}
		case *ast.FragmentSpread:
			if seen[s.Name] {
				continue
			}
			seen[s.Name] = true
			if f := fragments.ForName(s.Name); f != nil && introspects(f.SelectionSet, fragments, seen) {
				return true
			}
		}
	}
	return false
}

func limitError(code, message string) *gqlerror.Error {
	return &gqlerror.Error{Message: message, Extensions: map[string]any{"code": code}}
}

// clip cuts s to at most n bytes, on a character boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
