package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"messages/graph/gqlclient"
	"messages/models/dbtest"
)

// countsSubscription is a live badge: alice's unread in-app messages.
const countsSubscription = `subscription($s: String) { messageCounts(subscriberId: $s, channel: in_app) { unread } }`

// Many messageCounts subscriptions of one subscriber, over several sockets, follow one
// subscription to the change feed (models/service's test counts the reads: one per
// change), and each gets the new count after a mark.
func TestMessageCountsSharedOverSockets(t *testing.T) {
	for _, dialect := range dbtest.Dialects {
		t.Run(dialect, func(t *testing.T) {
			w := newSessionWorld(t, dialect)
			// Two tabs of alice's inbox follow the same counts as the subscriptions.
			tabs := []*inboxClient{mustDialInbox(t, w.srv.base, w.token(t, "alice")), mustDialInbox(t, w.srv.base, w.token(t, "alice"))}
			const sockets, perSocket = 2, 30
			var subs []*gqlclient.Subscription
			for range sockets {
				conn := dialEvents(t, w.srv.base, "ApiKey "+w.key)
				for range perSocket {
					s, err := conn.Subscribe(context.Background(), gqlclient.Request{Query: countsSubscription, Variables: map[string]any{"s": "alice"}}, 8)
					if err != nil {
						t.Fatal(err)
					}
					subs = append(subs, s)
				}
			}
			unread := func(s *gqlclient.Subscription) int {
				t.Helper()
				select {
				case r, ok := <-s.Results():
					if !ok || len(r.Errors) > 0 {
						t.Fatalf("counts stream ended: %v %v", r.Errors, s.Err())
					}
					var d struct{ MessageCounts struct{ Unread int } }
					if err := json.Unmarshal(r.Data, &d); err != nil {
						t.Fatal(err)
					}
					return d.MessageCounts.Unread
				case <-time.After(10 * time.Second):
					t.Fatal("no counts within 10 s")
				}
				return -1
			}
			for i, s := range subs {
				if n := unread(s); n != 2 {
					t.Fatalf("subscription %d starts at unread %d, want 2", i, n)
				}
			}
			// One subscription to the change feed serves every count of alice's in-app
			// messages; each tab has one more, for its notifications.
			if _, metrics := get(t, w.srv.base+"/metrics", ""); !regexp.MustCompile(`events_subscriptions 3\n`).Match(metrics) {
				t.Errorf("/metrics: want events_subscriptions 3 for %d counts subscriptions and 2 inbox sockets of one subscriber", len(subs))
			}
			q := fmt.Sprintf(`mutation { markMessages(subscriberId: "alice", messageIds: [%q], read: true) { _id } }`, w.alice1.ID)
			if code, body := postGraphQL(t, w.srv.base, w.key, q); code != http.StatusOK || strings.Contains(string(body), `"errors"`) {
				t.Fatalf("mark: %d %s", code, body)
			}
			for i, s := range subs {
				if n := unread(s); n != 1 {
					t.Fatalf("subscription %d after the mark: unread %d, want 1", i, n)
				}
			}
			for i, tab := range tabs {
				for {
					e := tab.next(t, 10*time.Second)
					if e.Event != "unread_count_changed" {
						continue
					}
					if e.Data.Counts == nil || e.Data.Counts.Total != 1 {
						t.Fatalf("tab %d: %s, want the badge at 1", i, e.raw)
					}
					break
				}
			}
		})
	}
}
