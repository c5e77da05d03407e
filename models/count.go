package models

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
	"gorm.io/gorm"
)

// DefaultCountTTL is how long a list's totalCount may be reused. Counting a million
// messages of one environment takes around a second on a small MySQL server, on every
// list call; reusing the count for a few seconds makes that once per TTL per filter.
const DefaultCountTTL = 5 * time.Second

// maxCountEntries bounds the cache; past it, the cache starts over.
const maxCountEntries = 10_000

// countQueryTimeout bounds one shared count query, which runs detached from the request
// that happened to start it so that request's cancellation does not fail the others.
const countQueryTimeout = 30 * time.Second

// countCache holds recent totalCounts per environment and filter. Concurrent requests for
// the same count share one query (single flight).
//
// Consistency: a count is exact when computed and at most TTL old when reused, so it may
// miss messages created in the last TTL; pages themselves are always read fresh, and a
// page that reaches the end of the list derives its count exactly without a query.
type countCache struct {
	mu      sync.Mutex
	entries map[string]countEntry
	group   singleflight.Group
}

type countEntry struct {
	n  int64
	at time.Time
}

// countKey identifies a filter within an environment.
func countKey(environmentID string, f ListFilter) string {
	var b strings.Builder
	b.WriteString(environmentID)
	b.WriteByte(0)
	if f.Channel != nil {
		b.WriteString(string(*f.Channel))
	}
	b.WriteByte(0)
	if f.SubscriberID != nil {
		b.WriteString("s")
		b.WriteString(*f.SubscriberID)
	}
	ids := slices.Clone(f.TransactionIDs)
	slices.Sort(ids)
	for _, id := range slices.Compact(ids) {
		b.WriteByte(0)
		b.WriteString(id)
	}
	return b.String()
}

// countMessages returns how many messages q matches, reusing a count of the same
// environment and filter younger than s.CountTTL (0: always counts).
func (s *Store) countMessages(ctx context.Context, environmentID string, f ListFilter) (int, error) {
	q, err := s.filtered(ctx, environmentID, f)
	if errors.Is(err, errNoMatch) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	if s.CountTTL <= 0 {
		var n int64
		err := q.Session(&gorm.Session{}).Count(&n).Error
		return int(n), err
	}
	key := countKey(environmentID, f)
	s.counts.mu.Lock()
	e, ok := s.counts.entries[key]
	s.counts.mu.Unlock()
	if ok && s.Now().Sub(e.at) < s.CountTTL {
		return int(e.n), nil
	}
	ch := s.counts.group.DoChan(key, func() (any, error) {
		qctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), countQueryTimeout)
		defer cancel()
		var n int64
		if err := q.Session(&gorm.Session{}).WithContext(qctx).Count(&n).Error; err != nil {
			return nil, err
		}
		s.counts.put(key, countEntry{n: n, at: s.Now()})
		return n, nil
	})
	select {
	case res := <-ch:
		if res.Err != nil {
			return 0, res.Err
		}
		return int(res.Val.(int64)), nil
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

func (c *countCache) put(key string, e countEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil || len(c.entries) >= maxCountEntries {
		c.entries = make(map[string]countEntry)
	}
	c.entries[key] = e
}
