// Package changefeed is the live event feed of messages: one poller per server instance
// reads the rows the database stamped as changed (store.Store.ChangedSince, one indexed
// query per interval whatever the number of subscriptions) and fans each change out to
// the subscriptions of its environment. Every writer is seen, because the database
// stamps the rows: marks on any instance, `import` in another process, and rows another
// program inserts with plain SQL. docs/scaling.md ("Live events") says why this design
// and what it costs past one machine.
package changefeed

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"messages/models"
	"messages/models/store"
)

// Options tune the feed; zero values take the defaults.
type Options struct {
	// Interval is how often the feed polls while messages change: the floor of an event's
	// latency.
	Interval time.Duration
	// RestInterval is how often it polls once nothing changed for restAfter, until a
	// poll finds a change or this process writes messages (store.Store.Wrote), which
	// wakes it at once: the first change another process makes after a quiet spell waits
	// up to RestInterval, the rest Interval. At most Interval: it does not rest.
	RestInterval time.Duration
	// Lookback is how far behind the newest change each poll reads again, so a row whose
	// transaction commits up to Lookback after its write is still seen. A writer whose
	// transactions run longer registers a hold (store.Store.HoldChanges), as import does.
	Lookback time.Duration
	// Batch is how many positions one poll query reads.
	Batch int
	// Buffer is how many changes a subscription may have queued behind a client that is
	// reading more slowly than they come; past it they are dropped and read again from
	// the database when the client catches up.
	// and the subscription is closed with ErrSlowConsumer.
	Buffer int
	// SlowTimeout is how long a client may read nothing while changes wait for it; then
	// its subscription is closed with ErrSlowConsumer.
	SlowTimeout time.Duration
	// ShardTimeout bounds, on Vitess, one poll of one shard: a shard that has not
	// answered by then is asked again at a later poll, from where its last poll began,
	// while the other shards' polls go on every Interval without waiting for it.
	ShardTimeout time.Duration
	// Logger reports poll failures.
	Logger *slog.Logger
}

// Defaults of Options.
const (
	DefaultInterval     = 100 * time.Millisecond
	DefaultRestInterval = 500 * time.Millisecond
	DefaultLookback     = 2 * time.Second
	DefaultBatch        = 1000
	DefaultBuffer       = 1000
	DefaultSlowTimeout  = 10 * time.Second
	DefaultShardTimeout = 5 * time.Second
)

// holdEvery is how many polls pass between reads of change_holds, and holdsWithin how
// much of Lookback at most: a hold is registered before its writer's first row, and read
// again well within Lookback.
const (
	holdEvery   = 5
	holdsWithin = 2 // of Lookback: half
)

// restAfter is how long the feed polls every Interval after the last change it saw (or
// this process's last write) before it rests, polling every RestInterval. An idle
// instance's polls cost it more CPU than anything else it does while clients only wait
// (BENCHMARKS.md, "Idle subscriptions"): each wakes the runtime's threads.
const restAfter = 2 * time.Second

// Feed is one instance's poller and the subscriptions it serves.
type Feed struct {
	store *store.Store
	o     Options

	mu   sync.Mutex
	subs map[string]map[*Subscription]struct{} // by environment id
	// newest is the newest position when the last poll ended: where a live
	// subscription begins.
	newest models.Position

	// Poll state, owned by Run's goroutine.
	shards []*shardFeed // what each shard's polls read
	hold   time.Time    // start of the oldest hold, zero when none
	polls  int
	// holdsRead is when the holds were read last, by the machine's clock; busy when a
	// poll last found a change, or this process wrote.
	holdsRead time.Time
	busy      time.Time
	// The database's clock stamps the rows; the feed keeps it as an offset from the
	// machine's, read again with the holds.
	offset time.Duration
	// offsetRTT is the round trip the offset was taken from, at offsetAt: a slower read
	// does not replace it (its clock is uncertain by half its round trip) until it is
	// offsetMaxAge old.
	offsetRTT time.Duration
	offsetAt  time.Time

	started chan struct{}
	stats   Stats
}

