package graph_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"messages/models/dbtest"
	"messages/models/store"
)

type deleted struct {
	Deleted    int
	MessageIDs []string
}

// deleteMessages by ids, by transaction and by filter, with an API key and with a
// session, checked against the fixture (sub-alice has g1, g3, g5, g7, g9, g11; sub-bob
// the even ones; tenant b a message of txn-1) and the counts after each.
func TestDeleteMessages(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		f := newGraphFixture(t, s)
		endpoint := serve(t, newHandler(s, discard, defaults), f.a)
		session := *f.a
		session.Caller.SubscriberID = "sub-alice"
		asAlice := serve(t, newHandler(s, discard, defaults), &session)
		del := func(endpoint, args string, vars map[string]any) deleted {
			t.Helper()
			var got struct{ DeleteMessages deleted }
			decode(t, post(t, endpoint, mutation(args, "deleted messageIds"), vars), &got)
			return got.DeleteMessages
		}
		total := func(sub string) int {
			t.Helper()
			var got struct{ MessageCounts counts }
			decode(t, post(t, endpoint, countsQuery, map[string]any{"sub": sub}), &got)
			return got.MessageCounts.Total
		}
		ids := func(names ...string) map[string]any {
			var out []string
			for _, n := range names {
				out = append(out, f.msgs[n].ID)
			}
			return map[string]any{"ids": out}
		}

		// An API key reaches any subscriber's message; another tenant's is left out.
		got := del(endpoint, `messageIds: $ids`, ids("g2", "b1"))
		if diff := cmp.Diff(deleted{1, []string{f.msgs["g2"].ID}}, got); diff != "" {
			t.Fatalf("delete of g2 and tenant b's b1 (-want +got):\n%s", diff)
		}
		if got := del(endpoint, `messageIds: $ids`, ids("g2")); got.Deleted != 0 || len(got.MessageIDs) != 0 {
			t.Fatalf("deleting g2 again: %+v, want nothing", got)
		}
		if got := del(endpoint, `messageIds: $ids`, map[string]any{"ids": []string{}}); got.Deleted != 0 {
			t.Fatalf("an empty messageIds deleted %d, want none (not all)", got.Deleted)
		}
		// A session deletes its own only: bob's named message is left out.
		got = del(asAlice, `messageIds: $ids`, ids("g1", "g4"))
		if diff := cmp.Diff(deleted{1, []string{f.msgs["g1"].ID}}, got); diff != "" {
			t.Fatalf("alice's session deleting g1 and bob's g4 (-want +got):\n%s", diff)
		}
		// A transaction, in this tenant only.
		if got := del(endpoint, `transactionId: "txn-3"`, nil); got.Deleted != 1 {
			t.Fatalf("delete of txn-3: %+v", got)
		}
		if got := del(endpoint, `transactionId: "txn-1"`, nil); got.Deleted != 0 {
			t.Fatalf("delete of txn-1 (deleted already here, tenant b's kept): %+v", got)
		}
		if total("sub-alice") != 4 || total("sub-bob") != 5 {
			t.Fatalf("totals after deleting g1, g2, g3: alice %d, bob %d; want 4 and 5", total("sub-alice"), total("sub-bob"))
		}
		// By filter: alice's read messages, then all of hers.
		decode(t, post(t, endpoint, `mutation($ids: [ID!]!) { markMessages(subscriberId: "sub-alice", messageIds: $ids, read: true) { _id } }`,
			ids("g5")), &struct{}{})
		if got := del(asAlice, `where: {read: true}`, nil); got.Deleted != 1 {
			t.Fatalf("delete of alice's read messages: %+v", got)
		}
		if got := del(endpoint, `subscriberId: "sub-alice"`, nil); got.Deleted != 3 {
			t.Fatalf("delete of all alice's messages: %+v", got)
		}
		if total("sub-alice") != 0 || total("sub-bob") != 5 {
			t.Fatalf("totals: alice %d, bob %d; want 0 and 5", total("sub-alice"), total("sub-bob"))
		}
		var other struct{ Messages page }
		decode(t, post(t, serve(t, newHandler(s, discard, defaults), f.b), `{ messages { `+pageFields+` } }`, nil), &other)
		if other.Messages.TotalCount != 1 {
			t.Fatalf("tenant b has %d messages, want its 1", other.Messages.TotalCount)
		}

		for _, tt := range []struct {
			name, endpoint, args string
			vars                 map[string]any
			want                 problem
		}{
			{"graph422FilterWithoutSubscriber", endpoint, `where: {read: true}`, nil,
				problem{Path: "deleteMessages", Code: "BAD_USER_INPUT", Field: "subscriberId"}},
			{"graph422IdsAndTransaction", endpoint, `messageIds: $ids, transactionId: "txn-4"`, ids("g4"),
				problem{Path: "deleteMessages", Code: "BAD_USER_INPUT", Field: "transactionId"}},
			{"graph422FilterOfNamedMessages", endpoint, `messageIds: $ids, where: {read: false}`, ids("g4"),
				problem{Path: "deleteMessages", Code: "BAD_USER_INPUT", Field: "filter"}},
			{"graph403SessionDeletingAnothersAll", asAlice, `subscriberId: "sub-bob"`, nil,
				problem{Path: "deleteMessages", Code: "FORBIDDEN"}},
			{"graph403SessionDeletingAnothersTransaction", asAlice, `subscriberId: "sub-bob", transactionId: "txn-4"`, nil,
				problem{Path: "deleteMessages", Code: "FORBIDDEN"}},
		} {
			t.Run(tt.name, func(t *testing.T) {
				got := problems(post(t, tt.endpoint, mutation(tt.args, "deleted"), tt.vars))
				if diff := cmp.Diff([]problem{tt.want}, got); diff != "" {
					t.Errorf("errors (-want +got):\n%s", diff)
				}
			})
		}
		if total("sub-bob") != 5 {
			t.Fatalf("bob's total after the refusals: %d, want 5", total("sub-bob"))
		}
		// A session's transaction delete is its own subscriber's only.
		if got := del(asAlice, `transactionId: "txn-4"`, nil); got.Deleted != 0 {
			t.Fatalf("alice's session deleting bob's txn-4: %+v", got)
		}
	})
}

