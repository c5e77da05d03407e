package models

import (
	"context"
	"fmt"
	"sync/atomic"
)

// What one request or GraphQL operation may hold in memory is bounded in bytes, not in
// rows: a page of 1,000 messages is a few megabytes when its payloads are small and a
// gigabyte when another writer stored 900 KB in each. A Budget counts the bytes of the
// records a request reads (charged row by row as they are scanned, so a page over the
// budget stops at the row that crosses it) and of the response it writes (charged by the
// GraphQL executor field by field). A BudgetPool bounds the sum over every request in
// flight, so many requests each under their own budget cannot add up to more either.

// Budget defaults: a page of 1,000 messages with every field selected is about 5 MB of
// rows and response together; the pool leaves room for a dozen of those at once.
const (
	DefaultRequestBudget = 16 << 20
	DefaultBudgetPool    = 96 << 20
)

// budgetChunk is how much a Budget takes from its pool at a time, so the pool's shared
// counter is touched once per 64 KiB, not once per field.
const budgetChunk = 64 << 10

// BudgetPool is the bytes every request in flight may hold together.
type BudgetPool struct {
	limit int64
	used  atomic.Int64
	// refused counts the requests refused because the pool was spent, for metrics.
	refused atomic.Uint64
}

// NewBudgetPool returns a pool of limit bytes; 0 or less means unbounded.
func NewBudgetPool(limit int64) *BudgetPool { return &BudgetPool{limit: limit} }

// InUse is the bytes held by requests in flight, for metrics.
func (p *BudgetPool) InUse() int64 { return p.used.Load() }

// Refused counts the requests refused because the pool was spent, for metrics.
func (p *BudgetPool) Refused() uint64 { return p.refused.Load() }

// take reserves n bytes, or reports false when that would pass the limit.
func (p *BudgetPool) take(n int64) bool {
	if p.used.Add(n) > p.limit && p.limit > 0 {
		p.used.Add(-n)
		return false
	}
	return true
}

// Budget is the bytes one request or operation may hold. It is safe for concurrent use
// (gqlgen resolves fields concurrently). The zero of *Budget, nil, charges nothing.
type Budget struct {
	limit    int64
	pool     *BudgetPool
	used     atomic.Int64
	reserved atomic.Int64 // taken from the pool, at least used
	refused  atomic.Bool
}

// NewBudget returns a budget of limit bytes (0 or less: unbounded) drawn from pool (nil:
// none). Release returns what it took to the pool.
func (p *BudgetPool) NewBudget(limit int64) *Budget { return &Budget{limit: limit, pool: p} }

// Charge counts n more bytes. Past the budget it returns a coded error that says so
// (ETOOLARGE), and when the pool is spent one that asks the client to retry
// (EUNAVAILABLE); every later charge fails the same way, so a request stops at the row
// or field that crossed the line.
func (b *Budget) Charge(n int) error {
	if b == nil || n <= 0 {
		return nil
	}
	used := b.used.Add(int64(n))
	if b.limit > 0 && used > b.limit {
		return Errorf(ETOOLARGE, "the response is larger than this server's limit of %s per request: ask for fewer records (a smaller limit or first) or fewer fields", byteSize(b.limit))
	}
	if b.pool == nil {
		return nil
	}
	for {
		reserved := b.reserved.Load()
		if used <= reserved {
			return nil
		}
		if b.refused.Load() {
			return errPoolSpent
		}
		n := max(budgetChunk, used-reserved)
		if !b.pool.take(n) {
			if !b.refused.Swap(true) {
				b.pool.refused.Add(1)
			}
			return errPoolSpent
		}
		if b.reserved.CompareAndSwap(reserved, reserved+n) {
			return nil
		}
		b.pool.used.Add(-n) // another charge reserved meanwhile: look again
	}
}

// Release returns what the budget took to its pool. Call it once, when the request's
// response is written.
func (b *Budget) Release() {
	if b == nil || b.pool == nil {
		return
	}
	b.pool.used.Add(-b.reserved.Swap(0))
}

// Used is the bytes charged so far.
func (b *Budget) Used() int64 {
	if b == nil {
		return 0
	}
	return b.used.Load()
}

// errPoolSpent refuses a request while the others in flight hold the whole pool: the
// server is busy, not the request too large, so the client retries.
var errPoolSpent = Errorf(EUNAVAILABLE, "the server is answering too many large requests at once: retry shortly")

type budgetKey struct{}

// WithBudget returns ctx carrying b: the store charges the rows it reads in ctx to it.
func WithBudget(ctx context.Context, b *Budget) context.Context {
	return context.WithValue(ctx, budgetKey{}, b)
}

// BudgetFrom returns the budget of ctx, or nil (which charges nothing).
func BudgetFrom(ctx context.Context) *Budget {
	b, _ := ctx.Value(budgetKey{}).(*Budget)
	return b
}

// byteSize writes n in the largest binary unit that divides it.
func byteSize(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
