package changefeed_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"gorm.io/gorm"

	"messages/models"
	"messages/models/changefeed"
	"messages/models/dbtest"
	"messages/models/jsonl"
	"messages/models/store"
)

// world is a running feed over a fresh database with one tenant, two subscribers and a
// message each, and a foreign tenant.
type world struct {
	store      *store.Store
	feed       *changefeed.Feed
	tn, other  *dbtest.Tenant
	alice, bob *models.Subscriber
	tpl        *models.Template
}

func newWorld(t *testing.T, s *store.Store, o changefeed.Options) *world {
	t.Helper()
	w := &world{store: s, tn: dbtest.NewTenant(t, s, "feed"), other: dbtest.NewTenant(t, s, "elsewhere")}
	w.alice, w.bob, w.tpl = w.tn.Subscriber(t, "alice"), w.tn.Subscriber(t, "bob"), w.tn.Template(t, "welcome")
	w.tn.Message(t, w.alice, w.tpl, nil)
	if o.Interval == 0 {
		o.Interval = 10 * time.Millisecond
	}
	w.feed = changefeed.New(s, o)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = w.feed.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	select {
	case <-w.feed.Started():
	case <-time.After(10 * time.Second):
		t.Fatal("feed did not start")
	}
	return w
}

func (w *world) subscribe(t *testing.T, subscriberID *string, from *changefeed.Resume) *changefeed.Subscription {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := w.feed.Subscribe(ctx, models.ChangeFilter{EnvironmentID: w.tn.Env.ID, SubscriberID: subscriberID}, from)
	t.Cleanup(func() { cancel(); s.Close() })
	return s
}

// insertRaw writes a message row with plain SQL, as another program would.
func (w *world) insertRaw(t *testing.T, sub *models.Subscriber, stamp *time.Time) string {
	t.Helper()
	return dbtest.RawMessage(t, w.store.DB(), w.tn.Env, sub.ID, stamp)
}

func (w *world) mark(t *testing.T, sub *models.Subscriber, id string, status models.MessageActionStatus) {
	t.Helper()
	_, err := w.store.MarkMessageAction(context.Background(), w.tn.Env.ID, models.MarkAction{
		SubscriberID: sub.SubscriberID, MessageID: id, Type: models.ButtonPrimary, Status: status})
	if err != nil {
		t.Fatal(err)
	}
}

func next(t *testing.T, s *changefeed.Subscription) *changefeed.Event {
	t.Helper()
	return nextWithin(t, s, 10*time.Second)
}

// nextWithin is next with its own wait.
func nextWithin(t *testing.T, s *changefeed.Subscription, wait time.Duration) *changefeed.Event {
	t.Helper()
	select {
	case e, ok := <-s.Events():
		if !ok {
			t.Fatal("stream closed")
		}
		if e.Err != nil {
			t.Fatalf("stream ended: %v", e.Err)
		}
		return e
	case <-time.After(wait):
		t.Fatalf("no event within %s", wait)
	}
	return nil
}

func quiet(t *testing.T, s *changefeed.Subscription, d time.Duration) {
	t.Helper()
	select {
	case e := <-s.Events():
		t.Fatalf("unexpected event: %+v", e)
	case <-time.After(d):
	}
}

func ptr[T any](v T) *T { return &v }

