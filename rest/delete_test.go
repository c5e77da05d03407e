package rest_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"

	"messages/models"
	"messages/models/dbtest"
	"messages/models/store"
)

// The SDK's messages.delete and messages.deleteByTransactionId on the fixture (tenant a:
// m1..m7, tenant b: b1 of transaction t1): each answers as the platform does, removes
// what it names from the list, and refuses another tenant's message, unknown ids and a
// channel the SDK has not. A retry with the same Idempotency-Key replays the first answer.
func TestDeleteMessages(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		in := newInbox(t, s)
		api := newAPI(t, s)
		key := "ApiKey " + in.a.Key
		listed := func() []string {
			t.Helper()
			return list(t, api, in.a.Key, "/v1/messages?limit=100", in.names).Data
		}

		res := api.do(t, http.MethodDelete, "/v1/messages/"+in.msgs["m2"].ID, key, nil, nil)
		if res.status != http.StatusOK || string(res.body) != `{"data":{"acknowledged":true,"status":"deleted"}}`+"\n" {
			t.Fatalf("delete m2: %d %s", res.status, res.body)
		}
		if diff := cmp.Diff([]string{"m7", "m6", "m5", "m4", "m3", "m1"}, listed()); diff != "" {
			t.Errorf("list after deleting m2 (-want +got):\n%s", diff)
		}
		for _, tt := range []struct{ name, uri, path string }{
			{"delete404Again", "/v1/messages/" + in.msgs["m2"].ID, ""},
			{"delete404OtherTenant", "/v1/messages/" + in.msgs["b1"].ID, ""},
			{"delete404Unknown", "/v1/messages/" + models.NewID(clock), ""},
			{"delete404Malformed", "/v1/messages/not-an-id", ""},
			{"deleteTransaction404Unknown", "/v1/messages/transaction/nope", ""},
		} {
			t.Run(tt.name, func(t *testing.T) {
				errorBody(t, api.do(t, http.MethodDelete, tt.uri, key, nil, nil), http.StatusNotFound, tt.uri)
			})
		}
		bad := "/v1/messages/transaction/t1?channel=fax"
		fieldError(t, errorBody(t, api.do(t, http.MethodDelete, bad, key, nil, nil), http.StatusUnprocessableEntity, bad), "channel", "fax")
		bad = "/v1/messages/transaction/t1?chanel=in_app"
		errorBody(t, api.do(t, http.MethodDelete, bad, key, nil, nil), http.StatusUnprocessableEntity, bad)

		// Transaction t1 has m1 (alice, in_app) and m3 (bob, in_app) here, b1 in tenant b.
		if res := api.do(t, http.MethodDelete, "/v1/messages/transaction/t1?channel=email", key, nil, nil); res.status != http.StatusNotFound {
			t.Fatalf("delete of t1's email messages (none): %d %s", res.status, res.body)
		}
		res = api.do(t, http.MethodDelete, "/v1/messages/transaction/t1?channel=in_app", key, nil, nil)
		if res.status != http.StatusNoContent || len(res.body) != 0 {
			t.Fatalf("delete t1: %d %s", res.status, res.body)
		}
		if diff := cmp.Diff([]string{"m7", "m6", "m5", "m4"}, listed()); diff != "" {
			t.Errorf("list after deleting t1 (-want +got):\n%s", diff)
		}
		if got := list(t, api, in.b.Key, "/v1/messages", in.names).Data; !cmp.Equal(got, []string{"b1"}) {
			t.Errorf("tenant b's list after a's delete of t1: %v", got)
		}
		// A transaction id that needs escaping, in its path segment.
		res = api.do(t, http.MethodDelete, "/v1/messages/transaction/"+url.PathEscape("t&=5 ü"), key, nil, nil)
		if res.status != http.StatusNoContent {
			t.Fatalf("delete of an escaped transaction: %d %s", res.status, res.body)
		}

		// With an Idempotency-Key, a retry gets the first answer, not 404.
		idem := http.Header{"Idempotency-Key": {"delete-m4"}}
		first := api.do(t, http.MethodDelete, "/v1/messages/"+in.msgs["m4"].ID, key, idem, nil)
		again := api.do(t, http.MethodDelete, "/v1/messages/"+in.msgs["m4"].ID, key, idem, nil)
		if first.status != http.StatusOK || again.status != http.StatusOK || again.header.Get("Idempotency-Replay") != "true" {
			t.Fatalf("delete with a key: %d, then %d (replay %q)", first.status, again.status, again.header.Get("Idempotency-Replay"))
		}
		if diff := cmp.Diff([]string{"m6", "m5"}, listed()); diff != "" {
			t.Errorf("list at the end (-want +got):\n%s", diff)
		}
	})
}

