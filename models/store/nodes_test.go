package store_test

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"messages/models"
	"messages/models/dbtest"
	"messages/models/store"
)

// TestNodes checks Store.Nodes: records of the environment only, a session's messages and
// subscriber only, one statement per kind, each naming the environment (docs/scaling.md).
func TestNodes(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		a, b := dbtest.NewTenant(t, s, "a"), dbtest.NewTenant(t, s, "b")
		alice, bob, tpl := a.Subscriber(t, "alice"), a.Subscriber(t, "bob"), a.Template(t, "tpl")
		m1, m2 := a.Message(t, alice, tpl, nil), a.Message(t, bob, tpl, nil)
		bSub, bTpl := b.Subscriber(t, "alice"), b.Template(t, "tpl")
		bMsg := b.Message(t, bSub, bTpl, nil)
		log := dbtest.RecordStatements(t, s)

		type result struct {
			Messages, Subscribers, Templates []string
			Embedded                         bool
			Statements                       int
		}
		every := models.NodeQuery{
			Messages:    []string{m1.ID, m2.ID, bMsg.ID, models.NewID(dbtest.Base)},
			Subscribers: []string{alice.ID, bob.ID, bSub.ID},
			Templates:   []string{tpl.ID, bTpl.ID},
		}
		scoped := every
		scoped.SubscriberID = "alice"
		embedded := every
		embedded.EmbedSubscribers, embedded.EmbedTemplates = true, true
		tests := []struct {
			name string
			q    models.NodeQuery
			want result
		}{
			{"nodesOwnEnvironmentOnly", every, result{Messages: []string{m1.ID, m2.ID}, Subscribers: []string{alice.ID, bob.ID}, Templates: []string{tpl.ID}, Statements: 3}},
			{"nodesScopedToOneSubscriber", scoped, result{Messages: []string{m1.ID}, Subscribers: []string{alice.ID}, Templates: []string{tpl.ID}, Statements: 3}},
			{"nodesEmbedded", embedded, result{Messages: []string{m1.ID, m2.ID}, Subscribers: []string{alice.ID, bob.ID}, Templates: []string{tpl.ID}, Embedded: true, Statements: 5}},
			{"nodesNothingAskedNoStatement", models.NodeQuery{}, result{}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				log.Take()
				n, err := s.Nodes(t.Context(), a.Env.ID, tt.q)
				if err != nil {
					t.Fatal(err)
				}
				statements := log.Take()
				got := result{Statements: len(statements), Embedded: len(n.Messages) > 0}
				for _, m := range n.Messages {
					got.Messages = append(got.Messages, m.ID)
					got.Embedded = got.Embedded && m.Subscriber != nil && m.Template != nil
				}
				for id := range n.Subscribers {
					got.Subscribers = append(got.Subscribers, id)
				}
				for id := range n.Templates {
					got.Templates = append(got.Templates, id)
				}
				for _, l := range [][]string{got.Messages, got.Subscribers, got.Templates, tt.want.Messages, tt.want.Subscribers, tt.want.Templates} {
					slices.Sort(l)
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("found (-want +got):\n%s", diff)
				}
				for _, st := range statements {
					if !carriesShardKey(normalizeSQL(st.SQL)) {
						t.Errorf("a statement does not name the environment:\n%s", st.SQL)
					}
				}
			})
		}
	})
}
