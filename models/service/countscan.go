package service

import (
	"context"
	"sync"
	"time"

	"messages/models"
)

// A count that reads messages, not only counters (store.CountReadsRows: workflows or
// creation ranges across subscribers, transaction ids, a creation range covering a month
// in part) is one statement however many filters, but one that can hold a connection
// for a second on an environment with 100,000 messages. An environment may run MaxCountScans of
// them at once on an instance; the others wait up to countScanWait for a turn and are
// then refused with 503 and Retry-After. So one tenant's burst of counts holds at most
// MaxCountScans of the pool's connections, and the other tenants' requests keep theirs.

// MaxCountScans bounds the row-scanning counts one environment runs at once on an
// instance.
const MaxCountScans = 2

// countScanWait is how long a count waits for its environment's turn.
const countScanWait = 2 * time.Second

// Identical counts that wait for a turn together share it: a request that finds a count
// of the same subscriber, channel and filters waiting for its turn, not yet started,
// takes that count's answer instead of a turn of its own. The count starts after every
// request that joined it arrived, so each answer includes every change committed before
// its request (a client that marks and then counts sees its mark), and a burst of the
// same request costs a few scans, not one each.

// countScans are the turns taken, by environment, and the counts waiting for one, by
// what they count; an environment with no count waiting or running has no entry.
type countScans struct {
	mu      sync.Mutex
	slots   map[string]*scanSlots
	waiting map[string]*countFlight
}

// countFlight is one count and the requests that share its answer.
type countFlight struct {
	done   chan struct{} // closed once counts and err are set
	counts []int
	err    error
	joined int // requests sharing it besides the first, for tests
}

// count answers key's count: the answer of the same count waiting for its turn, if there
// is one, or count run in a turn of environmentID's.
func (c *countScans) count(ctx context.Context, environmentID, key string, count func(context.Context) ([]int, error)) ([]int, error) {
	c.mu.Lock()
	if f := c.waiting[key]; f != nil {
		f.joined++
		c.mu.Unlock()
		select {
		case <-f.done:
			return f.counts, f.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if c.waiting == nil {
		c.waiting = map[string]*countFlight{}
	}
	f := &countFlight{done: make(chan struct{})}
	c.waiting[key] = f
	c.mu.Unlock()
	release, err := c.take(ctx, environmentID)
	c.mu.Lock()
	delete(c.waiting, key) // started: a request from now on counts again
	c.mu.Unlock()
	defer close(f.done)
	if err != nil {
		f.err = err
		return nil, err
	}
	defer release()
	// The requests that joined wait on this one's statement: its client going away does
	// not end it, its deadline does.
	run := context.WithoutCancel(ctx)
	if deadline, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		run, cancel = context.WithDeadline(run, deadline)
		defer cancel()
	}
	f.counts, f.err = count(run)
	return f.counts, f.err
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
