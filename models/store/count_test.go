package store_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	mysqldriver "github.com/go-sql-driver/mysql"
	"gorm.io/gorm"

	"messages/models"
	"messages/models/dbtest"
	"messages/models/migrate"
	"messages/models/seed"
	"messages/models/store"
)

// countFixture is an environment whose messages the count tests write in every way a
// writer can: the store's batches, GORM, plain SQL.
type countFixture struct {
	s    *store.Store
	tn   *dbtest.Tenant
	subs map[string]*models.Subscriber // by external id
	// n numbers the messages; writers of a test call message at once.
	n atomic.Int64
}

func newCountFixture(t *testing.T, s *store.Store, name string, subscribers ...string) *countFixture {
	t.Helper()
	f := &countFixture{s: s, tn: dbtest.NewTenant(t, s, name), subs: map[string]*models.Subscriber{}}
	for _, id := range subscribers {
		f.subs[id] = f.tn.Subscriber(t, id)
	}
	return f
}

// message builds a message of the subscriber (external id) on the channel, for a batch.
func (f *countFixture) message(subscriber string, channel models.ChannelType) *models.Message {
	n := f.n.Add(1)
	created := dbtest.Base.Add(time.Duration(n) * time.Second)
	return &models.Message{
		ID: models.NewID(created), EnvironmentID: f.tn.Env.ID, OrganizationID: f.tn.Env.OrganizationID,
		SubscriberID: f.subs[subscriber].ID, CreatedAt: models.NewTime(created), Channel: channel,
		TransactionID: fmt.Sprintf("%s-txn-%d", f.tn.Env.Name, n), Status: "sent",
	}
}