// The inbox client's notification.delete() and its bulk delete: each deletes the
// session's own in-app messages only, the counts follow, and the refusals change
// nothing.
func TestInboxDelete(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		a, b := newInboxTenant(t, s, "inbox-delete-a"), newInboxTenant(t, s, "inbox-delete-b")
		sub, other, tpl := a.Subscriber(t, "shared"), a.Subscriber(t, "other"), a.Template(t, "welcome")
		var mine []*models.Message
		for range 4 {
			mine = append(mine, a.Message(t, sub, tpl, nil))
		}
		email := a.Message(t, sub, tpl, func(m *models.Message) { m.Channel = models.ChannelEmail })
		others := a.Message(t, other, tpl, nil)
		theirs := b.Message(t, b.Subscriber(t, "shared"), b.Template(t, "welcome"), nil)
		api := newAPI(t, s)
		sess, _ := api.openSession(t, a, a.Key, "shared")

		res := api.call(t, http.MethodDelete, "/v1/inbox/notifications/"+mine[0].ID+"/delete", sess, "")
		if res.status != http.StatusNoContent || len(res.body) != 0 {
			t.Fatalf("delete: %d %s", res.status, res.body)
		}
		if _, ok := gqlMessages(t, api, a.Key, "")[mine[0].ID]; ok {
			t.Fatal("the deleted notification is still listed")
		}
		for _, tt := range []struct{ name, id string }{
			{"inboxDelete404Again", mine[0].ID},
			{"inboxDelete404Email", email.ID},
			{"inboxDelete404OtherSubscriber", others.ID},
			{"inboxDelete404OtherTenant", theirs.ID},
			{"inboxDelete404Malformed", "nope"},
		} {
			t.Run(tt.name, func(t *testing.T) {
				uri := "/v1/inbox/notifications/" + tt.id + "/delete"
				errorBody(t, api.call(t, http.MethodDelete, uri, sess, ""), http.StatusNotFound, uri)
			})
		}
		// Refusals of the bulk delete change nothing.
		for _, body := range []string{`{"notificationIds":["` + mine[1].ID + `"]}`, `{"tags":5}`, `{"data":{"k":"v"}}`, `{"nope":1}`} {
			if res := api.call(t, http.MethodPost, "/v1/inbox/notifications/delete", sess, body); res.status != http.StatusUnprocessableEntity {
				t.Errorf("bulk delete with %s: %d %s, want 422", body, res.status, res.body)
			}
		}
		if n := gqlCounts(t, api, a.Key)["total"]; n != float64(3) {
			t.Fatalf("in-app total after the refusals %v, want 3", n)
		}
		// A transaction's only: mine[1]'s. An empty transactionId is refused.
		if res := api.call(t, http.MethodPost, "/v1/inbox/notifications/delete", sess, `{"transactionId":""}`); res.status != http.StatusUnprocessableEntity {
			t.Fatalf("bulk delete of transaction \"\": %d %s", res.status, res.body)
		}
		res = api.call(t, http.MethodPost, "/v1/inbox/notifications/delete", sess, `{"transactionId":"`+mine[1].TransactionID+`"}`)
		if res.status != http.StatusOK || string(res.body) != `{"data":{"deleted":1}}`+"\n" {
			t.Fatalf("bulk delete of a transaction: %d %s", res.status, res.body)
		}
		res = api.call(t, http.MethodPost, "/v1/inbox/notifications/delete", sess, `{"tags":[]}`)
		if res.status != http.StatusOK || string(res.body) != `{"data":{"deleted":2}}`+"\n" {
			t.Fatalf("bulk delete: %d %s", res.status, res.body)
		}
		if n := gqlCounts(t, api, a.Key)["total"]; n != float64(0) {
			t.Fatalf("in-app total after deleting all %v, want 0", n)
		}
		for _, m := range []*models.Message{email, others} {
			var n int64
			if err := s.DB().Model(&models.Message{}).Where("id = ?", m.ID).Count(&n).Error; err != nil || n != 1 {
				t.Fatalf("message %s (email, or another subscriber's) went with the bulk delete", m.ID)
			}
		}
		if res := api.call(t, http.MethodPost, "/v1/inbox/notifications/delete", sess, ""); res.status != http.StatusOK ||
			string(res.body) != `{"data":{"deleted":0}}`+"\n" {
			t.Fatalf("bulk delete of nothing: %d %s", res.status, res.body)
		}
	}, inboxSealer(t))
}
