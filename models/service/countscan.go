package service

import (
	"context"
	"sync"
	"time"

	"messages/models"
)

// A count the counters cannot answer (workflows, creation ranges) scans the subscriber's
// rows: one statement however many filters, but one that can hold a connection for a
// second on a subscriber with 100,000 messages. An environment may run MaxCountScans of
// them at once on an instance; the others wait up to countScanWait for a turn and are
// then refused with 503 and Retry-After. So one tenant's burst of counts holds at most
// MaxCountScans of the pool's connections, and the other tenants' requests keep theirs.

// MaxCountScans bounds the row-scanning counts one environment runs at once on an
// instance.
const MaxCountScans = 2

// countScanWait is how long a count waits for its environment's turn.
const countScanWait = 2 * time.Second

// countScans are the turns taken, by environment; an environment with no count waiting or
// running has no entry.
type countScans struct {
	mu    sync.Mutex
	slots map[string]*scanSlots
}

type scanSlots struct {
	turns chan struct{}
	users int // counts running or waiting
}

// take waits for a turn of environmentID's; release gives it back.
func (c *countScans) take(ctx context.Context, environmentID string) (release func(), err error) {
	c.mu.Lock()
	if c.slots == nil {
		c.slots = map[string]*scanSlots{}
	}
	s := c.slots[environmentID]
	if s == nil {
		s = &scanSlots{turns: make(chan struct{}, MaxCountScans)}
		c.slots[environmentID] = s
	}
	s.users++
	c.mu.Unlock()
	leave := func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if s.users--; s.users == 0 {
			delete(c.slots, environmentID)
		}
	}
	release = func() { <-s.turns; leave() }
	select {
	case s.turns <- struct{}{}:
		return release, nil
	default:
	}
	t := time.NewTimer(countScanWait)
	defer t.Stop()
	select {
	case s.turns <- struct{}{}:
		return release, nil
	case <-t.C:
	case <-ctx.Done():
	}
	leave()
	return nil, models.Errorf(models.EUNAVAILABLE,
		"this environment is counting messages by workflow or creation time %d at a time, and this count waited %s for its turn: retry later",
		MaxCountScans, countScanWait)
}
