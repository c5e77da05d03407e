package graph_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"messages/models"
	"messages/models/dbtest"
	"messages/models/store"
)

// gid is the documented global id format: base64url, unpadded, of "<Type>:<_id>".
func gid(typ, id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(typ + ":" + id))
}

// found is what a test compares of a node: its type, global id and record id; nil is null.
type found struct {
	Typename string `json:"__typename"`
	ID       string `json:"id"`
	RecordID string `json:"_id"`
}

const nodeSelection = `__typename id ... on Message { _id } ... on Subscriber { _id } ... on Template { _id }`

// nodeFixture names the records of newGraphFixture that node tests look up: tenant A's
// message g1 of sub-alice and g2 of sub-bob, both subscribers and the template, and
// tenant B's message b1 with its subscriber and template.
type nodeFixture struct {
	*graphFixture
	aliceMsg, bobMsg, alice, bob, tpl string
	bMsg, bSub, bTpl                  string
}

func newNodeFixture(t testing.TB, s *store.Store) *nodeFixture {
	t.Helper()
	g := newGraphFixture(t, s)
	g1, g2, b1 := g.msgs["g1"], g.msgs["g2"], g.msgs["b1"]
	return &nodeFixture{graphFixture: g, aliceMsg: g1.ID, bobMsg: g2.ID, alice: g1.SubscriberID, bob: g2.SubscriberID, tpl: g1.TemplateID,
		bMsg: b1.ID, bSub: b1.SubscriberID, bTpl: b1.TemplateID}
}

// scoped is tenant A as a subscriber session of sub-alice.
func (f *nodeFixture) scoped() *dbtest.Tenant {
	c := f.a.Caller
	c.SubscriberID = "sub-alice"
	return &dbtest.Tenant{Env: f.a.Env, Caller: c}
}