// shardFeed is what the polls of one shard of messages read (on Vitess, where each shard
// is polled on its own: store.Store.FeedShards), or of the whole database. A shard that
// fails or stalls keeps its window where it was, so the changes it holds are read when it
// answers again, while the others' windows move on.
type shardFeed struct {
	name string // "" for the whole database
	// The state below is owned by the goroutine polling the shard while running is set,
	// by Run's otherwise.
	high models.Position                // newest position seen
	seen map[models.ChangeKey]time.Time // changes delivered, by key, pruned past the window
	// lastPoll is when, by the database's clock, the shard's last successful poll
	// began: the next one reads from Lookback before it.
	lastPoll time.Time
	// released is the start of a hold released while the shard's poll was under way:
	// its next poll reads from there once.
	released time.Time
	// running receives the result of the shard's poll under way; nil when none is.
	running chan shardResult
	// failing is when the shard's polls began to fail (zero while they succeed), and
	// warned when that was last logged.
	failing, warned time.Time
}

// shardResult is the outcome of one poll of one shard.
type shardResult struct {
	changed bool // it published a change
	err     error
}

// Stats count what the feed did, for metrics.
type Stats struct {
	// Polls and PollErrors count polls; Positions the index entries they read; Changes
	// the changes published; Delivered the events sent to clients; Refills the bursts
	// a subscription's queue could not hold (read again from the database);
	// SlowConsumers the subscriptions closed because their client stopped reading.
	Polls, PollErrors, Positions, Changes, Delivered, Refills, SlowConsumers atomic.Int64
}

// New returns a feed over store; Run starts it.
func New(st *store.Store, o Options) *Feed {
	if o.Interval <= 0 {
		o.Interval = DefaultInterval
	}
	if o.RestInterval <= 0 {
		o.RestInterval = DefaultRestInterval
	}
	o.RestInterval = max(o.RestInterval, o.Interval)
	if o.Lookback <= 0 {
		o.Lookback = DefaultLookback
	}
	if o.Batch <= 0 {
		o.Batch = DefaultBatch
	}
	if o.Buffer <= 0 {
		o.Buffer = DefaultBuffer
	}
	if o.SlowTimeout <= 0 {
		o.SlowTimeout = DefaultSlowTimeout
	}
	if o.ShardTimeout <= 0 {
		o.ShardTimeout = DefaultShardTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return &Feed{store: st, o: o, subs: map[string]map[*Subscription]struct{}{}, started: make(chan struct{})}
}

// Stats are the feed's counters.
func (f *Feed) Stats() *Stats { return &f.stats }

// Lookback is the window each poll reads again; cursors carry the changes delivered in it.
func (f *Feed) Lookback() time.Duration { return f.o.Lookback }

// Subscriptions is how many subscriptions are open.
func (f *Feed) Subscriptions() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, set := range f.subs {
		n += len(set)
	}
	return n
}

