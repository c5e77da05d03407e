package rest_test

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"messages/models/dbtest"
	"messages/models/store"
)

// The two requests an inbox sends most, through the whole chain (authentication, rate
// limits, the resolvers), cost this many statements once the instance has seen the key
// and the templates: an inbox page is one; a /v1 page adds its exact count; a mark is
// its UPDATE and the read of the record it returns (both in one transaction), which on
// MySQL travel as one text (models/store/markbatch.go).
func TestSteadyStateStatements(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		tn := dbtest.NewTenant(t, s, "steady")
		sub, tpl := tn.Subscriber(t, "alice"), tn.Template(t, "welcome")
		var ids []string
		for range 15 {
			ids = append(ids, tn.Message(t, sub, tpl, nil).ID)
		}
		a := newAPI(t, s)
		markStatements := 2
		if s.Dialect() == store.DialectMySQL {
			markStatements = 1
		}
		log := dbtest.RecordStatements(t, s)
		const inbox = `query Inbox($subscriberId: String) {
			messages(subscriberId: $subscriberId, limit: 10) { hasMore data { _id createdAt read seen
				cta { action { status } } subscriber { subscriberId firstName } template { _id name } } } }`
		mark := `mutation Mark($id: ID!) { markMessageAction(subscriberId: "alice", messageId: $id, type: primary, status: done) {
			_id cta { action { status } } subscriber { subscriberId } template { name } } }`
		requests := []struct {
			name string
			send func() response
			want int
		}{
			{"graphqlInbox", func() response {
				return a.graphql(t, tn.Key, inbox, map[string]any{"subscriberId": "alice"})
			}, 1},
			{"restInbox", func() response { return a.get(t, tn.Key, "/v1/messages?subscriberId=alice&limit=10") }, 2},
			{"graphqlMark", func() response { return a.graphql(t, tn.Key, mark, map[string]any{"id": ids[3]}) }, markStatements},
			{"restMark", func() response {
				return a.post(t, tn.Key, actionURI("alice", ids[4], "primary"), `{"status":"done"}`)
			}, markStatements},
		}
		// The first round reads the key and the templates; the second is the steady state.
		for range 2 {
			log.Take()
			for _, r := range requests {
				if res := r.send(); res.status != http.StatusOK && res.status != http.StatusCreated {
					t.Fatalf("%s: status %d: %s", r.name, res.status, res.body)
				}
				log.Take()
			}
		}
		for _, r := range requests {
			t.Run(r.name, func(t *testing.T) {
				log.Take()
				r.send()
				var got []string
				for _, st := range log.Take() {
					got = append(got, st.SQL)
				}
				if len(got) != r.want {
					t.Errorf("%d statements, want %d:\n%s", len(got), r.want, cmp.Diff([]string(nil), got))
				}
			})
		}
	})
}
