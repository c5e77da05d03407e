package changefeed

import (
	"context"
	"sync"
	"time"

	"messages/models"
)

// recentKeys is how many delivered changes a subscription remembers for its cursors:
// those within the lookback window before an event, so a client resuming from that
// event's cursor gets the late commits it missed without the changes it already has.
const recentKeys = 16

// streamBuffer bounds the events queued in a subscription's channel; Options.Buffer
// bounds those waiting behind it. A SubscribeReady client, called as soon as an event is
// queued, takes it at once: its channel holds readyStreamBuffer, which keeps an idle
// subscription's channel at 64 bytes rather than 512 (a burst past it waits in the
// backlog, as for any subscription).
const (
	streamBuffer      = 64
	readyStreamBuffer = 8
)

// catchUpPage is how many changes one catch-up query reads.
const catchUpPage = 200

// Event is what a subscription delivers: a change, or, last of all, the reason the
// subscription was closed.
type Event struct {
	Change *models.Change
	// Resume is where a client that saw this event resumes from.
	Resume Resume
	// Err, when set, is the reason the subscription ends; Change is nil.
	Err error

	sub *Subscription
}

// Filter is what the event's subscription matches (what its cursor is bound to).
func (e *Event) Filter() models.ChangeFilter { return e.sub.filter }

// Resume is the position a subscription continues after, and the changes it delivered
// within the lookback window before it.
type Resume struct {
	Position models.Position
	// Recent are the keys of the changes delivered in the lookback window before
	// Position (Position's own included).
	Recent []models.ChangeKey
	// Complete says Recent holds every change delivered in that window; when it does not,
	// resumption skips everything at or before Position.
	Complete bool
	// Floor is where the stream began: nothing at or before it was ever the client's
	// to miss, so resumption does not look back past it.
	Floor models.Position
}

// Subscription is one client's stream of events. Read Events until it is closed; call
// Close when the client goes away.
//
// While the client keeps up, the feed hands each change straight to the channel and the
// subscription costs no goroutine. When the channel is full, or the stream resumes from
// a cursor, a pump goroutine becomes its only sender until it has caught up: it reads
// missed changes from the database, then the changes queued meanwhile (at most
// Options.Buffer; beyond that it drops them and reads them from the database instead),
// and it closes the stream with ErrSlowConsumer when the client has read nothing for
// Options.SlowTimeout.
type Subscription struct {
	feed   *Feed
	filter models.ChangeFilter
	ctx    context.Context
	events chan *Event
	done   chan struct{} // closed by Close
	once   sync.Once
	// ready, when set, is called after each event is queued (SubscribeReady).
	ready func()

	mu      sync.Mutex
	gone    bool  // the client closed the subscription
	endErr  error // the stream is to end with this; the pump delivers it
	pumping bool  // a pump goroutine is the sender
	backlog []*models.Change
	refill  bool // the backlog overflowed: the pump reads from the database instead
	// What the client was sent: its resume point and the recent changes behind it.
	last      Resume
	recent    []models.ChangeKey
	evictedAt time.Time       // newest stamp pushed out of recent
	floor     models.Position // where the stream began (Resume.Floor)
	// caughtUp is the newest position the pump read from the database per message:
	// the feed reaches those changes later and must not deliver them again. Forgotten
	// once the feed is past caughtUpTo.
	caughtUp   map[string]models.Position
	caughtUpTo time.Time
}

// Subscribe opens a subscription to the changes matching filter. With from, it first
// delivers what changed after from (what a disconnected client missed), then continues
// live; without, it starts with the changes committed from now on. ctx is the
// subscription's: its database reads stop with it. Close ends the subscription.
func (f *Feed) Subscribe(ctx context.Context, filter models.ChangeFilter, from *Resume) *Subscription {
	return f.SubscribeReady(ctx, filter, from, nil)
}

