package service

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"messages/models"
	"messages/models/changefeed"
)

// Live counts are read once per change, whoever follows them. Every stream of one
// environment's counts of one subscriber (or all) and one channel (or all) shares a
// countWatch: one subscription to the change feed and one read of the counters after each
// batch of changes, handed to every follower as its newest value. A thousand GraphQL
// messageCounts subscriptions and inbox sockets of one subscriber cost what one does; a
// follower that reads slowly holds one value, never a queue, and is told the newest.
//
// A watch starts with its first follower and ends when its last one leaves: its
// goroutine and its feed subscription end with it.

// countReadTimeout bounds one read of the counts. It stays below the change feed's
// SlowTimeout (changefeed.DefaultSlowTimeout), so a watch waiting on a slow read is
// never closed as a slow consumer of its own subscription.
const countReadTimeout = 5 * time.Second

// countKey is what one watch counts.
type countKey struct {
	environmentID string
	// subscriberID is the external id; all counts the environment's messages.
	subscriberID string
	all          bool
	channel      models.ChannelType // "" for every channel
}

func (k countKey) filter() models.ChangeFilter {
	f := models.ChangeFilter{EnvironmentID: k.environmentID}
	if !k.all {
		id := k.subscriberID
		f.SubscriberID = &id
	}
	if k.channel != "" {
		ch := k.channel
		f.Channel = &ch
	}
	return f
}

// countWatches are the watches of one service, by key.
type countWatches struct {
	mu      sync.Mutex
	watches map[countKey]*countWatch
}

// countWatch follows one key's counts for its followers.
type countWatch struct {
	s      *Service
	key    countKey
	ctx    context.Context // ends when the last follower leaves
	cancel context.CancelFunc
	// sub is replaced by the goroutine taking changes, under mu; read by it without.
	sub *changefeed.Subscription
	// taking is set while a goroutine takes changes; kicked when a follower waits for
	// counts no read has given yet.
	taking, kicked atomic.Bool

	mu        sync.Mutex
	followers map[*CountFollow]struct{}
	// last is what the last read found, when known: a new follower starts from it.
	last  models.StateCounts
	known bool
	ended bool
}

// CountUpdate is what a follower is told: the counts, a failed read, or the end.
type CountUpdate struct {
	States models.StateCounts
	// Err is a read that failed; the watch goes on, and the next read is told whatever
	// it finds.
	Err error
	// End is why the watch ended (the server is shutting down): nothing follows it.
	End error
}

// CountFollow is one stream's share of a watch: the newest update it has not taken yet.
type CountFollow struct {
	w      *countWatch
	notify func()

	mu      sync.Mutex
	pending *CountUpdate
	// taken are the counts the stream took last, when it has (Next skips them).
	taken   models.StateCounts
	tookAny bool
	closed  bool
}

// FollowCounts follows the state counts of the caller's messages (one subscriber's, or
// the environment's for an API key with subscriberID nil) of a channel or all, shared
// with every other follower of the same counts. notify is called, without blocking and
// with the watch's locks held (it must not call back into the follow), each time an
// update waits for Next. It returns once the first counts are known (the first follower
// reads them; later ones start from the last read) or their read failed. Close ends the
// follow; so does ctx.
func (s *Service) FollowCounts(ctx context.Context, subscriberID *string, channel *models.ChannelType, notify func()) (*CountFollow, error) {
	caller, err := models.CallerFrom(ctx)
	if err != nil {
		return nil, err
	}
	if s.feed == nil {
		return nil, models.Errorf(models.EUNAVAILABLE, "live events are not served by this server")
	}
	if subscriberID, err = scopedSubscriber(caller, subscriberID); err != nil {
		return nil, err
	}
	if _, err := listFilter(channel, subscriberID, nil); err != nil {
		return nil, err
	}
	key := countKey{environmentID: caller.EnvironmentID, all: subscriberID == nil}
	if subscriberID != nil {
		key.subscriberID = *subscriberID
	}
	if channel != nil {
		key.channel = *channel
	}
	first := make(chan struct{}, 1)
	f := &CountFollow{notify: func() {
		select {
		case first <- struct{}{}:
		default:
		}
		if notify != nil {
			notify()
		}
	}}
	s.counts.join(s, key, f)
	stop := context.AfterFunc(ctx, f.Close)
	select {
	case <-first:
	case <-ctx.Done():
		stop()
		f.Close()
		return nil, ctx.Err()
	}
	f.mu.Lock()
	u := f.pending
	f.mu.Unlock()
	if u.Err != nil || u.End != nil {
		stop()
		f.Close()
		return nil, errors.Join(u.Err, u.End)
	}
	return f, nil
}

// join adds f to key's watch, starting the watch if there is none.
func (ws *countWatches) join(s *Service, key countKey, f *CountFollow) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if ws.watches == nil {
		ws.watches = map[countKey]*countWatch{}
	}
	w := ws.watches[key]
	if w == nil {
		w = s.startWatch(key)
		ws.watches[key] = w
	}
	f.w = w
	w.mu.Lock()
	defer w.mu.Unlock()
	w.followers[f] = struct{}{}
	if w.known {
		f.offer(CountUpdate{States: w.last})
		return
	}
	w.kick()
}

// leave removes f from its watch, ending the watch when f was its last follower.
func (ws *countWatches) leave(f *CountFollow) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	w := f.w
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.followers, f)
	if len(w.followers) == 0 && !w.ended {
		w.ended = true
		if ws.watches[w.key] == w {
			delete(ws.watches, w.key)
		}
		w.cancel()
		w.sub.Close()
	}
}

// watching is how many watches are running.
func (ws *countWatches) watching() int {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	return len(ws.watches)
}

