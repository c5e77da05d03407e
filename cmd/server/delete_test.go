package main

import (
	"net/http"
	"testing"
	"time"

	"messages/models/dbtest"
)

// A deletion reaches a live GraphQL subscription as a deleted event and the inbox socket
// as counts, whoever deleted: another program's plain SQL DELETE, the SDK's /v1 delete,
// and @novu/js's notification.delete(); each count equals COUNT(*) over the rows.
func TestDeletionsLive(t *testing.T) {
	for _, dialect := range dbtest.Dialects {
		t.Run(dialect, func(t *testing.T) {
			w := newSessionWorld(t, dialect)
			aliceRow := w.alice1.SubscriberID
			token := w.token(t, "alice")
			socket := mustDialInbox(t, w.srv.base, token)
			events := subscribeEvents(t, dialEvents(t, w.srv.base, "ApiKey "+w.key), map[string]any{"s": "alice"})
			deleted := func(id string) {
				t.Helper()
				if e := readEvent(t, events, 5*time.Second); e.Kind != "deleted" || e.ID != id || e.Subscriber != "alice" {
					t.Fatalf("want the deletion of %s, got %+v", id, e)
				}
				unread, unseen := unreadInApp(t, w, aliceRow)
				socket.expectCounts(t, unread, unseen)
			}

			if err := w.store.DB().Exec("DELETE FROM messages WHERE id = ?", w.alice1.ID).Error; err != nil {
				t.Fatal(err)
			}
			deleted(w.alice1.ID)

			r := w.call(t, http.MethodDelete, "/v1/messages/"+w.alice2.ID, "ApiKey "+w.key, "")
			if r.status != http.StatusOK {
				t.Fatalf("DELETE /v1/messages: %d %s", r.status, r.body)
			}
			deleted(w.alice2.ID)

			raw := dbtest.RawMessage(t, w.store.DB(), w.env, aliceRow, nil)
			if e := readEvent(t, events, 5*time.Second); e.Kind != "created" || e.ID != raw {
				t.Fatalf("raw insert: %+v", e)
			}
			if e := socket.next(t, 3*time.Second); e.Event != "notification_received" {
				t.Fatalf("raw insert on the socket: %s", e.raw)
			}
			socket.expectCounts(t, 1, 1)
			r = w.call(t, http.MethodDelete, "/v1/inbox/notifications/"+raw+"/delete", "Bearer "+token, "")
			if r.status != http.StatusNoContent {
				t.Fatalf("notification.delete(): %d %s", r.status, r.body)
			}
			deleted(raw)
			if unread, _ := unreadInApp(t, w, aliceRow); unread != 0 {
				t.Fatalf("alice has %d unread after deleting all three", unread)
			}
		})
	}
}
