package changefeed

import (
	"context"
	"errors"
	"sync"
	"time"

	"messages/models"
)

// recentKeys is how many delivered changes a subscription remembers for its cursors:
// those within the lookback window before an event, so a client resuming from that
// event's cursor gets the late commits it missed without the changes it already has.
const recentKeys = 16

// pendingFactor bounds the live events a resuming subscription holds while it catches
// up: pendingFactor times the buffer, then it is closed as a slow consumer.
const pendingFactor = 8

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
type Subscription struct {
	feed   *Feed
	filter models.ChangeFilter
	events chan *Event

	mu         sync.Mutex
	closed     bool
	catchingUp bool
	pending    []*models.Change
	overflow   bool
	recent     []models.ChangeKey
	evictedAt  time.Time       // newest stamp pushed out of recent
	floor      models.Position // where the stream began (Resume.Floor)
	// caughtUp is the newest position the catch-up delivered per message: the feed
	// reaches those changes after the catch-up read them from the database, and must
	// not deliver them again. Forgotten once the feed is past them (caughtUpTo).
	caughtUp   map[string]models.Position
	caughtUpTo time.Time
}

// ErrCursorExpired refuses to resume from a position older than the feed replays.
var ErrCursorExpired = errors.New("cursor is older than the retention window")

// Subscribe opens a subscription to the changes matching filter. With from, it first
// delivers what changed after from (what a disconnected client missed), then continues
// live; without, it starts with the changes committed from now on. ctx bounds the
// catch-up; Close ends the subscription.
func (f *Feed) Subscribe(ctx context.Context, filter models.ChangeFilter, from *Resume) *Subscription {
	s := &Subscription{feed: f, filter: filter, events: make(chan *Event, f.o.Buffer+1), catchingUp: from != nil}
	if from != nil {
		s.floor = from.replayAfter(f.o.Lookback)
	}
	f.add(s)
	if from != nil {
		go s.catchUp(ctx, *from)
	}
	return s
}

// Events is the subscription's stream; it is closed after the last event.
func (s *Subscription) Events() <-chan *Event { return s.events }

// Close ends the subscription; events not yet read are dropped.
func (s *Subscription) Close() {
	s.feed.remove(s)
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
}

// offer hands a live change to the subscription, called by the feed with its lock held.
// It never blocks: a subscription whose buffer is full is closed with ErrSlowConsumer.
func (s *Subscription) offer(c *models.Change) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.caughtUp != nil && !s.catchingUp {
		if p, ok := s.caughtUp[c.Position.ID]; ok && !c.Position.After(p) {
			return
		}
		if c.Position.At.After(s.caughtUpTo) {
			s.caughtUp = nil
		}
	}
	switch {
	case s.closed:
	case s.catchingUp:
		if len(s.pending) >= pendingFactor*s.feed.o.Buffer {
			s.overflow = true
			return
		}
		s.pending = append(s.pending, c)
	case len(s.events) >= s.feed.o.Buffer:
		s.end(ErrSlowConsumer)
		s.feed.stats.SlowConsumers.Add(1)
		// The feed holds its lock: remove directly, not through remove.
		if set := s.feed.subs[s.filter.EnvironmentID]; set != nil {
			delete(set, s)
		}
	default:
		s.events <- s.event(c)
	}
}

// end delivers err as the last event and closes the stream; s.mu is held. The channel
// keeps one slot free for it.
func (s *Subscription) end(err error) {
	s.closed = true
	s.events <- &Event{Err: err, sub: s}
	close(s.events)
}

// event wraps c with the resume point after it, and remembers c as delivered.
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
	return &Event{Change: c, sub: s, Resume: Resume{
		Position: c.Position,
		Recent:   keep,
		Complete: s.evictedAt.Before(window),
		Floor:    s.floor,
	}}
}

func laterOf(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// catchUp delivers what changed after from, then the live changes that arrived
// meanwhile, then hands the subscription to the feed.
func (s *Subscription) catchUp(ctx context.Context, from Resume) {
	latest := map[string]models.Position{} // newest position delivered per message
	send := func(c *models.Change) bool {
		if p, ok := latest[c.Position.ID]; ok && !c.Position.After(p) {
			return true
		}
		latest[c.Position.ID] = c.Position
		for {
			// The catch-up is the only sender until it hands over, and it keeps the
			// buffer's last slot free, as offer does, for the event that ends the stream.
			s.mu.Lock()
			if s.closed {
				s.mu.Unlock()
				return false
			}
			if len(s.events) < s.feed.o.Buffer {
				s.events <- s.event(c)
				s.mu.Unlock()
				return true
			}
			s.mu.Unlock()
			select {
			case <-ctx.Done():
				return false
			case <-time.After(5 * time.Millisecond):
			}
		}
	}
	if err := s.replay(ctx, from, send); err != nil {
		s.finish(err)
		return
	}
	for {
		s.mu.Lock()
		if s.overflow {
			s.feed.stats.SlowConsumers.Add(1)
			s.mu.Unlock()
			s.finish(ErrSlowConsumer)
			return
		}
		batch := s.pending
		s.pending = nil
		if len(batch) == 0 {
			s.catchingUp = false
			s.caughtUp = latest
			for _, p := range latest {
				s.caughtUpTo = laterOf(s.caughtUpTo, p.At)
			}
			// The feed may read the same changes up to a lookback window later.
			s.caughtUpTo = s.caughtUpTo.Add(s.feed.o.Lookback)
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
		for _, c := range batch {
			if !send(c) {
				return
			}
		}
	}
}

// replay reads the changes after from, page by page, and sends those the client has
// not had.
func (s *Subscription) replay(ctx context.Context, from Resume, send func(*models.Change) bool) error {
	had := map[models.ChangeKey]bool{}
	for _, k := range from.Recent {
		had[k] = true
	}
	after := from.replayAfter(s.feed.o.Lookback)
	start := after.At
	for {
		page, err := s.feed.store.MessageChanges(ctx, s.filter, start, after, catchUpPage)
		if err != nil {
			return err
		}
		for _, c := range page {
			after = c.Position
			atOrBefore := !c.Position.After(from.Position)
			if atOrBefore && (had[c.Position.Key()] || !from.Complete) {
				continue
			}
			if !send(c) {
				return nil
			}
		}
		if len(page) < catchUpPage {
			return nil
		}
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

// finish ends a catching-up subscription with err (a failed replay, or overflow).
func (s *Subscription) finish(err error) {
	s.feed.remove(s)
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.end(err)
	}
}

// Filter is what the subscription matches.
func (s *Subscription) Filter() models.ChangeFilter { return s.filter }