func TestFeedSeesEveryWriter(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		w := newWorld(t, s, changefeed.Options{})
		all, alice := w.subscribe(t, nil, nil), w.subscribe(t, ptr("alice"), nil)

		// Another program's INSERT.
		raw := w.insertRaw(t, w.alice, nil)
		for _, sub := range []*changefeed.Subscription{all, alice} {
			if e := next(t, sub); e.Change.Message.ID != raw || !e.Change.Created || e.Change.Message.Subscriber.SubscriberID != "alice" {
				t.Fatalf("raw insert: %+v", e.Change)
			}
		}
		// A mark: the row changes; the event carries the state after it.
		w.mark(t, w.alice, raw, models.ActionDone)
		e := next(t, alice)
		if e.Change.Message.ID != raw || e.Change.Created || e.Change.Message.CTA.Action.Status != models.ActionDone {
			t.Fatalf("mark: %+v", e.Change)
		}
		next(t, all)
		// Bob's message reaches the environment's stream only; another tenant's, neither.
		w.other.Message(t, w.other.Subscriber(t, "alice"), w.other.Template(t, "x"), nil)
		bobs := w.insertRaw(t, w.bob, nil)
		if e := next(t, all); e.Change.Message.ID != bobs {
			t.Fatalf("environment stream: %+v", e.Change)
		}
		quiet(t, alice, 200*time.Millisecond)

		// import, as the CLI runs it: a new message and a replaced one.
		var buf bytes.Buffer
		if _, err := jsonl.Export(context.Background(), s, w.tn.Env.ID, &buf, nil); err != nil {
			t.Fatal(err)
		}
		line := bytes.SplitN(buf.Bytes(), []byte("\n"), 2)[0]
		fresh := models.NewID(time.Now().Add(time.Hour))
		var old string
		if n, err := fmt.Sscanf(string(line[bytes.Index(line, []byte(`"_id":"`))+7:]), "%24s", &old); n != 1 || err != nil {
			t.Fatalf("no id in %s", line)
		}
		newLine := bytes.Replace(line, []byte(old), []byte(fresh), 1)
		if _, err := jsonl.Import(context.Background(), s, bytes.NewReader(newLine), nil); err != nil {
			t.Fatal(err)
		}
		e = next(t, all)
		if e.Change.Message.ID != fresh || !e.Change.Created {
			t.Fatalf("import: %+v", e.Change)
		}
	})
}

// A transaction that commits after the lookback window is seen when it holds the feed,
// as import does.
func TestFeedHoldCoversLongTransactions(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		w := newWorld(t, s, changefeed.Options{Lookback: 100 * time.Millisecond})
		all := w.subscribe(t, nil, nil)
		release, err := s.HoldChanges(context.Background(), time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		// The feed reads holds every few polls: wait for one read that began after the hold.
		polls := w.feed.Stats().Polls.Load()
		deadline := time.Now().Add(10 * time.Second)
		for w.feed.Stats().Polls.Load() < polls+changefeed.HoldEvery+1 {
			if time.Now().After(deadline) {
				t.Fatal("the feed stopped polling")
			}
			time.Sleep(10 * time.Millisecond)
		}
		var late string
		err = s.DB().Transaction(func(tx *gorm.DB) error {
			late = dbtest.RawMessage(t, tx, w.tn.Env, w.bob.ID, nil)
			if err := tx.Exec("UPDATE messages SET subject = 'late' WHERE id = ?", late).Error; err != nil {
				return err
			}
			time.Sleep(600 * time.Millisecond) // six lookback windows before the commit
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := release(context.Background()); err != nil {
			t.Fatal(err)
		}
		// The world's own messages, written just before the stream began and within the
		// lookback of the feed's first polls, may reach the stream first (a client upserts
		// them by id; CI saw one once). The late commit must come, whole: within 30 s, since
		// CI once saw none within 10 s on MariaDB while every package's tests ran at once
		// (not reproduced alone in 8 runs).
		for {
			e := nextWithin(t, all, 30*time.Second)
			if e.Change.Message.ID != late {
				t.Logf("before the late commit: message %s", e.Change.Message.ID)
				continue
			}
			if e.Change.Message.Subject != "late" {
				t.Fatalf("late commit: %+v", e.Change.Message)
			}
			break
		}
	})
}

// A client resuming from a cursor gets what it missed, including a change stamped before
// its cursor that committed after it (within the lookback window), and nothing it had.
func TestFeedResume(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		w := newWorld(t, s, changefeed.Options{Lookback: 5 * time.Second})
		live := w.subscribe(t, ptr("alice"), nil)
		first := w.insertRaw(t, w.alice, nil)
		e1 := next(t, live)
		second := w.insertRaw(t, w.alice, nil)
		e2 := next(t, live)
		if e1.Change.Message.ID != first || e2.Change.Message.ID != second {
			t.Fatalf("live: %s %s", e1.Change.Message.ID, e2.Change.Message.ID)
		}
		if !e2.Resume.Complete || len(e2.Resume.Recent) != 2 {
			t.Fatalf("resume point: %+v", e2.Resume)
		}

		// While the client is away: a change stamped between its two events (its
		// transaction committed late), and a new one.
		late := w.insertRaw(t, w.alice, ptr(e1.Change.Position.At.Add(time.Millisecond)))
		w.mark(t, w.alice, first, models.ActionDone)
		resumed := w.subscribe(t, ptr("alice"), &e2.Resume)
		got := map[string]bool{}
		for range 2 {
			e := next(t, resumed)
			got[e.Change.Message.ID] = true
		}
		if !got[late] || !got[first] {
			t.Fatalf("resumed with %v, want the late row and the marked one", got)
		}
		quiet(t, resumed, 300*time.Millisecond)
		// Then live.
		third := w.insertRaw(t, w.alice, nil)
		if e := next(t, resumed); e.Change.Message.ID != third {
			t.Fatalf("after catching up: %+v", e.Change)
		}
	})
}

