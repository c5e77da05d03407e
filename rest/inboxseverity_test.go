package rest_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"

	"messages/models"
	"messages/models/dbtest"
	"messages/models/store"
)

// Severity through the inbox API: the session's unreadCount.severity, the count request's
// severity filters and the list's, each notification's severity, and preferences by a
// workflow's severity. Stored none is counted as none whether empty or spelled out.
func TestInboxSeverity(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		a := newInboxTenant(t, s, "inbox-severity")
		sub, plain, urgent := a.Subscriber(t, "sev"), a.Template(t, "welcome"), a.Template(t, "urgent")
		if err := s.DB().Exec("UPDATE templates SET severity = 'high' WHERE id = ?", urgent.ID).Error; err != nil {
			t.Fatal(err)
		}
		add := func(n int, severity models.Severity, edit func(*models.Message)) {
			for range n {
				a.Message(t, sub, plain, func(m *models.Message) {
					m.Severity = severity
					if edit != nil {
						edit(m)
					}
				})
			}
		}
		add(3, models.SeverityHigh, nil)
		add(1, models.SeverityHigh, func(m *models.Message) { m.Read = true })
		add(1, models.SeverityHigh, func(m *models.Message) { m.Channel = models.ChannelEmail })
		add(2, models.SeverityMedium, nil)
		add(1, models.SeverityLow, nil)
		add(1, models.SeverityLow, func(m *models.Message) { m.Archived = true; m.Read = true })
		add(2, "", nil)
		add(2, models.SeverityNone, nil)
		api := newAPI(t, s)

		sess, data := api.openSession(t, a, a.Key, "sev")
		wantBadge := map[string]any{"total": 10.0, "severity": map[string]any{"high": 3.0, "medium": 2.0, "low": 1.0, "none": 4.0}}
		if diff := cmp.Diff(wantBadge, data["unreadCount"]); diff != "" {
			t.Errorf("session unreadCount (-want +got):\n%s", diff)
		}

		filters := `[{"read":false,"archived":false,"snoozed":false,"severity":"high"},{"severity":["low","medium"]},` +
			`{"severity":"none"},{"severity":["none"],"read":false},{}]`
		res := api.call(t, http.MethodGet, "/v1/inbox/notifications/count?filters="+url.QueryEscape(filters), sess, "")
		var counts struct{ Data []struct{ Count int } }
		if res.status != http.StatusOK || json.Unmarshal(res.body, &counts) != nil {
			t.Fatalf("count: %d %s", res.status, res.body)
		}
		var got []int
		for _, d := range counts.Data {
			got = append(got, d.Count)
		}
		if diff := cmp.Diff([]int{3, 4, 4, 4, 12}, got); diff != "" {
			t.Errorf("counts by severity (-want +got):\n%s", diff)
		}

		gql := api.graphql(t, a.Key, `{
			messageCounts(subscriberId: "sev", channel: in_app) { high: count(read: false, archived: false, snoozed: false, severity: [high]) mild: count(severity: [low, medium]) }
			messages(subscriberId: "sev", channel: in_app, severity: [none], limit: 100) { totalCount data { severity } }
			inHigh: messages(subscriberId: "sev", severity: [high]) { totalCount }
		}`, nil)
		want := map[string]any{
			"messageCounts": map[string]any{"high": 3.0, "mild": 4.0},
			"messages":      map[string]any{"totalCount": 4.0, "data": []any{map[string]any{"severity": "none"}, map[string]any{"severity": "none"}, map[string]any{"severity": "none"}, map[string]any{"severity": "none"}}},
			"inHigh":        map[string]any{"totalCount": 5.0},
		}
		if diff := cmp.Diff(want, decode(t, gql.body)["data"]); diff != "" {
			t.Errorf("GraphQL by severity (-want +got):\n%s\n%s", diff, gql.body)
		}

		for _, tt := range []struct {
			query string
			want  map[string]int
		}{
			{"?limit=100&severity=high", map[string]int{"high": 4}},
			{"?limit=100&severity[]=none&severity[]=low", map[string]int{"none": 4, "low": 2}},
			{"?limit=100&severity=medium&read=false", map[string]int{"medium": 2}},
		} {
			res := api.call(t, http.MethodGet, "/v1/inbox/notifications"+tt.query, sess, "")
			var page struct{ Data []struct{ Severity string } }
			if res.status != http.StatusOK || json.Unmarshal(res.body, &page) != nil {
				t.Fatalf("%s: %d %s", tt.query, res.status, res.body)
			}
			seen := map[string]int{}
			for _, n := range page.Data {
				seen[n.Severity]++
			}
			if diff := cmp.Diff(tt.want, seen); diff != "" {
				t.Errorf("%s: notifications by severity (-want +got):\n%s", tt.query, diff)
			}
		}

		res = api.call(t, http.MethodGet, "/v1/inbox/preferences?severity=high", sess, "")
		var prefs struct {
			Data []struct {
				Workflow *struct{ ID, Severity string }
			}
		}
		if res.status != http.StatusOK || json.Unmarshal(res.body, &prefs) != nil {
			t.Fatalf("preferences: %d %s", res.status, res.body)
		}
		var workflows []string
		for _, p := range prefs.Data {
			if p.Workflow != nil {
				workflows = append(workflows, p.Workflow.ID+" "+p.Workflow.Severity)
			}
		}
		if diff := cmp.Diff([]string{urgent.ID + " high"}, workflows); diff != "" {
			t.Errorf("preferences of severity high (-want +got):\n%s", diff)
		}
	}, inboxSealer(t))
}