// SubscribeReady is Subscribe for a client that parks no goroutine on Events: ready,
// when not nil, is called each time an event has been queued (the last one included,
// after the stream is closed), and the client then takes what is queued without
// waiting. ready is called with the feed's locks held: it must not block, and it must
// not call back into the feed or the subscription; starting a goroutine is what it is
// for.
func (f *Feed) SubscribeReady(ctx context.Context, filter models.ChangeFilter, from *Resume, ready func()) *Subscription {
	size := streamBuffer
	if ready != nil {
		size = readyStreamBuffer
	}
	s := &Subscription{feed: f, filter: filter, ctx: ctx, ready: ready,
		events: make(chan *Event, min(f.o.Buffer, size)), done: make(chan struct{})}
	if from != nil {
		s.floor = from.replayAfter(f.o.Lookback)
		s.last = *from
		s.pumping = true
	}
	f.add(s)
	if from != nil {
		go s.pump(from)
	}
	return s
}

// Events is the subscription's stream; it is closed after the last event.
func (s *Subscription) Events() <-chan *Event { return s.events }

// Ended reports whether the feed queues nothing more on the stream than its last event
// and its close: the stream was ended, or the client closed the subscription (which
// leaves the channel open). A SubscribeReady client with nothing queued reads once more
// when it has ended, to take the end.
func (s *Subscription) Ended() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gone
}

// Close ends the subscription; events not yet read are dropped.
func (s *Subscription) Close() {
	s.feed.remove(s)
	s.once.Do(func() { close(s.done) })
	s.mu.Lock()
	s.gone = true
	s.backlog = nil
	s.mu.Unlock()
}

// offer hands a live change to the subscription, called by the feed with its lock held.
// It never blocks.
func (s *Subscription) offer(c *models.Change) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gone || s.endErr != nil {
		return
	}
	if s.caughtUp != nil && !s.pumping {
		if p, ok := s.caughtUp[c.Position.ID]; ok && !c.Position.After(p) {
			return
		}
		if c.Position.At.After(s.caughtUpTo) {
			s.caughtUp = nil
		}
	}
	switch {
	case s.pumping && s.refill:
		// The pump will read this change from the database.
	case s.pumping && len(s.backlog) >= s.feed.o.Buffer:
		s.refill, s.backlog = true, nil
		s.feed.stats.Refills.Add(1)
	case s.pumping:
		s.backlog = append(s.backlog, c)
	case len(s.events) < cap(s.events):
		s.events <- s.event(c)
		s.notify()
	default:
		s.pumping = true
		s.backlog = append(s.backlog, c)
		go s.pump(nil)
	}
}

// terminate ends the stream with err, through the pump (which is then the only sender).
func (s *Subscription) terminate(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gone || s.endErr != nil {
		return
	}
	s.endErr = err
	if !s.pumping {
		s.pumping = true
		go s.pump(nil)
	}
}

// event wraps c with the resume point after it, and remembers c as delivered; s.mu is
// held.
func (s *Subscription) event(c *models.Change) *Event {
	s.feed.stats.Delivered.Add(1)
	k := c.Position.Key()
	if len(s.recent) == recentKeys {
		s.evictedAt = laterOf(s.evictedAt, s.recent[0].At)
		s.recent = s.recent[1:]
	}
	s.recent = append(s.recent, k)
	window := c.Position.At.Add(-s.feed.o.Lookback)
	var keep []models.ChangeKey
	for _, r := range s.recent {
		if !r.At.Before(window) {
			keep = append(keep, r)
		}
	}
	s.last = Resume{Position: c.Position, Recent: keep, Complete: s.evictedAt.Before(window), Floor: s.floor}
	return &Event{Change: c, sub: s, Resume: s.last}
}