// Run polls until ctx ends. It starts from the newest change in the table, retrying
// while the database is unreachable; a failed poll is logged and retried next interval,
// from where the last one ended, so an outage delays events but loses none.
func (f *Feed) Run(ctx context.Context) error {
	t := time.NewTicker(f.o.Interval)
	defer t.Stop()
	for {
		if err := f.start(ctx); err == nil {
			break
		} else if ctx.Err() == nil {
			f.o.Logger.Warn("change feed: cannot read the newest change, retrying", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
	t.Stop()
	f.busy = time.Now()
	next := time.NewTimer(f.o.Interval)
	defer next.Stop()
	wrote := f.store.Wrote()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-next.C:
		case <-wrote:
			// Resting, it reads now; polling every Interval, at its next tick.
			rested := f.resting()
			f.busy = time.Now()
			if !rested {
				continue
			}
			next.Stop()
		}
		if err := f.poll(ctx); err != nil && ctx.Err() == nil {
			f.stats.PollErrors.Add(1)
			f.o.Logger.Warn("change feed: poll failed, retrying", "err", err)
		}
		if f.resting() {
			next.Reset(f.o.RestInterval)
		} else {
			next.Reset(f.o.Interval)
		}
	}
}

// resting reports whether the feed polls every RestInterval: nothing changed for
// restAfter.
func (f *Feed) resting() bool {
	return f.o.RestInterval > f.o.Interval && time.Since(f.busy) >= restAfter
}

// Started is closed once the feed knows where it starts: changes committed after that
// reach subscriptions.
func (f *Feed) Started() <-chan struct{} { return f.started }

func (f *Feed) start(ctx context.Context) error {
	if err := f.readHolds(ctx); err != nil {
		return err
	}
	began := f.dbNow()
	names, err := f.store.FeedShards(ctx)
	if err != nil {
		return err
	}
	if len(names) == 0 {
		names = []string{""}
	}
	f.shards = make([]*shardFeed, len(names))
	for i, name := range names {
		f.shards[i] = &shardFeed{name: name, seen: map[models.ChangeKey]time.Time{}, lastPoll: began}
	}
	if len(f.shards) == 1 {
		if err := f.startShard(ctx, f.shards[0], f.hold); err != nil {
			return err
		}
	} else {
		// A shard that does not answer is polled from here on like the others: its
		// window begins now, and it has no changes to skip when it answers.
		errs := make([]error, len(f.shards))
		var wg sync.WaitGroup
		for i, sh := range f.shards {
			wg.Go(func() { errs[i] = f.startShard(ctx, sh, f.hold) })
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil && ctx.Err() == nil {
				f.shards[i].failing, f.shards[i].warned = time.Now(), time.Now()
				f.o.Logger.Warn("change feed: a shard did not answer at start; its changes are read once it does",
					"shard", f.shards[i].name, "err", err)
			}
		}
	}
	close(f.started)
	return nil
}

// startShard reads where sh's changes stand: its newest position, and the changes
// already in its window, which happened before anyone could subscribe here and are
// marked seen so that its first poll does not announce them.
func (f *Feed) startShard(ctx context.Context, sh *shardFeed, hold time.Time) error {
	ctx, done, err := f.onShard(ctx, sh)
	if err != nil {
		return err
	}
	defer done()
	p, err := f.store.LatestChange(ctx)
	if err != nil {
		return err
	}
	from := windowFrom(sh.lastPoll, f.o.Lookback, hold)
	after := (*models.Position)(nil)
	seen := map[models.ChangeKey]time.Time{}
	for {
		ps, err := f.store.ChangedSince(ctx, from, after, f.o.Batch)
		if err != nil {
			return err
		}
		for _, p := range ps {
			seen[p.Key()] = p.At
		}
		if len(ps) < f.o.Batch {
			break
		}
		after = &ps[len(ps)-1].Position
	}
	sh.high, sh.seen = p, seen
	f.noteHigh(p)
	return nil
}

// onShard is ctx for the statements of sh: on Vitess bounded by ShardTimeout and
// targeting the shard.
func (f *Feed) onShard(ctx context.Context, sh *shardFeed) (context.Context, context.CancelFunc, error) {
	if sh.name == "" {
		return ctx, func() {}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, f.o.ShardTimeout)
	ctx, err := f.store.OnShard(ctx, sh.name)
	if err != nil {
		cancel()
		return nil, nil, err
	}
	return ctx, cancel, nil
}

// noteHigh makes p the position a live subscription begins at if it is the newest.
func (f *Feed) noteHigh(p models.Position) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if p.After(f.newest) {
		f.newest = p
	}
}

// dbNow is the database's clock, estimated from the machine's. The feed measures real
// time, not the program's injectable clock: it tracks the database's.
func (f *Feed) dbNow() time.Time { return time.Now().Add(f.offset) }

// readHolds reads the oldest hold and the database's clock.
func (f *Feed) readHolds(ctx context.Context) error {
	before := time.Now()
	hold, now, err := f.store.OldestHold(ctx)
	if err != nil {
		return err
	}
	rtt := time.Since(before)
	f.hold, f.holdsRead = hold, before
	if f.offsetAt.IsZero() || rtt <= f.offsetRTT || before.Sub(f.offsetAt) > offsetMaxAge {
		f.offset = now.Sub(before.Add(rtt / 2))
		f.offsetRTT, f.offsetAt = rtt, before
	}
	return nil
}

// offsetMaxAge is how long the database's clock offset, read on the quickest round trip
// so far, is kept against slower reads.
const offsetMaxAge = time.Minute