// A client that reads nothing while changes wait is closed with ErrSlowConsumer; the
// feed keeps nothing more for it.
func TestFeedSlowConsumer(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		w := newWorld(t, s, changefeed.Options{Buffer: 3, SlowTimeout: 200 * time.Millisecond})
		slow := w.subscribe(t, nil, nil)
		for range 6 {
			w.insertRaw(t, w.bob, nil)
		}
		deadline := time.After(10 * time.Second)
		for w.feed.Subscriptions() != 0 {
			select {
			case <-deadline:
				t.Fatal("slow subscription still open")
			case <-time.After(10 * time.Millisecond):
			}
		}
		var events []*changefeed.Event
		for e := range slow.Events() {
			events = append(events, e)
		}
		if len(events) != 3 || !errors.Is(events[2].Err, changefeed.ErrSlowConsumer) {
			t.Fatalf("got %d events, last %+v", len(events), events[len(events)-1])
		}
		if w.feed.Stats().SlowConsumers.Load() != 1 {
			t.Fatalf("slow consumers counted: %d", w.feed.Stats().SlowConsumers.Load())
		}
	})
}

// A client that reads, more slowly than a burst arrives, gets every change once and in
// order, though the burst is many times what the feed queues for it: what overflows is
// read again from the database.
func TestFeedBurstBeyondBuffer(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		w := newWorld(t, s, changefeed.Options{Buffer: 5})
		sub := w.subscribe(t, nil, nil)
		want := map[string]bool{}
		err := s.DB().Transaction(func(tx *gorm.DB) error {
			for range 150 {
				want[dbtest.RawMessage(t, tx, w.tn.Env, w.bob.ID, nil)] = true
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		// The world's own messages, written just before the stream began and within the
		// lookback, may come too, before or after the burst (a client upserts them by id):
		// only the burst's are counted, each exactly once and in order.
		got := map[string]int{}
		var last models.Position
		burst := func(e *changefeed.Event) bool {
			if want[e.Change.Message.ID] {
				return true
			}
			t.Logf("not of the burst: message %s", e.Change.Message.ID)
			return false
		}
		for len(got) < len(want) {
			e := next(t, sub)
			if !burst(e) {
				continue
			}
			if !e.Change.Position.After(last) {
				t.Fatalf("out of order: %v after %v", e.Change.Position, last)
			}
			last = e.Change.Position
			got[e.Change.Message.ID]++
			time.Sleep(time.Millisecond)
		}
		for id, n := range got {
			if n != 1 {
				t.Fatalf("message %s delivered %d times", id, n)
			}
		}
		for quietUntil := time.After(300 * time.Millisecond); ; {
			select {
			case e := <-sub.Events():
				if e.Err != nil {
					t.Fatalf("stream ended: %v", e.Err)
				}
				if burst(e) {
					t.Fatalf("message %s of the burst delivered again", e.Change.Message.ID)
				}
				continue
			case <-quietUntil:
			}
			break
		}
		if w.feed.Stats().Refills.Load() == 0 {
			t.Fatal("the burst never overflowed the queue: the test proves nothing")
		}
	})
}

// Once a burst is behind the lookback window, polls read no positions: the window moves
// with the clock, not with the newest change.
func TestFeedIdleAfterBurst(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		w := newWorld(t, s, changefeed.Options{Lookback: 100 * time.Millisecond})
		for range 50 {
			w.insertRaw(t, w.bob, nil)
		}
		time.Sleep(400 * time.Millisecond)
		before := w.feed.Stats().Positions.Load()
		polls := w.feed.Stats().Polls.Load()
		time.Sleep(300 * time.Millisecond)
		if read := w.feed.Stats().Positions.Load() - before; read != 0 {
			t.Fatalf("%d positions read in %d idle polls", read, w.feed.Stats().Polls.Load()-polls)
		}
	})
}

