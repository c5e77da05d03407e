package extension

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

const (
	// astBytesPerByte is what a document's syntax tree holds per byte of its text,
	// measured (cache_test.go): up to 32 for the densest documents within the limits.
	astBytesPerByte = 48
	// entryBytes is an entry's own cost besides its contents.
	entryBytes = 256
)

// ByteLRU keeps the most recently used entries within a total cost in bytes; adding past
// it drops the least recently used. It is safe for concurrent use.
type ByteLRU[K comparable, V any] struct {
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

// NewByteLRU returns a cache holding at most limit bytes, each entry charged cost.
func NewByteLRU[K comparable, V any](limit int, cost func(K, V) int) *ByteLRU[K, V] {
	return &ByteLRU[K, V]{limit: limit, cost: cost, order: list.New(), items: map[K]*list.Element{}}
}

// Get returns the value kept under k, marking it the most recently used.
func (c *ByteLRU[K, V]) Get(k K) (V, bool) {
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

// Add keeps v under k, unless v alone costs more than the whole cache.
func (c *ByteLRU[K, V]) Add(k K, v V) {
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

// Bytes is the cost of what the cache holds.
func (c *ByteLRU[K, V]) Bytes() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.used
}

// Cache is a ByteLRU keyed by text, as gqlgen's query and persisted-query caches are.
type Cache[V any] struct{ lru *ByteLRU[string, V] }

var (
	_ graphql.Cache[*ast.QueryDocument] = Cache[*ast.QueryDocument]{}
	_ graphql.Cache[string]             = Cache[string]{}
)

// Get returns the value kept under key.
func (c Cache[V]) Get(_ context.Context, key string) (V, bool) { return c.lru.Get(key) }

// Add keeps value under key.
func (c Cache[V]) Add(_ context.Context, key string, value V) { c.lru.Add(key, value) }

// NewDocumentCache keeps parsed documents by their text, each charged its syntax tree,
// within limit bytes: gqlgen's query cache.
func NewDocumentCache(limit int) Cache[*ast.QueryDocument] {
	return Cache[*ast.QueryDocument]{NewByteLRU(limit, func(query string, _ *ast.QueryDocument) int {
		return astBytesPerByte * len(query)
	})}
}

// NewPersistedQueryCache keeps persisted queries' text by their hash, within limit
// bytes: the cache of gqlgen's automatic persisted queries.
func NewPersistedQueryCache(limit int) Cache[string] {
	return Cache[string]{NewByteLRU(limit, func(hash, query string) int { return len(hash) + len(query) })}
}

// OperationBytes is what an operation's syntax tree holds, estimated from the text of
// its document.
func OperationBytes(op *ast.OperationDefinition) int {
	if op.Position == nil || op.Position.Src == nil {
		return entryBytes
	}
	return astBytesPerByte * len(op.Position.Src.Input)
}
