package changefeed_test

import (
	"context"
	"testing"

	"messages/models"
	"messages/models/changefeed"
	"messages/models/dbtest"
	"messages/models/store"
)

// A deletion reaches the subscriptions it matches, whoever deleted: another program's
// plain SQL DELETE and the store's delete alike. A client resuming from a cursor taken
// before a deletion is told of it.
func TestFeedSeesDeletions(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		w := newWorld(t, s, changefeed.Options{})
		all, alice, bob := w.subscribe(t, nil, nil), w.subscribe(t, ptr("alice"), nil), w.subscribe(t, ptr("bob"), nil)
		raw := w.insertRaw(t, w.alice, nil)
		var before changefeed.Resume
		for _, sub := range []*changefeed.Subscription{all, alice} {
			before = next(t, sub).Resume
		}

		if err := s.DB().Exec("DELETE FROM messages WHERE id = ?", raw).Error; err != nil {
			t.Fatal(err)
		}
		for _, sub := range []*changefeed.Subscription{all, alice} {
			e := next(t, sub)
			if !e.Change.Deleted || e.Change.Created || e.Change.Message.ID != raw ||
				e.Change.Message.Subscriber == nil || e.Change.Message.Subscriber.SubscriberID != "alice" {
				t.Fatalf("plain SQL DELETE: %+v", e.Change)
			}
		}
		quiet(t, bob, 300e6)

		// The store's delete, by filter.
		second := w.insertRaw(t, w.alice, nil)
		next(t, alice)
		out, err := s.DeleteMessages(context.Background(), w.tn.Env.ID, models.DeleteTarget{SubscriberID: ptr("alice")})
		if err != nil || out.Deleted != 2 { // the world's first message and second
			t.Fatalf("delete of alice's messages: %+v, %v", out, err)
		}
		got := map[string]bool{}
		for range 2 {
			e := next(t, alice)
			if !e.Change.Deleted {
				t.Fatalf("after the delete: %+v", e.Change)
			}
			got[e.Change.Message.ID] = true
		}
		if !got[second] {
			t.Fatalf("deleted events %v, want %s among them", got, second)
		}

		// Resuming from before the first deletion delivers it, and the later ones.
		resumed := w.subscribe(t, ptr("alice"), &before)
		e := next(t, resumed)
		if !e.Change.Deleted || e.Change.Message.ID != raw {
			t.Fatalf("resumed from before the deletion: %+v", e.Change)
		}
	})
}
