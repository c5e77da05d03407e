package graph_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"messages/models"
	"messages/models/dbtest"
	"messages/models/store"
)

type counts struct {
	Total, Unread, Unseen, Archived, Snoozed, ReadInApp int
}

const countsQuery = `query($sub: String) { messageCounts(subscriberId: $sub) { total unread unseen archived snoozed readInApp: count(read: true) } }`

// The inbox over GraphQL: filters by state on both list fields, the counts, and each
// mutation, checked against the fixture (sub-alice has g1, g3, g5, g7, g9, g11).
func TestInboxOperations(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		f := newGraphFixture(t, s)
		endpoint := serve(t, newHandler(s, discard, defaults), f.a)
		alice := map[string]any{"sub": "sub-alice"}
		countsNow := func() counts {
			t.Helper()
			var got struct{ MessageCounts counts }
			decode(t, post(t, endpoint, countsQuery, alice), &got)
			return got.MessageCounts
		}
		list := func(args string) pageSummary {
			t.Helper()
			var got struct{ Messages page }
			decode(t, post(t, endpoint, `{ messages(subscriberId: "sub-alice"`+args+`) { `+pageFields+` } }`, nil), &got)
			return f.summarize(got.Messages)
		}
		if diff := cmp.Diff(counts{Total: 6, Unread: 6, Unseen: 6}, countsNow()); diff != "" {
			t.Fatalf("counts before (-want +got):\n%s", diff)
		}

		var marked struct {
			MarkMessages []struct {
				ID            string `json:"_id"`
				Read, Seen    bool
				LastReadDate  *string
				FirstSeenDate *string
			}
		}
		ids := []string{f.msgs["g1"].ID, f.msgs["g3"].ID, f.msgs["g2"].ID}
		decode(t, post(t, endpoint, `mutation($ids: [ID!]!) { markMessages(subscriberId: "sub-alice", messageIds: $ids, read: true, seen: true) { _id read seen lastReadDate firstSeenDate } }`,
			map[string]any{"ids": ids}), &marked)
		if len(marked.MarkMessages) != 2 {
			t.Fatalf("marked %d messages, want alice's two (g2 is bob's)", len(marked.MarkMessages))
		}
		for _, m := range marked.MarkMessages {
			if !m.Read || !m.Seen || m.LastReadDate == nil || m.FirstSeenDate == nil {
				t.Errorf("message %s after markMessages: %+v", f.names[m.ID], m)
			}
		}
		if diff := cmp.Diff(counts{Total: 6, Unread: 4, Unseen: 4, ReadInApp: 2}, countsNow()); diff != "" {
			t.Fatalf("counts after reading two (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(pageSummary{Names: []string{"g11", "g9", "g7", "g5"}, TotalCount: 4, PageSize: 10}, list(", read: false")); diff != "" {
			t.Errorf("unread list (-want +got):\n%s", diff)
		}
		var conn struct {
			MessagesConnection struct{ TotalCount int }
		}
		decode(t, post(t, endpoint, `{ messagesConnection(subscriberId: "sub-alice", read: true) { totalCount } }`, nil), &conn)
		if conn.MessagesConnection.TotalCount != 2 {
			t.Errorf("read connection totalCount %d, want 2", conn.MessagesConnection.TotalCount)
		}

		type markedAll struct {
			Changed int
			Done    bool
			JobID   *string
		}
		var all struct{ MarkAllMessages markedAll }
		decode(t, post(t, endpoint, `mutation { markAllMessages(subscriberId: "sub-alice", where: {read: true}, archived: true) { changed done jobId } }`, nil), &all)
		if diff := cmp.Diff(markedAll{Changed: 2, Done: true}, all.MarkAllMessages); diff != "" {
			t.Fatalf("archiving all read (-want +got):\n%s", diff)
		}
		decode(t, post(t, endpoint, `mutation { markAllMessages(subscriberId: "sub-alice", where: {read: true}, archived: true) { changed done jobId } }`, nil), &all)
		if diff := cmp.Diff(markedAll{Changed: 0, Done: true}, all.MarkAllMessages); diff != "" {
			t.Fatalf("repeating it (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(pageSummary{Names: []string{"g3", "g1"}, TotalCount: 2, PageSize: 10}, list(", archived: true")); diff != "" {
			t.Errorf("archived list (-want +got):\n%s", diff)
		}

		until := time.Now().Add(time.Hour).UTC().Format(models.TimeLayout)
		var snoozed struct{ SnoozeMessage struct{ SnoozedUntil string } }
		decode(t, post(t, endpoint, `mutation($id: ID!, $until: DateTime!) { snoozeMessage(subscriberId: "sub-alice", messageId: $id, until: $until) { snoozedUntil } }`,
			map[string]any{"id": f.msgs["g5"].ID, "until": until}), &snoozed)
		if snoozed.SnoozeMessage.SnoozedUntil != until {
			t.Fatalf("snoozedUntil %q, want %q", snoozed.SnoozeMessage.SnoozedUntil, until)
		}
		if diff := cmp.Diff(counts{Total: 6, Unread: 3, Unseen: 3, Archived: 2, Snoozed: 1, ReadInApp: 2}, countsNow()); diff != "" {
			t.Fatalf("counts after archiving and snoozing (-want +got):\n%s", diff)
		}
		decode(t, post(t, endpoint, `mutation($id: ID!) { unsnoozeMessage(subscriberId: "sub-alice", messageId: $id) { _id } }`,
			map[string]any{"id": f.msgs["g5"].ID}), &struct{}{})
		if got := countsNow(); got.Snoozed != 0 || got.Unread != 4 {
			t.Fatalf("after unsnoozing: %+v", got)
		}
	})
}

