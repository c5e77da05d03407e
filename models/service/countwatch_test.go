package service_test

import (
	"context"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"messages/models"
	"messages/models/changefeed"
	"messages/models/dbtest"
	"messages/models/service"
	"messages/models/store"
)

// countReads counts the statements that read the counters, from the store's spans.
type countReads struct{ exp *tracetest.InMemoryExporter }

func traceCountReads(t *testing.T, s *store.Store) countReads {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	if err := s.Trace(sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))); err != nil {
		t.Fatal(err)
	}
	return countReads{exp}
}

func (c countReads) n() int {
	n := 0
	for _, sp := range c.exp.GetSpans() {
		for _, kv := range sp.Attributes {
			if kv.Key == "db.query.text" && strings.Contains(kv.Value.AsString(), "FROM message_counts") {
				n++
			}
		}
	}
	return n
}

// startFeed runs a change feed over s until the test ends.
func startFeed(t *testing.T, s *store.Store) *changefeed.Feed {
	t.Helper()
	feed := changefeed.New(s, changefeed.Options{Interval: 10 * time.Millisecond, RestInterval: 10 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = feed.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	select {
	case <-feed.Started():
	case <-time.After(30 * time.Second):
		t.Fatal("the feed did not start")
	}
	return feed
}

// Many streams of one subscriber's counts share one read of them per batch of changes:
// 1,000 messageCounts subscriptions cost what one does. Each stream still ends with the
// final counts, a stream whose client reads nothing until the end included, and an
// unchanged count is not sent again. When the last stream leaves, nothing of the watch
// is left: no goroutine, no feed subscription.
func TestCountChangesShareOneRead(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		reads := traceCountReads(t, s)
		tn := dbtest.NewTenant(t, s, "fanout")
		ada, tpl := tn.Subscriber(t, "ada"), tn.Template(t, "fanout")
		var ids []string
		for range 4 {
			ids = append(ids, tn.Message(t, ada, tpl, nil).ID)
		}
		feed := startFeed(t, s)
		svc := service.New(service.Options{Store: s, Feed: feed})
		baseline := runtime.NumGoroutine()
		ctx, cancel := context.WithCancel(tn.Context())
		defer cancel()
		inApp := models.ChannelInApp
		const streams = 1000
		before := reads.n()
		outs := make([]<-chan *models.Counts, streams)
		for i := range outs {
			sub := "ada"
			out, err := svc.CountChanges(ctx, &sub, &inApp)
			if err != nil {
				t.Fatal(err)
			}
			outs[i] = out
		}
		if n := reads.n() - before; n > 2 {
			t.Errorf("%d streams opened with %d reads of the counts, want 1 (2 if a read was asked while the first ran)", streams, n)
		}
		if n := svc.CountWatches(); n != 1 {
			t.Errorf("%d watches for one subscriber's counts, want 1", n)
		}
		// Every stream but the last reads as changes come; the last reads nothing until
		// the end.
		var wg sync.WaitGroup
		last := make([]models.StateCounts, streams)
		sent := make([]int, streams)
		unread := make([]atomic.Int64, streams)
		for i, out := range outs[:streams-1] {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for c := range out {
					if c.Err != nil {
						t.Errorf("stream %d: %v", i, c.Err)
						return
					}
					last[i] = c.States
					sent[i]++
					unread[i].Store(int64(c.States.Count(models.Unread())))
				}
			}()
		}
		const changes = 25
		before = reads.n()
		for i := range changes {
			read := i%2 == 0
			if _, err := svc.StateChange(ctx, models.StateTarget{SubscriberID: "ada", MessageIDs: ids[:1]},
				models.StateChange{Read: &read}); err != nil {
				t.Fatal(err)
			}
			want := int64(4)
			if read {
				want = 3
			}
			// Every stream has the change before the next one is made: each is a batch.
			waitFor(t, "every stream to see the change", func() bool {
				for i := range streams - 1 {
					if unread[i].Load() != want {
						return false
					}
				}
				return true
			})
		}
		if n := reads.n() - before; n > changes {
			t.Errorf("%d changes to %d streams of one subscriber's counts read them %d times, want at most one read per change", changes, streams, n)
		} else {
			t.Logf("%d changes, %d streams: %d reads of the counts", changes, streams, n)
		}
		// The final counts reach every stream, the one that read nothing meanwhile too.
		final, err := svc.StateCounts(ctx, ptr("ada"), &inApp)
		if err != nil {
			t.Fatal(err)
		}
		deadline := time.After(30 * time.Second)
		var slow models.StateCounts
	slowReader:
		for {
			select {
			case c := <-outs[streams-1]:
				slow = c.States
				if slow == final {
					break slowReader
				}
			case <-deadline:
				t.Fatalf("the stream that read nothing until the end has %v, want %v", slow, final)
			}
		}
		cancel()
		wg.Wait()
		for i := range streams - 1 {
			if last[i] != final {
				t.Fatalf("stream %d ended with %v, want %v", i, last[i], final)
			}
			// The first value and one per change at most: an unchanged count is not sent.
			if sent[i] > changes+1 {
				t.Fatalf("stream %d was sent %d values for %d changes", i, sent[i], changes)
			}
		}
		waitFor(t, "the watch and its goroutines to end", func() bool {
			return svc.CountWatches() == 0 && feed.Subscriptions() == 0 && runtime.NumGoroutine() <= baseline+2
		})
	})
}

func ptr(s string) *string { return &s }

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
