package main

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
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

// deleteAll sends POST /v1/inbox/notifications/delete as @novu/js's deleteAll() does
// with no tags, and returns the reply and, when it is 200 or 202 with the documented
// body, the answer in markAllMessages' terms.
func deleteAll(t *testing.T, base, token string) (reply, *marked) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+"/v1/inbox/notifications/delete", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	start := time.Now()
	res, err := faultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	r := reply{status: res.StatusCode, header: res.Header, body: b, took: time.Since(start)}
	var out struct {
		Data *struct {
			Deleted *int
			JobID   *string
		}
	}
	if json.Unmarshal(b, &out) != nil || out.Data == nil || out.Data.Deleted == nil {
		return r, nil
	}
	switch {
	case res.StatusCode == http.StatusOK && out.Data.JobID == nil:
		return r, &marked{Changed: *out.Data.Deleted, Done: true}
	case res.StatusCode == http.StatusAccepted && out.Data.JobID != nil:
		return r, &marked{Changed: *out.Data.Deleted, JobID: out.Data.JobID}
	}
	return r, nil
}