// TestNode looks records up by global id as an API key and as a subscriber session: what
// the caller may not see is null, exactly like what does not exist, and so is anything
// that is not a global id.
func TestNode(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		f := newNodeFixture(t, s)
		key := serve(t, newHandler(s, discard, defaults), f.a)
		session := serve(t, newHandler(s, discard, defaults), f.scoped())
		unknown := models.NewID(dbtest.Base)
		tests := []struct {
			name     string
			endpoint string
			id       string
			want     *found
		}{
			{"node200Message", key, gid("Message", f.aliceMsg), &found{"Message", gid("Message", f.aliceMsg), f.aliceMsg}},
			{"node200Subscriber", key, gid("Subscriber", f.alice), &found{"Subscriber", gid("Subscriber", f.alice), f.alice}},
			{"node200Template", key, gid("Template", f.tpl), &found{"Template", gid("Template", f.tpl), f.tpl}},
			{"node200NullForeignMessage", key, gid("Message", f.bMsg), nil},
			{"node200NullForeignSubscriber", key, gid("Subscriber", f.bSub), nil},
			{"node200NullForeignTemplate", key, gid("Template", f.bTpl), nil},
			{"node200NullUnknownMessage", key, gid("Message", unknown), nil},
			{"node200NullUnknownSubscriber", key, gid("Subscriber", unknown), nil},
			{"node200NullUnknownTemplate", key, gid("Template", unknown), nil},
			{"node200NullIdOfAnotherType", key, gid("Subscriber", f.aliceMsg), nil},
			{"node200NullMalformedRecordIdAsGlobalId", key, f.aliceMsg, nil},
			{"node200NullMalformedNotBase64", key, "not a global id!", nil},
			{"node200NullMalformedEmpty", key, "", nil},
			{"node200NullMalformedPadded", key, base64.URLEncoding.EncodeToString([]byte("Message:" + f.aliceMsg)), nil},
			{"node200NullMalformedStdBase64", key, base64.StdEncoding.EncodeToString([]byte("Template:" + f.tpl + "\xff\xfe")), nil},
			{"node200NullMalformedUnknownType", key, gid("Widget", f.aliceMsg), nil},
			{"node200NullMalformedNoType", key, gid("", f.aliceMsg), nil},
			{"node200NullMalformedRecordId", key, gid("Message", "1 OR 1=1"), nil},
			{"node200NullMalformedTooLong", key, gid("Message", f.aliceMsg) + strings.Repeat("A", 100), nil},
			{"node200ScopedOwnMessage", session, gid("Message", f.aliceMsg), &found{"Message", gid("Message", f.aliceMsg), f.aliceMsg}},
			{"node200ScopedOwnSubscriber", session, gid("Subscriber", f.alice), &found{"Subscriber", gid("Subscriber", f.alice), f.alice}},
			{"node200ScopedTemplate", session, gid("Template", f.tpl), &found{"Template", gid("Template", f.tpl), f.tpl}},
			{"node200NullScopedOtherSubscribersMessage", session, gid("Message", f.bobMsg), nil},
			{"node200NullScopedOtherSubscriber", session, gid("Subscriber", f.bob), nil},
			{"node200NullScopedForeignMessage", session, gid("Message", f.bMsg), nil},
			{"node200NullScopedForeignTemplate", session, gid("Template", f.bTpl), nil},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				var got struct{ Node *found }
				decode(t, post(t, tt.endpoint, `query($id: ID!) { node(id: $id) { `+nodeSelection+` } }`, map[string]any{"id": tt.id}), &got)
				if diff := cmp.Diff(tt.want, got.Node); diff != "" {
					t.Errorf("node (-want +got):\n%s", diff)
				}
			})
		}

		t.Run("node200MessageEmbedsRecordsWithTheirGlobalIds", func(t *testing.T) {
			var got struct {
				Node struct {
					ID         string
					Subscriber struct{ ID string }
					Template   struct{ ID string }
				}
			}
			decode(t, post(t, key, `query($id: ID!) { node(id: $id) { id ... on Message { subscriber { id } template { id } } } }`,
				map[string]any{"id": gid("Message", f.aliceMsg)}), &got)
			want := fmt.Sprint(gid("Message", f.aliceMsg), gid("Subscriber", f.alice), gid("Template", f.tpl))
			if g := fmt.Sprint(got.Node.ID, got.Node.Subscriber.ID, got.Node.Template.ID); g != want {
				t.Errorf("ids = %s, want %s", g, want)
			}
		})

		t.Run("node200GlobalIdsOfAListRefetch", func(t *testing.T) {
			// The id a list gives is the one node takes back, for each type.
			var list struct {
				Messages struct {
					Data []struct {
						ID         string
						Subscriber struct{ ID string }
						Template   struct{ ID string }
					}
				}
			}
			decode(t, post(t, key, `{ messages(limit: 3) { data { id subscriber { id } template { id } } } }`, nil), &list)
			for _, m := range list.Messages.Data {
				for _, id := range []string{m.ID, m.Subscriber.ID, m.Template.ID} {
					var got struct{ Node *found }
					decode(t, post(t, key, `query($id: ID!) { node(id: $id) { `+nodeSelection+` } }`, map[string]any{"id": id}), &got)
					if got.Node == nil || got.Node.ID != id {
						t.Errorf("node(%q) = %+v", id, got.Node)
					}
				}
			}
		})
	})
}