// A quiet feed rests: it polls every RestInterval, not every Interval, until this
// process writes (which wakes it at once) or a poll finds another writer's change.
func TestFeedRestsWhileQuiet(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		const rest = 5 * time.Second
		w := newWorld(t, s, changefeed.Options{Interval: 10 * time.Millisecond, RestInterval: rest})
		all := w.subscribe(t, nil, nil)
		id := w.insertRaw(t, w.alice, nil)
		next(t, all)

		// Resting: at most one poll in a second and a half, where Interval makes 150.
		resting := func() {
			t.Helper()
			time.Sleep(2*time.Second + 200*time.Millisecond)
			polls := w.feed.Stats().Polls.Load()
			time.Sleep(1500 * time.Millisecond)
			if n := w.feed.Stats().Polls.Load() - polls; n > 1 {
				t.Fatalf("%d polls in 1.5 s of rest every %s", n, rest)
			}
		}
		resting()
		// A write of this process wakes it: the event comes well before the next rest poll,
		// and it polls every Interval again.
		began := time.Now()
		w.mark(t, w.alice, id, models.ActionDone)
		if e := nextWithin(t, all, rest/2); e.Change.Message.ID != id {
			t.Fatalf("after a mark: %+v", e.Change)
		}
		polls := w.feed.Stats().Polls.Load()
		time.Sleep(time.Second)
		if n := w.feed.Stats().Polls.Load() - polls; n < 5 {
			t.Fatalf("%d polls in the second after a write (%s after it)", n, time.Since(began))
		}

		// Another program's write is seen by the rest polls.
		resting()
		raw := w.insertRaw(t, w.bob, nil)
		if e := nextWithin(t, all, 2*rest); e.Change.Message.ID != raw {
			t.Fatalf("another writer's row: %+v", e.Change)
		}
	})
}

// The feed's database work does not grow with its subscriptions: the same statements
// per poll with none and with a thousand.
func TestFeedPollCostIndependentOfSubscriptions(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		log := dbtest.RecordStatements(t, s)
		// Polling every Interval throughout, with no rest, for a count per poll.
		w := newWorld(t, s, changefeed.Options{RestInterval: 10 * time.Millisecond})
		perPoll := func() float64 {
			time.Sleep(50 * time.Millisecond)
			log.Take()
			polls := w.feed.Stats().Polls.Load()
			time.Sleep(500 * time.Millisecond)
			n := len(log.Take())
			return float64(n) / float64(w.feed.Stats().Polls.Load()-polls)
		}
		idle := perPoll()
		for i := range 1000 {
			w.subscribe(t, ptr(fmt.Sprintf("subscriber-%d", i)), nil)
		}
		busy := perPoll()
		// One statement a poll; on Vitess two per shard (the changes and the deletions:
		// vtgate plans their union wrongly; each shard polled on its own); and a read of
		// the holds now and then.
		most := 1.5
		if s.Vitess() {
			shards, err := s.FeedShards(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			most = 2*float64(len(shards)) + 0.5
		}
		if idle > most || busy > idle+0.3 {
			t.Fatalf("statements per poll: %.2f without subscriptions, %.2f with 1,000", idle, busy)
		}
	})
}