// mutation is deleteMessages with args, declaring $ids when they use it.
func mutation(args, selection string) string {
	vars := ""
	if strings.Contains(args, "$ids") {
		vars = "($ids: [ID!])"
	}
	return "mutation" + vars + " { deleteMessages(" + args + ") { " + selection + " } }"
}

// A messagesConnection cursor naming a message deleted since pages on from where it was.
func TestConnectionCursorAfterDelete(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		f := newGraphFixture(t, s)
		endpoint := serve(t, newHandler(s, discard, defaults), f.a)
		type conn struct {
			MessagesConnection struct {
				PageInfo struct{ EndCursor string }
				Edges    []struct {
					Node struct {
						ID string `json:"_id"`
					}
				}
			}
		}
		page := func(after *string) conn {
			t.Helper()
			var got conn
			decode(t, post(t, endpoint, `query($after: String) { messagesConnection(subscriberId: "sub-alice", first: 2, after: $after) { pageInfo { endCursor } edges { node { _id } } } }`,
				map[string]any{"after": after}), &got)
			return got
		}
		first := page(nil)
		last := first.MessagesConnection.Edges[1].Node.ID // g9: alice has g11, g9, g7, ...
		var out struct{ DeleteMessages deleted }
		decode(t, post(t, endpoint, mutation(`messageIds: $ids`, "deleted"), map[string]any{"ids": []string{last}}), &out)
		if out.DeleteMessages.Deleted != 1 {
			t.Fatalf("delete of %s: %+v", f.names[last], out.DeleteMessages)
		}
		next := page(&first.MessagesConnection.PageInfo.EndCursor)
		var names []string
		for _, e := range next.MessagesConnection.Edges {
			names = append(names, f.names[e.Node.ID])
		}
		if diff := cmp.Diff([]string{"g7", "g5"}, names); diff != "" {
			t.Fatalf("the page after a deleted message's cursor (-want +got):\n%s", diff)
		}
	})
}