// write inserts messages as import and seed do: one batch in one transaction.
func (f *countFixture) write(t testing.TB, c store.Conflict, msgs ...*models.Message) {
	t.Helper()
	ctx := context.Background()
	err := f.s.Transaction(ctx, func(ctx context.Context) error {
		return f.s.WriteBatch(ctx, store.Batch{Messages: msgs}, c)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// exec runs plain SQL, as the platform's own workers write.
func (f *countFixture) exec(t testing.TB, sql string, args ...any) {
	t.Helper()
	if err := f.s.DB().Exec(sql, args...).Error; err != nil {
		t.Fatal(err)
	}
}

// filters are the shapes a count is asked for: the environment, each channel, each
// subscriber (and one the environment does not have), each pair, and transaction ids.
func (f *countFixture) filters(transactionIDs ...string) []models.ListFilter {
	subscribers := []string{"nobody"}
	for id := range f.subs {
		subscribers = append(subscribers, id)
	}
	var out []models.ListFilter
	for _, ch := range append([]*models.ChannelType{nil}, channels()...) {
		out = append(out, models.ListFilter{Channel: ch})
		for _, sub := range subscribers {
			out = append(out, models.ListFilter{Channel: ch, SubscriberID: &sub})
		}
	}
	// The inbox's counts: unread, unseen, archived, and the bell's unread of what is
	// neither archived nor snoozed.
	no, yes := false, true
	states := []models.StateFilter{{Read: &no}, {Seen: &no}, {Archived: &yes}, {Read: &no, Archived: &no, Snoozed: &no}, {Snoozed: &yes}}
	for _, st := range states {
		inApp := models.ChannelInApp
		out = append(out, models.ListFilter{StateFilter: st}, models.ListFilter{Channel: &inApp, StateFilter: st})
		for _, sub := range subscribers {
			out = append(out, models.ListFilter{SubscriberID: &sub, StateFilter: st},
				models.ListFilter{Channel: &inApp, SubscriberID: &sub, StateFilter: st})
		}
	}
	if len(transactionIDs) > 0 {
		inApp := models.ChannelInApp
		out = append(out, models.ListFilter{TransactionIDs: transactionIDs},
			models.ListFilter{TransactionIDs: transactionIDs, StateFilter: states[0]},
			models.ListFilter{TransactionIDs: transactionIDs, SubscriberID: &subscribers[1]},
			models.ListFilter{TransactionIDs: transactionIDs, SubscriberID: &subscribers[1], Channel: &inApp},
			models.ListFilter{TransactionIDs: transactionIDs, SubscriberID: &subscribers[0]})
	}
	return out
}

func channels() []*models.ChannelType {
	var out []*models.ChannelType
	for _, ch := range []models.ChannelType{models.ChannelInApp, models.ChannelEmail, models.ChannelSMS, models.ChannelChat, models.ChannelPush} {
		out = append(out, &ch)
	}
	return out
}

// trueCount counts f's messages with COUNT over the rows themselves: what the counters
// must always equal.
func trueCount(t testing.TB, s *store.Store, environmentID string, f models.ListFilter) int {
	t.Helper()
	q := s.DB().Model(&models.Message{}).Where("environment_id = ?", environmentID)
	if f.SubscriberID != nil {
		q = q.Where("subscriber_id IN (SELECT id FROM subscribers WHERE environment_id = ? AND subscriber_id = ?)", environmentID, *f.SubscriberID)
	}
	if f.Channel != nil {
		q = q.Where("channel = ?", string(*f.Channel))
	}
	if len(f.TransactionIDs) > 0 {
		q = q.Where("transaction_id IN ?", f.TransactionIDs)
	}
	// Spelled apart from the store's conditions, so both would have to be wrong.
	for column, want := range map[string]*bool{"`read` <> 0": f.Read, "seen <> 0": f.Seen, "archived <> 0": f.Archived, "snoozed_until IS NOT NULL": f.Snoozed} {
		if want != nil {
			q = q.Where("("+column+") = ?", *want)
		}
	}
	q = bySeverity(q, f.Severities)
	var n int64
	if err := q.Count(&n).Error; err != nil {
		t.Fatal(err)
	}
	return int(n)
}

// bySeverity narrows q to the severities of set (none: any), spelled apart from the
// store's condition: any value but high, medium and low is none.
func bySeverity(q *gorm.DB, set models.SeveritySet) *gorm.DB {
	if set == 0 {
		return q
	}
	var names []string
	for _, s := range set.List() {
		names = append(names, string(s))
	}
	return q.Where("(CASE WHEN severity IN ('high', 'medium', 'low') THEN severity ELSE 'none' END) IN ?", names)
}

func describe(f models.ListFilter) string {
	s := "env"
	if f.SubscriberID != nil {
		s += " subscriber=" + *f.SubscriberID
	}
	if f.Channel != nil {
		s += " channel=" + string(*f.Channel)
	}
	if len(f.TransactionIDs) > 0 {
		s += fmt.Sprintf(" transactions=%v", f.TransactionIDs)
	}
	for name, v := range map[string]*bool{"read": f.Read, "seen": f.Seen, "archived": f.Archived, "snoozed": f.Snoozed} {
		if v != nil {
			s += fmt.Sprintf(" %s=%v", name, *v)
		}
	}
	if f.Severities != 0 {
		s += fmt.Sprintf(" severity=%v", f.Severities.List())
	}
	return s
}

// checkCounts fails for every filter whose count differs from COUNT over the messages,
// and, when log is given, for a count that took other than one statement.
func checkCounts(t *testing.T, step string, s *store.Store, log *dbtest.StatementLog, environmentID string, filters []models.ListFilter) {
	t.Helper()
	for _, f := range filters {
		if log != nil {
			log.Take()
		}
		got, err := store.CountMessages(s, context.Background(), environmentID, f)
		if err != nil {
			t.Fatalf("%s: count %s: %v", step, describe(f), err)
		}
		if log != nil {
			if n := len(log.Take()); n != 1 {
				t.Errorf("%s: count %s ran %d statements, want 1", step, describe(f), n)
			}
		}
		if want := trueCount(t, s, environmentID, f); got != want {
			t.Errorf("%s: count %s = %d, want %d", step, describe(f), got, want)
		}
	}
}

// Every filter's count is exact after every kind of write: batches (as import and seed
// write, skipping or replacing existing rows), GORM inserts, plain-SQL inserts, updates
// that move a message to another subscriber, channel or environment, marks, deletes and
// a rolled-back batch; each count is one statement.
func TestCountsExactAfterEveryWrite(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		a := newCountFixture(t, s, "a", "alice", "bob", "carol")
		b := newCountFixture(t, s, "b", "alice")
		log := dbtest.RecordStatements(t, s)
		var txids []string
		check := func(step string) {
			t.Helper()
			checkCounts(t, step, s, log, a.tn.Env.ID, a.filters(txids...))
			checkCounts(t, step, s, log, b.tn.Env.ID, b.filters())
			checkWorkflowCounters(t, s, a.tn.Env.ID)
			checkWorkflowCounters(t, s, b.tn.Env.ID)
			log.Take()
		}
		count := func(env string, f models.ListFilter) int {
			t.Helper()
			n, err := store.CountMessages(s, context.Background(), env, f)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		check("empty")

		inApp, email := models.ChannelInApp, models.ChannelEmail
		alice := "alice"
		var msgs []*models.Message
		for _, m := range []struct {
			sub string
			ch  models.ChannelType
			n   int
		}{{"alice", inApp, 3}, {"alice", email, 2}, {"bob", inApp, 1}, {"bob", models.ChannelSMS, 2}} {
			for range m.n {
				msgs = append(msgs, a.message(m.sub, m.ch))
			}
		}
		a.write(t, store.ConflictFail, msgs...)
		b.write(t, store.ConflictFail, b.message("alice", inApp), b.message("alice", inApp), b.message("alice", inApp), b.message("alice", inApp))
		txids = []string{msgs[0].TransactionID, msgs[3].TransactionID, msgs[6].TransactionID, "no-such-txn"}
		// The counts the fixture was written with, not only agreement with COUNT.
		for _, tt := range []struct {
			f    models.ListFilter
			want int
		}{
			{models.ListFilter{}, 8}, {models.ListFilter{Channel: &inApp}, 4}, {models.ListFilter{SubscriberID: &alice}, 5},
			{models.ListFilter{SubscriberID: &alice, Channel: &email}, 2},
			{models.ListFilter{TransactionIDs: txids}, 3}, {models.ListFilter{TransactionIDs: txids, SubscriberID: &alice}, 2},
		} {
			if got := count(a.tn.Env.ID, tt.f); got != tt.want {
				t.Errorf("count %s = %d, want %d", describe(tt.f), got, tt.want)
			}
		}
		if got := count(b.tn.Env.ID, models.ListFilter{SubscriberID: &alice}); got != 4 {
			t.Errorf("the other environment's alice has %d messages, want 4", got)
		}
		check("batches")

		a.write(t, store.ConflictSkip, msgs[0], a.message("carol", inApp))
		check("batch skipping a stored message")
		moved := *msgs[1]
		moved.SubscriberID, moved.Channel = a.subs["bob"].ID, email
		a.write(t, store.ConflictReplace, &moved, msgs[2])
		check("batch replacing a message with another subscriber and channel")

		a.tn.Message(t, a.subs["carol"], a.tn.Template(t, "t"), nil)
		raw := dbtest.RawMessage(t, s.DB(), a.tn.Env, a.subs["alice"].ID, nil)
		dbtest.RawMessage(t, s.DB(), a.tn.Env, a.subs["bob"].ID, nil)
		check("GORM and plain-SQL inserts")

		a.exec(t, "UPDATE messages SET subscriber_id = ?, channel = 'push' WHERE id = ?", a.subs["carol"].ID, raw)
		a.exec(t, "UPDATE messages SET channel = 'chat' WHERE id = ?", msgs[3].ID)
		move := "UPDATE messages SET environment_id = ?, subscriber_id = ? WHERE id = ?"
		if s.Vitess() {
			// vtgate refuses to change a row's shard key: the message stays where it is.
			if err := s.DB().Exec(move, b.tn.Env.ID, b.subs["alice"].ID, msgs[4].ID).Error; err == nil {
				t.Error("vtgate moved a message to another environment, want the change of its shard key refused")
			}
		} else {
			a.exec(t, move, b.tn.Env.ID, b.subs["alice"].ID, msgs[4].ID)
		}
		check("plain-SQL moves to another subscriber, channel and environment")

		// A writer may store what the API never does: an empty channel or subscriber. The
		// message still counts once in its environment.
		a.exec(t, "UPDATE messages SET channel = '' WHERE id = ?", msgs[5].ID)
		a.exec(t, "UPDATE messages SET subscriber_id = '' WHERE id = ?", msgs[6].ID)
		check("empty channel and subscriber")
		if got := count(a.tn.Env.ID, models.ListFilter{}); got != trueCount(t, s, a.tn.Env.ID, models.ListFilter{}) {
			t.Fatalf("a message with an empty channel or subscriber is counted %d in all", got)
		}

		if _, err := s.MarkMessageAction(context.Background(), a.tn.Env.ID, models.MarkAction{SubscriberID: "alice",
			MessageID: msgs[0].ID, Type: models.ButtonPrimary, Status: models.ActionDone}); err != nil {
			t.Fatal(err)
		}
		check("mark")

		a.exec(t, "DELETE FROM messages WHERE id = ?", msgs[0].ID)
		a.exec(t, "DELETE FROM messages WHERE environment_id = ? AND subscriber_id = ?", a.tn.Env.ID, a.subs["bob"].ID)
		check("plain-SQL deletes")

		failed := errors.New("the batch fails after writing")
		err := s.Transaction(context.Background(), func(ctx context.Context) error {
			if err := s.WriteBatch(ctx, store.Batch{Messages: []*models.Message{a.message("alice", inApp), a.message("bob", email)}}, store.ConflictFail); err != nil {
				return err
			}
			return failed
		})
		if !errors.Is(err, failed) {
			t.Fatalf("transaction: %v", err)
		}
		check("rolled-back batch")
	})
}

// Writers running at once on MySQL, each on its own connection and so its own counter
// shard: batches in transactions as import writes them, plain-SQL inserts, moves and
// deletes, and marks. Afterwards every filter's count equals COUNT over the messages.
func TestCountsExactUnderConcurrentWriters(t *testing.T) {
	t.Parallel()
	s := dbtest.Open(t, store.DialectMySQL)
	// Enough subscribers that the writers keep adding counter rows, as an import into a
	// new environment does: new rows are where concurrent writers' locks meet.
	var subs []string
	for i := range 200 {
		subs = append(subs, fmt.Sprintf("s%d", i))
	}
	f := newCountFixture(t, s, "busy", subs...)
	chans := channels()
	// Something to mark, move and delete from the start.
	var seedMsgs []*models.Message
	for i := range 60 {
		seedMsgs = append(seedMsgs, f.message(subs[i%len(subs)], *chans[i%len(chans)]))
	}
	f.write(t, store.ConflictFail, seedMsgs...)

	const writers, batches, batchSize = 4, 5, 500
	// Build every batch before starting, so the writers share nothing but the database.
	work := make([][][]*models.Message, writers)
	rng := rand.New(rand.NewPCG(1, 2))
	for w := range work {
		for range batches {
			var b []*models.Message
			for range batchSize {
				m := f.message(subs[rng.IntN(len(subs))], *chans[rng.IntN(len(chans))])
				m.TemplateID = fmt.Sprintf("workflow-%d", rng.IntN(3)) // the counters by workflow too
				b = append(b, m)
			}
			work[w] = append(work[w], b)
		}
	}

	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for w := range writers {
		wg.Go(func() {
			for _, b := range work[w] {
				if err := retryDeadlock(func() error {
					return s.Transaction(ctx, func(ctx context.Context) error {
						return s.WriteBatch(ctx, store.Batch{Messages: b}, store.ConflictFail)
					})
				}); err != nil {
					errs <- fmt.Errorf("writer %d: %w", w, err)
					return
				}
			}
		})
	}
	wg.Go(func() { // marks, of the seeded messages the plain-SQL writer neither moves nor deletes
		for i := range 100 {
			j := (i * 4) % len(seedMsgs)
			m, sub := seedMsgs[j], subs[j%len(subs)]
			if _, err := s.MarkMessageAction(ctx, f.tn.Env.ID, models.MarkAction{SubscriberID: sub, MessageID: m.ID,
				Type: models.ButtonPrimary, Status: models.ActionDone}); err != nil {
				errs <- fmt.Errorf("mark %s: %w", m.ID, err)
				return
			}
		}
	})
	wg.Go(func() { // another writer's plain SQL: inserts, moves (indexes 2 mod 4), deletes (1 mod 4)
		for i := range 100 {
			var err error
			switch i % 4 {
			case 0, 1:
				dbtest.RawMessage(t, s.DB(), f.tn.Env, f.subs[subs[i%len(subs)]].ID, nil)
			case 2:
				err = retryDeadlock(func() error {
					return s.DB().Exec("UPDATE messages SET subscriber_id = ?, channel = ? WHERE id = ?",
						f.subs[subs[(i+1)%len(subs)]].ID, string(*chans[i%len(chans)]), seedMsgs[i%len(seedMsgs)].ID).Error
				})
			case 3:
				err = retryDeadlock(func() error {
					return s.DB().Exec("DELETE FROM messages WHERE id = ?", seedMsgs[(i*7)%len(seedMsgs)].ID).Error
				})
			}
			if err != nil {
				errs <- fmt.Errorf("plain SQL %d: %w", i, err)
				return
			}
		}
	})
	wg.Wait()
	close(errs)
	t.Logf("deadlocks retried: %d", deadlocks.Load())
	for err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		return
	}

	if got, want := trueCount(t, s, f.tn.Env.ID, models.ListFilter{}), 60+writers*batches*batchSize+50-trueDeleted(seedMsgs, 100); got != want {
		t.Fatalf("%d messages stored, want %d: some writes were lost", got, want)
	}
	checkCounts(t, "after concurrent writers", s, nil, f.tn.Env.ID, f.filters())
	checkWorkflowCounters(t, s, f.tn.Env.ID)
	var shards int64
	if err := s.DB().Raw("SELECT COUNT(DISTINCT shard) FROM message_counts").Scan(&shards).Error; err != nil {
		t.Fatal(err)
	}
	if shards < 2 {
		t.Errorf("the concurrent writers counted on %d shard(s), want several: each connection has its own", shards)
	}
	if err := s.DB().Raw("SELECT COUNT(DISTINCT shard) FROM message_workflow_counts").Scan(&shards).Error; err != nil {
		t.Fatal(err)
	}
	if shards < 2 {
		t.Errorf("the concurrent writers counted by workflow on %d shard(s), want several", shards)
	}
}

// The seed's two writers, each committing 1,000-message batches on its own connection,
// into an environment of 2,000 subscribers, so every batch adds counter rows: no writer
// fails and the counts are exact. (With the shard last in the counters' primary key,
// `server seed` of this shape deadlocked within seconds on MariaDB: migration 6.)
func TestCountsSeedWithoutDeadlock(t *testing.T) {
	t.Parallel()
	s := dbtest.Open(t, store.DialectMySQL)
	stats := dbtest.Seed(t, s, seed.Options{Seed: 1, EnvironmentID: "650000000000000000000c01",
		OrganizationID: "650000000000000000000c00", Messages: 20_000, Subscribers: 2_000, Templates: 5})
	env := stats.EnvironmentID
	var filters []models.ListFilter
	for _, ch := range append([]*models.ChannelType{nil}, channels()...) {
		filters = append(filters, models.ListFilter{Channel: ch})
		for _, sub := range []string{"nobody", "user-1-00001", "user-1-00002"} {
			filters = append(filters, models.ListFilter{Channel: ch, SubscriberID: &sub})
		}
	}
	checkCounts(t, "after the seed", s, nil, env, filters)
	checkWorkflowCounters(t, s, env)
	if n := trueCount(t, s, env, models.ListFilter{}); n != 20_000 {
		t.Fatalf("the seed stored %d messages, want 20000", n)
	}
}

// trueDeleted is how many distinct seeded messages the plain-SQL writer of
// TestCountsExactUnderConcurrentWriters deletes in n steps.
func trueDeleted(seedMsgs []*models.Message, n int) int {
	deleted := map[int]bool{}
	for i := range n {
		if i%4 == 3 {
			deleted[(i*7)%len(seedMsgs)] = true
		}
	}
	return len(deleted)
}

// deadlocks counts the transactions MySQL chose as a deadlock's victim in
// TestCountsExactUnderConcurrentWriters.
var deadlocks atomic.Int64

// retryDeadlock runs f again while MySQL chose it as a deadlock's victim (1213), as a
// writer of concurrent transactions must.
func retryDeadlock(f func() error) error {
	for {
		err := f()
		var myErr *mysqldriver.MySQLError
		if !errors.As(err, &myErr) || myErr.Number != 1213 {
			return err
		}
		deadlocks.Add(1)
	}
}

// A database with messages before migration 00006 has them counted by it: the counters
// start from COUNT over the stored rows, plain-SQL ones included, and triggers carry on
// from there.
func TestCountMigrationCountsStoredMessages(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		f := newCountFixture(t, s, "old", "alice", "bob")
		other := newCountFixture(t, s, "other", "alice")
		f.write(t, store.ConflictFail, f.message("alice", models.ChannelInApp), f.message("alice", models.ChannelEmail),
			f.message("bob", models.ChannelInApp), f.message("bob", models.ChannelInApp))
		other.write(t, store.ConflictFail, other.message("alice", models.ChannelSMS))
		dbtest.RawMessage(t, s.DB(), f.tn.Env, f.subs["alice"].ID, nil)
		odd := f.message("bob", models.ChannelPush)
		f.write(t, store.ConflictFail, odd)
		f.exec(t, "UPDATE messages SET channel = '' WHERE id = ?", odd.ID)
		// Back to before the counters: the messages stay, their counters go.
		for {
			m, err := s.MigrateDown(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if m.Version == 6 {
				break
			}
		}

		applied, err := s.MigrateUp(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(applied) == 0 || applied[0] != (migrate.Migration{Version: 6, Name: "message_counts"}) {
			t.Fatalf("up applied %v, want 6 message_counts first", applied)
		}
		var n int64
		if err := s.DB().Raw("SELECT COALESCE(SUM(n), 0) FROM message_counts WHERE environment_id = ? AND subscriber_id = '' AND channel = ''", f.tn.Env.ID).Scan(&n).Error; err != nil || n != 6 {
			t.Fatalf("after the migration the environment's counter holds %d (%v), want its 6 messages", n, err)
		}
		checkCounts(t, "backfilled", s, nil, f.tn.Env.ID, f.filters())
		checkCounts(t, "backfilled", s, nil, other.tn.Env.ID, other.filters())
		checkWorkflowCounters(t, s, f.tn.Env.ID)
		checkWorkflowCounters(t, s, other.tn.Env.ID)

		f.write(t, store.ConflictFail, f.message("alice", models.ChannelInApp))
		f.exec(t, "DELETE FROM messages WHERE id = ?", odd.ID)
		checkCounts(t, "written after the migration", s, nil, f.tn.Env.ID, f.filters())
		checkWorkflowCounters(t, s, f.tn.Env.ID)
	})
}

// A count request's filters (workflows, creation ranges, states, the counters' own
// shapes) are answered in at most two statements whatever their number, each count
// equal to COUNT over the rows of its filter alone.
func TestCountEachOneStatement(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		f := newCountFixture(t, s, "each", "alice", "bob")
		templates := []*models.Template{f.tn.Template(t, "x"), f.tn.Template(t, "y"), f.tn.Template(t, "z")}
		rng := rand.New(rand.NewPCG(30, 1))
		var msgs []*models.Message
		for i := range 240 {
			sub, ch := "alice", models.ChannelInApp
			switch i % 6 {
			case 4:
				sub = "bob"
			case 5:
				ch = models.ChannelEmail
			}
			m := f.message(sub, ch)
			m.TemplateID = templates[rng.IntN(len(templates))].ID
			m.Read, m.Seen, m.Archived = rng.IntN(2) == 0, rng.IntN(2) == 0, rng.IntN(5) == 0
			if rng.IntN(6) == 0 {
				until := models.NewTime(dbtest.Base.Add(time.Hour))
				m.SnoozedUntil = &until
			}
			msgs = append(msgs, m)
		}
		f.write(t, store.ConflictFail, msgs...)
		at := func(n int) *models.Time {
			tm := models.NewTime(dbtest.Base.Add(time.Duration(n) * time.Second))
			return &tm
		}
		maybe := func() *bool {
			if rng.IntN(3) == 0 {
				return nil
			}
			return models.Bool(rng.IntN(2) == 0)
		}
		var filters []models.ListFilter
		for i := range 30 {
			var q models.ListFilter
			q.StateFilter = models.StateFilter{Read: maybe(), Seen: maybe(), Archived: maybe(), Snoozed: maybe()}
			switch i % 5 {
			case 0: // the counters' own shape
			case 1:
				q.TemplateIDs = []string{templates[rng.IntN(3)].ID}
			case 2:
				q.TemplateIDs = []string{templates[0].ID, templates[2].ID, "no-such-template"}
				q.CreatedFrom = at(rng.IntN(240))
			case 3:
				q.CreatedFrom = at(rng.IntN(200))
				q.CreatedTo = at(120 + rng.IntN(120))
			case 4:
				q.CreatedTo = at(rng.IntN(240))
			}
			filters = append(filters, q)
		}
		inApp := models.ChannelInApp
		alice, nobody := "alice", "nobody"
		log := dbtest.RecordStatements(t, s)
		for _, scope := range []struct {
			subscriber *string
			channel    *models.ChannelType
		}{{&alice, &inApp}, {&alice, nil}, {nil, &inApp}, {&nobody, &inApp}} {
			log.Take()
			got, err := s.CountEach(context.Background(), f.tn.Env.ID, scope.subscriber, scope.channel, filters)
			if err != nil {
				t.Fatal(err)
			}
			if n := len(log.Take()); n > 2 {
				t.Errorf("%d filters counted in %d statements, want at most 2", len(filters), n)
			}
			if scope.subscriber == &alice && slices.Max(got) == 0 {
				t.Fatalf("every count of alice is 0: %v", got)
			}
			for i, q := range filters {
				q.SubscriberID, q.Channel = scope.subscriber, scope.channel
				if want := trueCountOf(t, s, f.tn.Env.ID, q); got[i] != want {
					t.Errorf("filter %d %s templates=%d from=%v to=%v: %d, want %d", i, describe(q), len(q.TemplateIDs), q.CreatedFrom, q.CreatedTo, got[i], want)
				}
			}
		}
		// Only the rows' filters: one statement.
		log.Take()
		if _, err := s.CountEach(context.Background(), f.tn.Env.ID, &alice, &inApp, filters[1:2]); err != nil {
			t.Fatal(err)
		}
		if n := len(log.Take()); n != 1 {
			t.Errorf("one filter of workflows counted in %d statements, want 1", n)
		}
	})
}