func laterOf(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// pump is the subscription's sender while it is behind: it replays from (a cursor)
// when given, then drains the backlog, re-reading from the database what an overflow
// dropped, and hands the stream back to the feed once it has caught up; or it ends the
// stream.
func (s *Subscription) pump(from *Resume) {
	// The newest position delivered per message: from an earlier catch-up too, while the
	// feed may still read those changes again (a second overflow soon after the first).
	latest := map[string]models.Position{}
	s.mu.Lock()
	for id, p := range s.caughtUp {
		latest[id] = p
	}
	s.mu.Unlock()
	if from != nil && !s.replay(*from, latest) {
		return
	}
	for {
		s.mu.Lock()
		switch {
		case s.gone:
			s.mu.Unlock()
			return
		case s.endErr != nil:
			err := s.endErr
			s.backlog = nil
			s.mu.Unlock()
			s.final(err)
			return
		case s.refill:
			s.refill = false
			last := s.last
			s.mu.Unlock()
			if !s.replay(last, latest) {
				return
			}
			continue
		case len(s.backlog) == 0:
			s.pumping = false
			if len(latest) > 0 {
				s.caughtUp = latest
				for _, p := range latest {
					s.caughtUpTo = laterOf(s.caughtUpTo, p.At)
				}
				// The feed may read the same changes up to a lookback window later.
				s.caughtUpTo = s.caughtUpTo.Add(s.feed.o.Lookback)
			}
			s.mu.Unlock()
			return
		}
		c := s.backlog[0]
		s.backlog = s.backlog[1:]
		s.mu.Unlock()
		if !s.send(c, latest) {
			return
		}
	}
}

// replay reads the changes after from, page by page, and sends those the client has
// not had. It returns false when the stream is over.
func (s *Subscription) replay(from Resume, latest map[string]models.Position) bool {
	had := map[models.ChangeKey]bool{}
	for _, k := range from.Recent {
		had[k] = true
	}
	after := from.replayAfter(s.feed.o.Lookback)
	start := after.At
	for {
		page, err := s.feed.store.MessageChanges(s.ctx, s.filter, start, after, catchUpPage)
		if err != nil {
			if s.ctx.Err() == nil {
				s.final(err)
			}
			return false
		}
		for _, c := range page {
			after = c.Position
			atOrBefore := !c.Position.After(from.Position)
			if atOrBefore && (had[c.Position.Key()] || !from.Complete) {
				continue
			}
			if !s.send(c, latest) {
				return false
			}
		}
		if len(page) < catchUpPage {
			return true
		}
	}
}

// send delivers c unless a newer state of its message went already; it waits for the
// client up to SlowTimeout, then ends the stream with ErrSlowConsumer. It returns false
// when the stream is over.
func (s *Subscription) send(c *models.Change, latest map[string]models.Position) bool {
	if p, ok := latest[c.Position.ID]; ok && !c.Position.After(p) {
		return true
	}
	latest[c.Position.ID] = c.Position
	s.mu.Lock()
	if s.gone {
		s.mu.Unlock()
		return false
	}
	e := s.event(c)
	s.mu.Unlock()
	select {
	case s.events <- e:
		s.notify()
		return true
	default:
	}
	t := time.NewTimer(s.feed.o.SlowTimeout)
	defer t.Stop()
	select {
	case s.events <- e:
		s.notify()
		return true
	case <-s.done:
		return false
	case <-t.C:
		s.feed.stats.SlowConsumers.Add(1)
		s.feed.remove(s)
		s.final(ErrSlowConsumer)
		return false
	}
}

// final delivers err as the stream's last event and closes it; only the pump calls it.
// A client that has read nothing for a while finds the channel full: the oldest queued
// event makes way (the client never saw its cursor, so resuming delivers it again).
func (s *Subscription) final(err error) {
	s.feed.remove(s)
	s.mu.Lock()
	s.gone = true
	s.mu.Unlock()
	ev := &Event{Err: err, sub: s}
	select {
	case s.events <- ev:
	default:
		select {
		case <-s.events:
		default:
		}
		s.events <- ev
	}
	close(s.events)
	s.notify()
}

// notify tells a SubscribeReady client that events are queued.
func (s *Subscription) notify() {
	if s.ready != nil {
		s.ready()
	}
}

// replayAfter is the position resuming from r reads after: the lookback window before
// its position, but not before the stream's floor; its position itself when Recent is
// not complete.
func (r Resume) replayAfter(lookback time.Duration) models.Position {
	if !r.Complete {
		return r.Position
	}
	after := models.Position{At: r.Position.At.Add(-lookback)}
	if r.Floor.After(after) {
		after = r.Floor
	}
	if after.After(r.Position) {
		after = r.Position
	}
	return after
}

// Filter is what the subscription matches.
func (s *Subscription) Filter() models.ChangeFilter { return s.filter }