// Shutdown ends every live stream with a reason.
func TestFeedShutdown(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		w := newWorld(t, s, changefeed.Options{})
		sub := w.subscribe(t, nil, nil)
		w.feed.Shutdown()
		e, ok := <-sub.Events()
		if !ok || !errors.Is(e.Err, changefeed.ErrShuttingDown) {
			t.Fatalf("got %+v", e)
		}
		if _, ok := <-sub.Events(); ok {
			t.Fatal("stream still open")
		}
	})
}

// A client that parks no goroutine on its stream takes events only when told they are
// queued (SubscribeReady), as the inbox socket does: it gets a burst past the queue
// exactly once, then the stream's end.
func TestFeedSubscribeReady(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		w := newWorld(t, s, changefeed.Options{Buffer: 5})
		var (
			sub    *changefeed.Subscription
			opened = make(chan struct{})
			taking atomic.Bool
			got    = make(chan *changefeed.Event, 1000)
		)
		// take is the client: it takes what is queued, then ends; an event queued after it
		// found none is its to take.
		var take func()
		take = func() {
			<-opened
			for {
				for more := true; more; {
					select {
					case e, ok := <-sub.Events():
						if !ok {
							close(got)
							return
						}
						got <- e
						time.Sleep(100 * time.Microsecond)
					default:
						more = false
					}
				}
				taking.Store(false)
				if len(sub.Events()) == 0 || !taking.CompareAndSwap(false, true) {
					return
				}
			}
		}
		ready := func() {
			if taking.CompareAndSwap(false, true) {
				go take()
			}
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		sub = w.feed.SubscribeReady(ctx, models.ChangeFilter{EnvironmentID: w.tn.Env.ID, SubscriberID: ptr("bob")}, nil, ready)
		close(opened)
		want := map[string]bool{}
		err := s.DB().Transaction(func(tx *gorm.DB) error {
			for range 150 {
				want[dbtest.RawMessage(t, tx, w.tn.Env, w.bob.ID, nil)] = true
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]int{}
		timeout := time.After(20 * time.Second)
		for len(seen) < len(want) {
			select {
			case e := <-got:
				if e.Err != nil {
					t.Fatalf("stream ended: %v", e.Err)
				}
				if !want[e.Change.Message.ID] {
					t.Fatalf("message %s is not bob's burst", e.Change.Message.ID)
				}
				if seen[e.Change.Message.ID]++; seen[e.Change.Message.ID] > 1 {
					t.Fatalf("message %s delivered twice", e.Change.Message.ID)
				}
			case <-timeout:
				t.Fatalf("%d of %d events taken", len(seen), len(want))
			}
		}
		if w.feed.Stats().Refills.Load() == 0 {
			t.Fatal("the burst never overflowed the queue: the test proves nothing")
		}
		w.feed.Shutdown()
		select {
		case e := <-got:
			if e == nil || !errors.Is(e.Err, changefeed.ErrShuttingDown) {
				t.Fatalf("after the burst: %+v", e)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the stream's end was never signalled")
		}
	})
}

// A subscription has ended once the feed will queue nothing more on it than its last
// event and close: after the feed's shutdown, or the client's Close; a live one has not.
func TestFeedEnded(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		w := newWorld(t, s, changefeed.Options{})
		live, closed, shut := w.subscribe(t, nil, nil), w.subscribe(t, nil, nil), w.subscribe(t, ptr("alice"), nil)
		closed.Close()
		if live.Ended() || !closed.Ended() {
			t.Fatalf("live ended %v, closed ended %v", live.Ended(), closed.Ended())
		}
		w.feed.Shutdown()
		for e := range shut.Events() {
			if !errors.Is(e.Err, changefeed.ErrShuttingDown) {
				t.Fatalf("last event: %+v", e)
			}
		}
		if !shut.Ended() {
			t.Fatal("a stream the feed closed has not ended")
		}
	})
}