// trueCountOf is trueCount with the filters of workflows and creation ranges, each
// filter counted on its own.
func trueCountOf(t testing.TB, s *store.Store, environmentID string, f models.ListFilter) int {
	t.Helper()
	q := s.DB().Model(&models.Message{}).Where("environment_id = ?", environmentID)
	if f.SubscriberID != nil {
		q = q.Where("subscriber_id IN (SELECT id FROM subscribers WHERE environment_id = ? AND subscriber_id = ?)", environmentID, *f.SubscriberID)
	}
	if f.Channel != nil {
		q = q.Where("channel = ?", string(*f.Channel))
	}
	if len(f.TemplateIDs) > 0 {
		q = q.Where("template_id IN ?", f.TemplateIDs)
	}
	if f.CreatedFrom != nil {
		q = q.Where("NOT (created_at < ?)", *f.CreatedFrom)
	}
	if f.CreatedTo != nil {
		q = q.Where("NOT (created_at > ?)", *f.CreatedTo)
	}
	for column, want := range map[string]*bool{"`read` <> 0": f.Read, "seen <> 0": f.Seen, "archived <> 0": f.Archived, "snoozed_until IS NOT NULL": f.Snoozed} {
		if want != nil {
			q = q.Where("("+column+") = ?", *want)
		}
	}
	q = bySeverity(q, f.Severities)
	var n int64
	if err := q.Count(&n).Error; err != nil {
		t.Fatal(err)
	}
	return int(n)
}
