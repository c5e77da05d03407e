// Package seed generates synthetic, realistic data (subscribers, workflow templates and
// messages over every channel) for demos and benchmarks, and writes it through the
// store's batch writer.
package seed

import (
	"cmp"
	"context"
	"sync"
	"time"

	"messages/models"
	"messages/models/store"
)

// Defaults of Options.
const (
	DefaultSubscribers = 100
	DefaultTemplates   = 20
)

// Base is the fixed clock of seeded data: messages spread over the year after it,
// subscribers and templates are created in the two years before.
var Base = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// year is the span of seeded messages' createdAt.
const year = 365 * 24 * time.Hour

// messagesPerBatch is how many messages one write carries, each batch its own commit.
const messagesPerBatch = 1000

// Options say what Generate writes. Zero Subscribers and Templates take the defaults
// (zero Messages is none); an empty EnvironmentID is derived from Seed, an empty
// OrganizationID from the environment.
type Options struct {
	Seed                          int64
	EnvironmentID, OrganizationID string
	Messages, Subscribers         int
	Templates                     int
	// Progress, when set, is called after each batch with the messages written so far.
	Progress func(done int)
}

// Stats says where Generate wrote and how many records it generated.
type Stats struct {
	EnvironmentID, OrganizationID    string
	Messages, Subscribers, Templates int
}

// Generate fills an environment with synthetic data. The rows depend only on the options
// and on how many messages the environment already has: the same options into two fresh
// databases give identical rows.
//
// Ids are ObjectId-shaped: four bytes of the record's creation second, then 64 bits from a
// PCG stream keyed by (seed, environment) for subscribers and templates, so seeding again
// reuses them (inserted only if missing), and by (seed, environment, messages already in
// the environment) for messages, so seeding again adds new messages whose ids do not
// collide with earlier runs, other seeds or other environments.
func Generate(ctx context.Context, s *store.Store, o Options) (Stats, error) {
	if o.Messages < 0 || o.Subscribers < 0 || o.Templates < 0 {
		return Stats{}, models.Errorf(models.EINVALID, "seed counts must not be negative")
	}
	o.Subscribers = cmp.Or(o.Subscribers, DefaultSubscribers)
	o.Templates = cmp.Or(o.Templates, DefaultTemplates)
	if o.EnvironmentID == "" {
		o.EnvironmentID = objectID(Base, stream(o.Seed, "", 1))
	}
	if o.OrganizationID == "" {
		o.OrganizationID = objectID(Base, stream(o.Seed, o.EnvironmentID, 2))
	}
	env, err := s.EnsureEnvironment(ctx, o.EnvironmentID, o.OrganizationID, "Seeded data")
	if err != nil {
		return Stats{}, err
	}
	stats := Stats{EnvironmentID: env.ID, OrganizationID: env.OrganizationID, Subscribers: o.Subscribers, Templates: o.Templates}

	subs := subscribers(stream(o.Seed, env.ID, 3), env, o.Seed, o.Subscribers)
	tpls := templates(stream(o.Seed, env.ID, 4), env, o.Templates)
	rows := make([]*models.Template, len(tpls))
	for i, t := range tpls {
		rows[i] = t.Template
	}
	// Subscribers and templates of an earlier run of the same seed are kept as they are.
	err = s.Transaction(ctx, func(ctx context.Context) error {
		return s.WriteBatch(ctx, store.Batch{Subscribers: subs, Templates: rows}, store.ConflictSkip)
	})
	if err != nil {
		return stats, err
	}
	if err := resolveSubscriberIDs(ctx, s, env.ID, subs); err != nil {
		return stats, err
	}

	existing, err := s.MessageCount(ctx, env.ID)
	if err != nil {
		return stats, err
	}
	feeds := stream(o.Seed, env.ID, 6)
	gen := &messageGen{r: stream(o.Seed, env.ID, 7+uint64(existing)<<8), env: env, subs: subs, tpls: tpls,
		feeds: []string{objectID(Base, feeds), objectID(Base, feeds)}, total: o.Messages}
	stats.Messages, err = writeMessages(ctx, s, gen, o.Messages, o.Progress)
	return stats, err
}

// resolveSubscriberIDs points the generated subscribers at the rows the environment holds
// for their subscriberIds, in case one existed before (the insert then skipped it).
func resolveSubscriberIDs(ctx context.Context, s *store.Store, environmentID string, subs []*models.Subscriber) error {
	ext := make([]string, len(subs))
	for i, sub := range subs {
		ext[i] = sub.SubscriberID
	}
	stored, err := s.SubscriberIDs(ctx, environmentID, ext)
	if err != nil {
		return err
	}
	for _, sub := range subs {
		if id, ok := stored[sub.SubscriberID]; ok {
			sub.ID = id
		}
	}
	return nil
}

// writeMessages writes n generated messages in batches, each its own commit. One
// goroutine generates batches; on MySQL two writers take turns, so one converts and sends
// a batch while the server stores the other's.
func writeMessages(ctx context.Context, s *store.Store, gen *messageGen, n int, progress func(int)) (int, error) {
	writers := 1
	if s.Dialect() == store.DialectMySQL {
		writers = 2
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	batches := make(chan []*models.Message, writers)
	go func() {
		defer close(batches)
		for done := 0; done < n; {
			b := make([]*models.Message, min(messagesPerBatch, n-done))
			for i := range b {
				b[i] = gen.next()
			}
			done += len(b)
			select {
			case batches <- b:
			case <-ctx.Done():
				return
			}
		}
	}()

	written, failed := make(chan int), make(chan error, writers)
	var wg sync.WaitGroup
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range batches {
				if err := s.WriteBatch(ctx, store.Batch{Messages: b}, store.ConflictFail); err != nil {
					failed <- err
					cancel()
					return
				}
				written <- len(b)
			}
		}()
	}
	go func() { wg.Wait(); close(written) }()
	done := 0
	for k := range written {
		done += k
		if progress != nil {
			progress(done)
		}
	}
	select {
	case err := <-failed:
		return done, err
	default:
		return done, nil
	}
}