// A transaction's messages marked through the inbox API's bulk call and GraphQL's
// markAllMessages: only that transaction's messages of the subscriber change.
func TestMarksByTransaction(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		a := newInboxTenant(t, s, "inbox-txn")
		tpl := a.Template(t, "welcome")
		ada, bob := a.Subscriber(t, "ada"), a.Subscriber(t, "bob")
		in := func(sub *models.Subscriber, txn string) *models.Message {
			return a.Message(t, sub, tpl, func(m *models.Message) { m.TransactionID = txn })
		}
		run1 := []*models.Message{in(ada, "run-1"), in(ada, "run-1"), in(ada, "run-1")}
		run2, bobs := in(ada, "run-2"), in(bob, "run-1")
		api := newAPI(t, s)
		sess, _ := api.openSession(t, a, a.Key, "ada")

		res := api.call(t, http.MethodPost, "/v1/inbox/notifications/read", sess, `{"transactionId":"run-1"}`)
		if res.status != http.StatusOK || decode(t, res.body)["data"].(map[string]any)["changed"] != 3.0 {
			t.Fatalf("bulk read of run-1: %d %s", res.status, res.body)
		}
		if got := readSeen(t, api, a.Key, "ada"); got[run1[0].ID] != "read" || got[run1[2].ID] != "read" || got[run2.ID] != "" {
			t.Errorf("after reading run-1: %v", got)
		}
		if got := readSeen(t, api, a.Key, "bob")[bobs.ID]; got != "" {
			t.Errorf("bob's message of run-1 is %q, want unchanged", got)
		}

		mark := api.graphql(t, a.Key, `mutation { markAllMessages(subscriberId: "ada", transactionId: "run-2", archived: true, seen: true) { changed done } }`, nil)
		if diff := cmp.Diff(map[string]any{"markAllMessages": map[string]any{"changed": 1.0, "done": true}}, decode(t, mark.body)["data"]); diff != "" {
			t.Errorf("markAllMessages of run-2 (-want +got):\n%s\n%s", diff, mark.body)
		}
		if got := readSeen(t, api, a.Key, "ada"); got[run2.ID] != "seen" || got[run1[1].ID] != "read" {
			t.Errorf("after archiving run-2: %v", got)
		}

		for _, tt := range []struct{ name, body, field string }{
			{"bulk422EmptyTransaction", `{"transactionId":""}`, "transactionId"},
			{"bulk422TransactionNumber", `{"transactionId":5}`, "transactionId"},
			{"bulk422TransactionWithIds", `{"transactionId":"run-1","notificationIds":["` + run2.ID + `"]}`, "transactionId"},
		} {
			t.Run(tt.name, func(t *testing.T) {
				before := readSeen(t, api, a.Key, "ada")
				res := api.call(t, http.MethodPost, "/v1/inbox/notifications/seen", sess, tt.body)
				if res.status != http.StatusUnprocessableEntity {
					t.Fatalf("%d %s", res.status, res.body)
				}
				if _, ok := decode(t, res.body)["errors"].(map[string]any)[tt.field]; !ok {
					t.Errorf("errors do not name %s: %s", tt.field, res.body)
				}
				if diff := cmp.Diff(before, readSeen(t, api, a.Key, "ada")); diff != "" {
					t.Errorf("a refusal changed messages (-before +after):\n%s", diff)
				}
			})
		}
	}, inboxSealer(t))
}