// Bad input is refused before anything changes: a snooze in the past, too many ids, a
// change that sets nothing, a message of another subscriber (not found).
func TestInboxBadInput(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		f := newGraphFixture(t, s)
		endpoint := serve(t, newHandler(s, discard, defaults), f.a)
		many := make([]string, 101)
		for i := range many {
			many[i] = f.msgs["g1"].ID
		}
		for _, tt := range []struct {
			name, query string
			vars        map[string]any
			want        problem
		}{
			{"graph422SnoozeInThePast", `mutation($id: ID!) { snoozeMessage(subscriberId: "sub-alice", messageId: $id, until: "2020-01-01T00:00:00.000Z") { _id } }`,
				map[string]any{"id": f.msgs["g1"].ID}, problem{Path: "snoozeMessage", Code: "BAD_USER_INPUT", Field: "snoozedUntil"}},
			{"graph422TooManyIds", `mutation($ids: [ID!]!) { markMessages(subscriberId: "sub-alice", messageIds: $ids, read: true) { _id } }`,
				map[string]any{"ids": many}, problem{Path: "markMessages", Code: "BAD_USER_INPUT", Field: "messageIds"}},
			{"graph422NothingToChange", `mutation { markAllMessages(subscriberId: "sub-alice") { done } }`,
				nil, problem{Path: "markAllMessages", Code: "BAD_USER_INPUT", Field: "change"}},
			{"graph404OtherSubscribersMessage", `mutation($id: ID!) { unsnoozeMessage(subscriberId: "sub-alice", messageId: $id) { _id } }`,
				map[string]any{"id": f.msgs["g2"].ID}, problem{Path: "unsnoozeMessage", Code: "NOT_FOUND"}},
		} {
			t.Run(tt.name, func(t *testing.T) {
				got := problems(post(t, endpoint, tt.query, tt.vars))
				if diff := cmp.Diff([]problem{tt.want}, got); diff != "" {
					t.Errorf("errors (-want +got):\n%s", diff)
				}
			})
		}
		var c struct{ MessageCounts counts }
		decode(t, post(t, endpoint, countsQuery, map[string]any{"sub": "sub-alice"}), &c)
		if c.MessageCounts != (counts{Total: 6, Unread: 6, Unseen: 6}) {
			t.Errorf("refused changes changed the counts: %+v", c.MessageCounts)
		}
	})
}