// CountWatches is how many shared count watches are running: one per environment,
// subscriber and channel followed, however many streams follow it.
func (s *Service) CountWatches() int { return s.counts.watching() }

// startWatch subscribes to key's changes; the first read waits for a follower's kick.
// An idle watch holds no goroutine: the feed's ready signal starts one that reads the
// counts and ends (take).
func (s *Service) startWatch(key countKey) *countWatch {
	ctx, cancel := context.WithCancel(context.Background())
	w := &countWatch{s: s, key: key, ctx: ctx, cancel: cancel, followers: map[*CountFollow]struct{}{}}
	w.taking.Store(true) // until the subscription is set
	// Subscribed before the first read: a change committed after the read is delivered.
	w.sub = s.feed.SubscribeReady(ctx, key.filter(), nil, w.ready)
	w.taking.Store(false)
	if w.waiting() {
		w.ready()
	}
	return w
}

// ready starts a goroutine to take what waits unless one is taking it already. It never
// blocks (the feed calls it with its locks held).
func (w *countWatch) ready() {
	if w.taking.CompareAndSwap(false, true) {
		go w.take()
	}
}

// kick asks for a read of the counts, for a follower that has none yet.
func (w *countWatch) kick() {
	w.kicked.Store(true)
	w.ready()
}

// waiting reports whether changes or a kick wait for a read.
func (w *countWatch) waiting() bool {
	return len(w.sub.Events()) > 0 || w.kicked.Load()
}

// take reads the counts until nothing waits for a read, then ends.
func (w *countWatch) take() {
	for {
		if !w.pass() {
			return
		}
		w.taking.Store(false)
		// What came after the pass found nothing, whose ready saw taking still set, is
		// this goroutine's to take.
		if !w.waiting() || !w.taking.CompareAndSwap(false, true) {
			return
		}
	}
}

// pass takes the changes queued (one read covers them all) and reads the counts once.
// It reports false once the watch is over.
func (w *countWatch) pass() bool {
	read := w.kicked.Swap(false)
	for taken := false; !taken; {
		select {
		case e, ok := <-w.sub.Events():
			read = true
			switch {
			case ok && errors.Is(e.Err, changefeed.ErrShuttingDown):
				w.end(e.Err)
				return false
			case !ok || e.Err != nil:
				// Any other end (the watch fell behind, a catch-up read failed): subscribe
				// again, and read, so the followers miss nothing.
				if !w.resubscribe() {
					return false
				}
			}
		default:
			taken = true
		}
	}
	if read {
		w.read()
	}
	return w.ctx.Err() == nil
}

// resubscribe replaces the watch's subscription, unless the watch ended.
func (w *countWatch) resubscribe() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ended {
		return false
	}
	w.sub.Close()
	w.sub = w.s.feed.SubscribeReady(w.ctx, w.key.filter(), nil, w.ready)
	return true
}

// read reads the counts once and tells every follower.
func (w *countWatch) read() {
	// The feed offers a change to every subscription it matches under one lock: once the
	// lock is free, a follower's own stream of the same changes (an inbox socket's) has
	// the change this read follows queued, and can send it before these counts.
	_ = w.s.feed.Subscriptions()
	ctx, cancel := context.WithTimeout(w.ctx, countReadTimeout)
	defer cancel()
	var subscriberID *string
	if !w.key.all {
		subscriberID = &w.key.subscriberID
	}
	var channel *models.ChannelType
	if w.key.channel != "" {
		channel = &w.key.channel
	}
	counts, err := w.s.store.CountStates(ctx, w.key.environmentID, subscriberID, channel)
	if w.ctx.Err() != nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		w.known = false
		for f := range w.followers {
			f.offer(CountUpdate{Err: err})
		}
		return
	}
	if w.known && counts == w.last {
		return
	}
	w.last, w.known = counts, true
	for f := range w.followers {
		f.offer(CountUpdate{States: counts})
	}
}

// end tells every follower the watch ended with err.
func (w *countWatch) end(err error) {
	ws := &w.s.counts
	ws.mu.Lock()
	if ws.watches[w.key] == w {
		delete(ws.watches, w.key)
	}
	ws.mu.Unlock()
	w.mu.Lock()
	defer w.mu.Unlock()
	w.ended = true
	for f := range w.followers {
		f.offer(CountUpdate{End: err})
	}
	w.cancel()
	w.sub.Close()
}

// offer replaces what f has not taken yet with u (an end stays) and notifies it; the
// watch's lock is held.
func (f *CountFollow) offer(u CountUpdate) {
	f.mu.Lock()
	if f.closed || (f.pending != nil && f.pending.End != nil) {
		f.mu.Unlock()
		return
	}
	f.pending = &u
	f.mu.Unlock()
	f.notify()
}

// Next takes the update waiting for the stream, if any: ok is false when there is none,
// or when it holds the counts the stream took last (an unchanged count is not sent
// again). After a failed read, the next counts are new whatever they are.
func (f *CountFollow) Next() (u CountUpdate, ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.pending == nil {
		return CountUpdate{}, false
	}
	u = *f.pending
	if u.End == nil {
		f.pending = nil
	}
	switch {
	case u.End != nil || u.Err != nil:
		f.tookAny = false
		return u, true
	case f.tookAny && u.States == f.taken:
		return u, false
	}
	f.taken, f.tookAny = u.States, true
	return u, true
}

// Waiting reports whether an update waits for Next.
func (f *CountFollow) Waiting() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.pending != nil
}

// Close ends the follow; the watch ends with its last follower.
func (f *CountFollow) Close() {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return
	}
	f.closed = true
	f.mu.Unlock()
	f.w.s.counts.leave(f)
}