// windowFrom is where a shard's next poll reads from: lookback before its last poll
// began, or the start of the oldest hold if that is earlier. It moves with the clock, so a
// quiet table costs one empty range read per poll however large the last burst was.
//
// It is whole milliseconds: the query compares stamps with it at the database's
// precision (SQLite's stamps are text in milliseconds, MariaDB's microseconds), and the
// changes the last poll saw are forgotten below it in Go's nanoseconds. A from between a
// stamp and the next millisecond would forget a change the next query still reads, and
// publish it again.
func windowFrom(lastPoll time.Time, lookback time.Duration, hold time.Time) time.Time {
	from := lastPoll.Add(-lookback)
	if !hold.IsZero() && hold.Before(from) {
		from = hold
	}
	return from.Truncate(time.Millisecond)
}

// poll reads every shard's positions in its window, loads the rows not seen yet and
// publishes them in changed_at order, shard by shard. With several shards (Vitess) each
// is polled by a goroutine of its own, waited for at most an Interval: a shard still
// polling then (hung) is left to finish, and polled again once it has, while the others
// are polled every Interval.
func (f *Feed) poll(ctx context.Context) error {
	f.stats.Polls.Add(1)
	var released time.Time
	if f.polls++; f.polls%holdEvery == 0 || time.Since(f.holdsRead) >= f.o.Lookback/holdsWithin {
		held := f.hold
		if err := f.readHolds(ctx); err != nil {
			return err
		}
		if !held.IsZero() && (f.hold.IsZero() || f.hold.After(held)) {
			released = held
		}
	}
	began := f.dbNow()
	hold := f.hold
	for _, sh := range f.shards {
		if !released.IsZero() && (sh.released.IsZero() || released.Before(sh.released)) {
			sh.released = released
		}
		if sh.running != nil {
			continue // still polling since an earlier round
		}
		from := windowFrom(sh.lastPoll, f.o.Lookback, hold)
		if !sh.released.IsZero() && sh.released.Before(from) {
			// A hold is released after its writer committed: this poll, the first to
			// know, still reads from the hold's start, so the rows the writer stamped long
			// before its commit are read once after it. From the next poll on, the window
			// is the usual one.
			from = sh.released.Truncate(time.Millisecond)
		}
		sh.released = time.Time{}
		if len(f.shards) == 1 {
			return f.finished(sh, f.pollShard(ctx, sh, began, from, hold))
		}
		sh.running = make(chan shardResult, 1)
		go func() { sh.running <- f.pollShard(ctx, sh, began, from, hold) }()
	}
	wait := time.NewTimer(f.o.Interval)
	defer wait.Stop()
	waiting := true
	var errs []error
	for _, sh := range f.shards {
		if sh.running == nil {
			continue
		}
		var r shardResult
		if waiting {
			select {
			case r = <-sh.running:
			case <-wait.C:
				waiting = false
				continue
			}
		} else {
			select {
			case r = <-sh.running:
			default:
				continue
			}
		}
		sh.running = nil
		if err := f.finished(sh, r); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// finished takes in the result of a poll of sh: the feed is busy when it found changes,
// and a shard's failures are reported once when they begin and then once a minute.
func (f *Feed) finished(sh *shardFeed, r shardResult) error {
	if r.changed {
		f.busy = time.Now()
	}
	if r.err == nil {
		if !sh.failing.IsZero() && sh.name != "" {
			f.o.Logger.Info("change feed: the shard answers again", "shard", sh.name, "failingFor", time.Since(sh.failing).Round(time.Millisecond).String())
		}
		sh.failing = time.Time{}
		return nil
	}
	if sh.name == "" {
		return r.err
	}
	now := time.Now()
	if sh.failing.IsZero() {
		sh.failing = now
	}
	f.stats.PollErrors.Add(1)
	if now.Sub(sh.warned) >= shardWarnEvery {
		sh.warned = now
		f.o.Logger.Warn("change feed: a shard's poll failed; the other shards' events go on, its own wait for it",
			"shard", sh.name, "failingFor", now.Sub(sh.failing).Round(time.Millisecond).String(), "err", r.err)
	}
	return nil
}

// shardWarnEvery spaces the warnings about one failing shard.
const shardWarnEvery = time.Minute

// pollShard is one poll of sh from from, the poll having begun at began by the
// database's clock, with the oldest hold hold.
func (f *Feed) pollShard(ctx context.Context, sh *shardFeed, began, from, hold time.Time) (r shardResult) {
	ctx, done, err := f.onShard(ctx, sh)
	if err != nil {
		return shardResult{err: err}
	}
	defer done()
	var after *models.Position
	for {
		ps, err := f.store.ChangedSince(ctx, from, after, f.o.Batch)
		if err != nil {
			r.err = err
			return r
		}
		f.stats.Positions.Add(int64(len(ps)))
		var fresh, gone []string
		for _, p := range ps {
			if _, ok := sh.seen[p.Key()]; !ok {
				if p.Deleted {
					gone = append(gone, p.ID)
				} else {
					fresh = append(fresh, p.ID)
				}
			}
		}
		if len(fresh)+len(gone) > 0 {
			r.changed = true
		}
		if err := f.load(ctx, sh, fresh, f.store.ChangedMessages); err != nil {
			r.err = err
			return r
		}
		if err := f.load(ctx, sh, gone, f.store.DeletedMessages); err != nil {
			r.err = err
			return r
		}
		for _, p := range ps {
			sh.seen[p.Key()] = p.At
			if p.After(sh.high) {
				sh.high = p.Position
			}
		}
		if len(ps) < f.o.Batch {
			break
		}
		after = &ps[len(ps)-1].Position
	}
	// The window only moves forward: the keys below it are forgotten next, and a window
	// moved back (the clock's estimate corrected between two polls) would read them again
	// and publish them twice.
	if began.After(sh.lastPoll) {
		sh.lastPoll = began
	}
	f.noteHigh(sh.high)
	// Keys older than the next window cannot be read again.
	next := windowFrom(sh.lastPoll, f.o.Lookback, hold)
	for k, at := range sh.seen {
		if at.Before(next) {
			delete(sh.seen, k)
		}
	}
	return r
}

// loadChunk bounds the ids of one IN list.
const loadChunk = 500

// load reads the rows (or, with store.DeletedMessages, the tombstones) with the given ids
// as they are now and publishes each change not published yet. A row changed again since
// its position was read is published once, at its newest position; a row deleted since
// is not found, and its deletion is published from its tombstone.
func (f *Feed) load(ctx context.Context, sh *shardFeed, ids []string, read func(context.Context, []string) ([]*models.Change, error)) error {
	for len(ids) > 0 {
		n := min(len(ids), loadChunk)
		changes, err := read(ctx, ids[:n])
		if err != nil {
			return err
		}
		ids = ids[n:]
		for _, c := range changes {
			k := c.Position.Key()
			if _, ok := sh.seen[k]; ok {
				continue
			}
			sh.seen[k] = c.Position.At
			if c.Position.After(sh.high) {
				sh.high = c.Position
			}
			f.stats.Changes.Add(1)
			f.publish(c)
		}
	}
	return nil
}

// publish offers c to every subscription of its environment that it matches.
func (f *Feed) publish(c *models.Change) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for s := range f.subs[c.Message.EnvironmentID] {
		if s.filter.Matches(c) {
			s.offer(c)
		}
	}
}

func (f *Feed) add(s *Subscription) {
	f.mu.Lock()
	defer f.mu.Unlock()
	set := f.subs[s.filter.EnvironmentID]
	if set == nil {
		set = map[*Subscription]struct{}{}
		f.subs[s.filter.EnvironmentID] = set
	}
	set[s] = struct{}{}
	if !s.pumping {
		s.floor = f.newest
		s.last = Resume{Position: s.floor, Complete: true, Floor: s.floor}
	}
}

func (f *Feed) remove(s *Subscription) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if set := f.subs[s.filter.EnvironmentID]; set != nil {
		delete(set, s)
		if len(set) == 0 {
			delete(f.subs, s.filter.EnvironmentID)
		}
	}
}

// Shutdown ends every live subscription with ErrShuttingDown, so their clients
// reconnect (to another instance) instead of waiting on a server that is going away.
func (f *Feed) Shutdown() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, set := range f.subs {
		for s := range set {
			s.terminate(ErrShuttingDown)
		}
	}
	f.subs = map[string]map[*Subscription]struct{}{}
}

// ErrShuttingDown ends the subscriptions of a server that is stopping.
var ErrShuttingDown = errors.New("subscription closed: the server is shutting down; resubscribe with the last cursor received")

// ErrSlowConsumer ends a subscription whose client does not read its events as fast as
// they come: its buffer is full, and the feed does not hold more for it.
var ErrSlowConsumer = errors.New("subscription closed: the client read no event for too long while events waited; resubscribe with the last cursor it received")