// TestNodes looks several records up at once: each position answers as node would, in
// the order asked, repeats included.
func TestNodes(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		f := newNodeFixture(t, s)
		key := serve(t, newHandler(s, discard, defaults), f.a)
		session := serve(t, newHandler(s, discard, defaults), f.scoped())
		unknown := gid("Message", models.NewID(dbtest.Base))
		msg := &found{"Message", gid("Message", f.aliceMsg), f.aliceMsg}
		bob := &found{"Message", gid("Message", f.bobMsg), f.bobMsg}
		sub := &found{"Subscriber", gid("Subscriber", f.alice), f.alice}
		tpl := &found{"Template", gid("Template", f.tpl), f.tpl}
		tests := []struct {
			name     string
			endpoint string
			ids      []string
			want     []*found
		}{
			{"nodes200Empty", key, []string{}, []*found{}},
			{"nodes200MixedInOrder", key,
				[]string{gid("Template", f.tpl), gid("Message", f.bMsg), msg.ID, "malformed", unknown, sub.ID, gid("Subscriber", f.bSub), bob.ID},
				[]*found{tpl, nil, msg, nil, nil, sub, nil, bob}},
			{"nodes200Repeats", key, []string{msg.ID, tpl.ID, msg.ID}, []*found{msg, tpl, msg}},
			{"nodes200OnlyForeign", key, []string{gid("Message", f.bMsg), gid("Subscriber", f.bSub), gid("Template", f.bTpl)}, []*found{nil, nil, nil}},
			{"nodes200Scoped", session, []string{bob.ID, msg.ID, gid("Subscriber", f.bob), sub.ID, tpl.ID}, []*found{nil, msg, nil, sub, tpl}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				var got struct{ Nodes []*found }
				decode(t, post(t, tt.endpoint, `query($ids: [ID!]!) { nodes(ids: $ids) { `+nodeSelection+` } }`, map[string]any{"ids": tt.ids}), &got)
				if diff := cmp.Diff(tt.want, got.Nodes); diff != "" {
					t.Errorf("nodes (-want +got):\n%s", diff)
				}
			})
		}

		t.Run("nodes422TooManyIds", func(t *testing.T) {
			ids := make([]string, 101)
			for i := range ids {
				ids[i] = msg.ID
			}
			res := post(t, key, `query($ids: [ID!]!) { nodes(ids: $ids) { id } }`, map[string]any{"ids": ids})
			if diff := cmp.Diff([]problem{{Path: "nodes", Code: "BAD_USER_INPUT", Field: "ids"}}, problems(res)); diff != "" {
				t.Errorf("errors (-want +got):\n%s\n%s", diff, res.Body)
			}
		})
	})
}

// TestNodesStatements checks that nodes loads each type in one statement whatever the
// number of ids, embeds a message's records only when selected, and queries nothing for
// ids that are not global ids.
func TestNodesStatements(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		f := newNodeFixture(t, s)
		log := dbtest.RecordStatements(t, s)
		key := serve(t, newHandler(s, discard, defaults), f.a)
		session := serve(t, newHandler(s, discard, defaults), f.scoped())
		messages := func(n int) []string {
			var ids []string
			for i := 1; i <= n; i++ {
				ids = append(ids, gid("Message", f.msgs[fmt.Sprintf("g%d", i)].ID))
			}
			return ids
		}
		tests := []struct {
			name      string
			endpoint  string
			selection string
			ids       []string
			want      dbtest.StatementCounts
		}{
			{"nodes200OneMessageOneStatement", key, `id`, messages(1), dbtest.StatementCounts{All: 1}},
			{"nodes200TwelveMessagesOneStatement", key, `id`, messages(12), dbtest.StatementCounts{All: 1}},
			{"nodes200TwelveMessagesWithRecordsThreeStatements", key, `... on Message { subscriber { id } template { id } }`, messages(12),
				dbtest.StatementCounts{All: 3, Subscribers: 1, Templates: 1}},
			{"nodes200OnlySubscribersWhenSelected", key, `... on Message { subscriber { id } }`, messages(12),
				dbtest.StatementCounts{All: 2, Subscribers: 1}},
			{"nodes200ScopedTwelveMessagesOneStatement", session, `id`, messages(12), dbtest.StatementCounts{All: 1}},
			{"nodes200EachTypeOneStatement", key, `id`, append(messages(12), gid("Subscriber", f.alice), gid("Subscriber", f.bob), gid("Template", f.tpl)),
				dbtest.StatementCounts{All: 3, Subscribers: 1, Templates: 1}},
			{"nodes200MalformedNoStatement", key, `id`, []string{"x", gid("Widget", f.aliceMsg)}, dbtest.StatementCounts{}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				log.Take()
				var got struct{ Nodes []json.RawMessage }
				decode(t, post(t, tt.endpoint, `query($ids: [ID!]!) { nodes(ids: $ids) { `+tt.selection+` } }`, map[string]any{"ids": tt.ids}), &got)
				if len(got.Nodes) != len(tt.ids) {
					t.Fatalf("%d nodes for %d ids", len(got.Nodes), len(tt.ids))
				}
				if diff := cmp.Diff(tt.want, dbtest.CountStatements(log.Take())); diff != "" {
					t.Errorf("statements (-want +got):\n%s", diff)
				}
			})
		}
	})
}
