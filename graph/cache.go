package graph

import (
	"container/list"
	"context"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// The handler's caches (parsed documents, persisted queries, list plans) are bounded in
// bytes, not entries: a count bounds nothing when one 32 KiB document parses into
// 1.6 MB of syntax tree. Each entry is charged what it holds, estimated from its text.

// Cache sizes and the estimates they are charged by.
const (
	// documentCacheBytes bounds the parsed and validated documents kept: at 48 bytes
	// charged per byte of text, about 700 documents of a typical 500 bytes (an app sends
	// a few dozen distinct ones), or 70 of the densest the limits admit.
	documentCacheBytes = 16 << 20
	// persistedQueryCacheBytes bounds the persisted queries kept (their text).
	persistedQueryCacheBytes = 8 << 20
	// planCacheBytes bounds the list plans kept (listquery.go).
	planCacheBytes = 8 << 20
	// astBytesPerByte is what a document's syntax tree holds per byte of its text,
	// measured (graph/cache_test.go): up to 32 for the densest documents within the limits.
	astBytesPerByte = 48
	// entryBytes is an entry's own cost besides its contents.
	entryBytes = 256
)

// byteLRU keeps the most recently used entries within a total cost in bytes; adding past
// it drops the least recently used. It is safe for concurrent use.
type byteLRU[K comparable, V any] struct {
	limit int
	cost  func(K, V) int

	mu    sync.Mutex
	used  int
	order *list.List // front: most recently used
	items map[K]*list.Element
}

type lruEntry[K comparable, V any] struct {
	key   K
	value V
	cost  int
}

func newByteLRU[K comparable, V any](limit int, cost func(K, V) int) *byteLRU[K, V] {
	return &byteLRU[K, V]{limit: limit, cost: cost, order: list.New(), items: map[K]*list.Element{}}
}

func (c *byteLRU[K, V]) get(k K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[k]
	if !ok {
		var zero V
		return zero, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*lruEntry[K, V]).value, true
}

// add keeps v under k, unless v alone costs more than the whole cache.
func (c *byteLRU[K, V]) add(k K, v V) {
	cost := c.cost(k, v) + entryBytes
	if cost > c.limit {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[k]; ok {
		old := e.Value.(*lruEntry[K, V])
		c.used += cost - old.cost
		old.value, old.cost = v, cost
		c.order.MoveToFront(e)
	} else {
		c.items[k] = c.order.PushFront(&lruEntry[K, V]{key: k, value: v, cost: cost})
		c.used += cost
	}
	for c.used > c.limit {
		oldest := c.order.Back()
		e := oldest.Value.(*lruEntry[K, V])
		c.order.Remove(oldest)
		delete(c.items, e.key)
		c.used -= e.cost
	}
}

// bytes is the cost of what the cache holds.
func (c *byteLRU[K, V]) bytes() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.used
}

// gqlgenCache is a byteLRU keyed by text, as gqlgen's query and persisted-query caches
// are.
type gqlgenCache[V any] struct{ *byteLRU[string, V] }

var (
	_ graphql.Cache[*ast.QueryDocument] = gqlgenCache[*ast.QueryDocument]{}
	_ graphql.Cache[string]             = gqlgenCache[string]{}
)

func (c gqlgenCache[V]) Get(_ context.Context, key string) (V, bool) { return c.get(key) }

func (c gqlgenCache[V]) Add(_ context.Context, key string, value V) { c.add(key, value) }

// newDocumentCache keeps parsed documents by their text, each charged its syntax tree.
func newDocumentCache(limit int) gqlgenCache[*ast.QueryDocument] {
	return gqlgenCache[*ast.QueryDocument]{newByteLRU(limit, func(query string, _ *ast.QueryDocument) int {
		return astBytesPerByte * len(query)
	})}
}

// newPersistedQueryCache keeps persisted queries' text by their hash.
func newPersistedQueryCache(limit int) gqlgenCache[string] {
	return gqlgenCache[string]{newByteLRU(limit, func(hash, query string) int { return len(hash) + len(query) })}
}

// operationBytes is what an operation's syntax tree holds, estimated from the text of
// its document.
func operationBytes(op *ast.OperationDefinition) int {
	if op.Position == nil || op.Position.Src == nil {
		return entryBytes
	}
	return astBytesPerByte * len(op.Position.Src.Input)
}
