package graph_test

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"messages/graph"
	"messages/models"
	"messages/models/dbtest"
	"messages/models/seed"
	"messages/models/service"
	"messages/models/store"
)

// connection is the part of a MessageConnection the tests read.
type connection struct {
	TotalCount int
	PageInfo   struct {
		HasNextPage bool
		EndCursor   *string
	}
	Edges []struct {
		Cursor string
		Node   struct {
			ID string `json:"_id"`
		}
	}
}

const connectionFields = `totalCount pageInfo { hasNextPage endCursor } edges { cursor node { _id } }`

// connectionQuery is a messagesConnection query taking every argument as a variable.
const connectionQuery = `query($channel: ChannelType, $sub: String, $txn: [String!], $first: Int, $after: String) {
	messagesConnection(channel: $channel, subscriberId: $sub, transactionId: $txn, first: $first, after: $after) { ` + connectionFields + ` }
}`

// connect asks for one page; filter holds the variables channel, sub and txn.
func connect(t testing.TB, endpoint string, filter map[string]any, first int, after *string) connection {
	t.Helper()
	vars := map[string]any{"first": first}
	for k, v := range filter {
		vars[k] = v
	}
	if after != nil {
		vars["after"] = *after
	}
	var got struct{ MessagesConnection connection }
	decode(t, post(t, endpoint, connectionQuery, vars), &got)
	return got.MessagesConnection
}

// walkedPage is what a test checks of one page of a walk.
type walkedPage struct {
	Len         int
	HasNextPage bool
	TotalCount  int
	// EndCursorIsLastEdge says endCursor is the cursor of the page's last edge (null on
	// an empty page).
	EndCursorIsLastEdge bool
}

// walkConnection follows endCursor from the first page until hasNextPage is false.
func walkConnection(t testing.TB, endpoint string, filter map[string]any, first int) ([]string, []walkedPage) {
	t.Helper()
	ids := []string{}
	var pages []walkedPage
	var after *string
	for {
		c := connect(t, endpoint, filter, first, after)
		p := walkedPage{Len: len(c.Edges), HasNextPage: c.PageInfo.HasNextPage, TotalCount: c.TotalCount}
		if n := len(c.Edges); n == 0 {
			p.EndCursorIsLastEdge = c.PageInfo.EndCursor == nil
		} else {
			p.EndCursorIsLastEdge = c.PageInfo.EndCursor != nil && *c.PageInfo.EndCursor == c.Edges[n-1].Cursor
		}
		pages = append(pages, p)
		for _, e := range c.Edges {
			ids = append(ids, e.Node.ID)
		}
		if !c.PageInfo.HasNextPage {
			return ids, pages
		}
		if len(pages) > 1000 {
			t.Fatal("the walk does not end")
		}
		after = c.PageInfo.EndCursor
	}
}

// wantWalk is what a walk over n messages in pages of first must say.
func wantWalk(n, first int) []walkedPage {
	var out []walkedPage
	for left := n; ; left -= first {
		out = append(out, walkedPage{Len: min(left, first), HasNextPage: left > first, TotalCount: n, EndCursorIsLastEdge: true})
		if left <= first {
			return out
		}
	}
}

// listIDs returns the ids messages lists for the filter, in its order.
func listIDs(t testing.TB, endpoint string, filter map[string]any) []string {
	t.Helper()
	var got struct{ Messages page }
	decode(t, post(t, endpoint, `query($channel: ChannelType, $sub: String, $txn: [String!]) {
		messages(channel: $channel, subscriberId: $sub, transactionId: $txn, limit: 1000) { hasMore data { _id } } }`, filter), &got)
	if got.Messages.HasMore {
		t.Fatal("the list has more than 1000 messages")
	}
	ids := []string{}
	for _, m := range got.Messages.Data {
		ids = append(ids, m.ID)
	}
	return ids
}

// connectionFixture is tenant A with 26 messages in groups of three sharing a createdAt,
// ids in no order of insertion, over three subscribers, three channels and five
// transaction ids; and tenant B, with the same external subscriber ids and transaction
// ids.
type connectionFixture struct {
	a, b *dbtest.Tenant
	ids  []string // tenant A's message ids in insertion order
}

func newConnectionFixture(t testing.TB, s *store.Store) *connectionFixture {
	t.Helper()
	f := &connectionFixture{a: dbtest.NewTenant(t, s, "a"), b: dbtest.NewTenant(t, s, "b")}
	subs := []*models.Subscriber{f.a.Subscriber(t, "sub-0"), f.a.Subscriber(t, "sub-1"), f.a.Subscriber(t, "sub-2")}
	tpl := f.a.Template(t, "tpl")
	channels := []models.ChannelType{models.ChannelInApp, models.ChannelEmail, models.ChannelInApp, models.ChannelSMS}
	for i := range 26 {
		m := f.a.Message(t, subs[i%3], tpl, func(m *models.Message) {
			m.ID = scrambled(i)
			m.CreatedAt = models.NewTime(dbtest.Base.Add(time.Duration(i/3) * time.Second))
			m.Channel = channels[i%len(channels)]
			m.TransactionID = fmt.Sprintf("txn-%d", i%5)
		})
		f.ids = append(f.ids, m.ID)
	}
	bSub, bTpl := f.b.Subscriber(t, "sub-1"), f.b.Template(t, "tpl")
	for i := range 4 {
		f.b.Message(t, bSub, bTpl, func(m *models.Message) {
			m.ID = scrambled(100 + i)
			m.CreatedAt = models.NewTime(dbtest.Base.Add(time.Duration(i) * time.Second))
			m.TransactionID = "txn-1"
		})
	}
	return f
}

// scrambled returns a valid id whose order has nothing to do with i.
func scrambled(i int) string {
	return fmt.Sprintf("%024x", (uint64(i)*0x9E3779B97F4A7C15)>>8)
}

// connectionFilters are the filter shapes, as variables of connectionQuery.
var connectionFilters = []struct {
	name   string
	filter map[string]any
}{
	{"all", map[string]any{}},
	{"channel", map[string]any{"channel": "in_app"}},
	{"channelWithoutMessages", map[string]any{"channel": "push"}},
	{"subscriber", map[string]any{"sub": "sub-1"}},
	{"subscriberAndChannel", map[string]any{"sub": "sub-1", "channel": "in_app"}},
	{"transactionIds", map[string]any{"txn": []string{"txn-1", "txn-3"}}},
	{"everyFilter", map[string]any{"sub": "sub-2", "channel": "in_app", "txn": []string{"txn-0", "txn-2", "txn-4"}}},
	{"unknownSubscriber", map[string]any{"sub": "sub-nobody"}},
}

// TestMessagesConnectionWalk follows endCursor through every filter shape with several
// page sizes: the walk must give exactly the order of messages, ties on createdAt
// included, with exact hasNextPage, endCursor the last edge's cursor (null on an empty
// page) and totalCount on every page.
func TestMessagesConnectionWalk(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		f := newConnectionFixture(t, s)
		endpoint := serve(t, newHandler(s, discard, defaults), f.a)
		for _, fl := range connectionFilters {
			want := listIDs(t, endpoint, fl.filter)
			for _, first := range []int{1, 3, 7, 1000} {
				t.Run(fmt.Sprintf("connection200Walk_%s_first%d", fl.name, first), func(t *testing.T) {
					got, pages := walkConnection(t, endpoint, fl.filter, first)
					if diff := cmp.Diff(want, got); diff != "" {
						t.Errorf("walked ids (-messages +messagesConnection):\n%s", diff)
					}
					if diff := cmp.Diff(wantWalk(len(want), first), pages); diff != "" {
						t.Errorf("pages (-want +got):\n%s", diff)
					}
				})
			}
		}

		t.Run("connection200EveryEdgeCursorResumesAfterItsMessage", func(t *testing.T) {
			all := connect(t, endpoint, nil, 1000, nil)
			for i, e := range all.Edges {
				next := connect(t, endpoint, nil, 1, &e.Cursor)
				var got []string
				for _, n := range next.Edges {
					got = append(got, n.Node.ID)
				}
				var want []string
				if i+1 < len(all.Edges) {
					want = []string{all.Edges[i+1].Node.ID}
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("after edge %d (-want +got):\n%s", i, diff)
				}
			}
		})

		t.Run("connection200DefaultFirstIsTen", func(t *testing.T) {
			var got struct{ MessagesConnection connection }
			decode(t, post(t, endpoint, `{ messagesConnection { `+connectionFields+` } }`, nil), &got)
			if len(got.MessagesConnection.Edges) != 10 || !got.MessagesConnection.PageInfo.HasNextPage {
				t.Errorf("%d edges, hasNextPage %v; want 10 and true", len(got.MessagesConnection.Edges), got.MessagesConnection.PageInfo.HasNextPage)
			}
		})

		t.Run("connection200TransactionIdsInAnyOrder", func(t *testing.T) {
			// The order and repetition of transaction ids do not change the list, so a
			// cursor stays valid across them.
			page := connect(t, endpoint, map[string]any{"txn": []string{"txn-1", "txn-3"}}, 2, nil)
			again := connect(t, endpoint, map[string]any{"txn": []string{"txn-3", "txn-1", "txn-3"}}, 2, page.PageInfo.EndCursor)
			want := listIDs(t, endpoint, map[string]any{"txn": []string{"txn-1", "txn-3"}})[2:4]
			var got []string
			for _, e := range again.Edges {
				got = append(got, e.Node.ID)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("second page (-want +got):\n%s", diff)
			}
		})
	})
}

// TestMessagesConnectionBadInput sends invalid arguments and cursors that are not this
// caller's for this filter: each is BAD_USER_INPUT naming the argument, with no data and
// no statement run.
func TestMessagesConnectionBadInput(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		f := newConnectionFixture(t, s)
		log := dbtest.RecordStatements(t, s)
		endpoint := serve(t, newHandler(s, discard, defaults), f.a)
		endpointB := serve(t, newHandler(s, discard, defaults), f.b)
		otherSecret := serve(t, graph.NewHandler(&graph.Resolver{Service: service.New(service.Options{Store: s, CursorSecret: []byte("another secret")}), Logger: discard, Now: time.Now}, defaults), f.a)

		valid := *connect(t, endpoint, nil, 3, nil).PageInfo.EndCursor
		validSub := *connect(t, endpoint, map[string]any{"sub": "sub-1"}, 3, nil).PageInfo.EndCursor
		fromB := *connect(t, endpointB, nil, 1, nil).PageInfo.EndCursor
		fromOtherSecret := *connect(t, otherSecret, nil, 3, nil).PageInfo.EndCursor
		raw, err := base64.RawURLEncoding.DecodeString(valid)
		if err != nil {
			t.Fatal(err)
		}
		edit := func(change func(b []byte) []byte) string {
			return base64.RawURLEncoding.EncodeToString(change(bytes.Clone(raw)))
		}
		// The cursor of the third message holds its id in clear; another message's id in
		// its place must not verify.
		third := connect(t, endpoint, nil, 3, nil).Edges[2].Node.ID
		if !bytes.Contains(raw, []byte(third)) {
			t.Fatalf("cursor %q does not hold id %s", valid, third)
		}
		tooMany := make([]string, 101)
		for i := range tooMany {
			tooMany[i] = fmt.Sprintf("txn-%d", i)
		}

		tests := []struct {
			name     string
			endpoint string
			vars     map[string]any
			field    string
		}{
			{"connection422FirstZero", endpoint, map[string]any{"first": 0}, "first"},
			{"connection422FirstNegative", endpoint, map[string]any{"first": -1}, "first"},
			{"connection422FirstOverMax", endpoint, map[string]any{"first": 1001}, "first"},
			{"connection422SubscriberIdTooLong", endpoint, map[string]any{"sub": strings.Repeat("x", 256)}, "subscriberId"},
			{"connection422TooManyTransactionIds", endpoint, map[string]any{"txn": tooMany}, "transactionId"},
			{"connection422CursorEmpty", endpoint, map[string]any{"after": ""}, "after"},
			{"connection422CursorNotBase64", endpoint, map[string]any{"after": "not a cursor!"}, "after"},
			{"connection422CursorTooShort", endpoint, map[string]any{"after": valid[:20]}, "after"},
			{"connection422CursorTooLong", endpoint, map[string]any{"after": valid + strings.Repeat("A", 300)}, "after"},
			{"connection422CursorTruncated", endpoint, map[string]any{"after": valid[:len(valid)-1]}, "after"},
			{"connection422CursorPadded", endpoint, map[string]any{"after": valid + "="}, "after"},
			{"connection422CursorCharacterChanged", endpoint, map[string]any{"after": valid[:5] + string(valid[5]^1) + valid[6:]}, "after"},
			{"connection422CursorTimeChanged", endpoint, map[string]any{"after": edit(func(b []byte) []byte { b[8] ^= 1; return b })}, "after"},
			{"connection422CursorVersionChanged", endpoint, map[string]any{"after": edit(func(b []byte) []byte { b[0] ^= 1; return b })}, "after"},
			{"connection422CursorTagChanged", endpoint, map[string]any{"after": edit(func(b []byte) []byte { b[len(b)-1] ^= 1; return b })}, "after"},
			{"connection422CursorIdChanged", endpoint, map[string]any{"after": edit(func(b []byte) []byte {
				return bytes.Replace(b, []byte(third), []byte(f.ids[0]), 1)
			})}, "after"},
			{"connection422CursorOfAnotherTenant", endpoint, map[string]any{"after": fromB}, "after"},
			{"connection422CursorUsedByAnotherTenant", endpointB, map[string]any{"after": valid}, "after"},
			{"connection422CursorOfAnotherSecret", endpoint, map[string]any{"after": fromOtherSecret}, "after"},
			{"connection422CursorOfAnotherFilter", endpoint, map[string]any{"after": valid, "channel": "in_app"}, "after"},
			{"connection422CursorOfAnotherSubscriber", endpoint, map[string]any{"after": validSub, "sub": "sub-2"}, "after"},
			{"connection422CursorWithoutItsFilter", endpoint, map[string]any{"after": validSub}, "after"},
			{"connection422CursorWithMoreTransactionIds", endpoint, map[string]any{"after": valid, "txn": []string{"txn-1"}}, "after"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				log.Take()
				res := post(t, tt.endpoint, connectionQuery, tt.vars)
				want := []problem{{Path: "messagesConnection", Code: "BAD_USER_INPUT", Field: tt.field}}
				if diff := cmp.Diff(want, problems(res)); diff != "" {
					t.Errorf("errors (-want +got):\n%s\n%s", diff, res.Body)
				}
				if !res.dataIsNull() {
					t.Errorf("data = %s, want null", res.Data)
				}
				if n := len(log.Take()); n != 0 {
					t.Errorf("refused input ran %d statements, want none", n)
				}
			})
		}

		t.Run("connection200ProcessSecretIsShared", func(t *testing.T) {
			// Handlers without a configured secret in one process share its random one.
			other := serve(t, newHandler(s, discard, defaults), f.a)
			if got := connect(t, other, nil, 3, &valid); len(got.Edges) != 3 {
				t.Errorf("%d edges after a cursor of another handler, want 3", len(got.Edges))
			}
		})
	})
}

// TestMessagesConnectionStatements checks that a page pays only for what it selects, and
// that a page deep in the list (500 messages, 200 for a channel) costs the same
// statements as the first.
func TestMessagesConnectionStatements(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		stats, err := seed.Generate(t.Context(), s, seed.Options{Seed: 9, Messages: 1500, Subscribers: 2, Templates: 4})
		if err != nil {
			t.Fatal(err)
		}
		tenant := &dbtest.Tenant{Caller: models.Caller{EnvironmentID: stats.EnvironmentID, OrganizationID: stats.OrganizationID}}
		log := dbtest.RecordStatements(t, s)
		endpoint := serve(t, newHandler(s, discard, defaults), tenant)
		busiest := func(column string) string {
			var v string
			if err := s.DB().Raw(`SELECT `+column+` FROM messages WHERE environment_id = ? GROUP BY `+column+` ORDER BY COUNT(*) DESC LIMIT 1`,
				stats.EnvironmentID).Scan(&v).Error; err != nil {
				t.Fatal(err)
			}
			return v
		}
		subscriber := func() string {
			var ext string
			if err := s.DB().Raw(`SELECT s.subscriber_id FROM subscribers s JOIN messages m ON m.subscriber_id = s.id
				WHERE m.environment_id = ? GROUP BY s.subscriber_id ORDER BY COUNT(*) DESC, s.subscriber_id LIMIT 1`, stats.EnvironmentID).Scan(&ext).Error; err != nil {
				t.Fatal(err)
			}
			return ext
		}()

		tests := []struct {
			name  string
			query string
			want  dbtest.StatementCounts
		}{
			{"connection200NoCountWithoutTotalCount", `{ messagesConnection(first: 2) { pageInfo { hasNextPage } edges { node { _id } } } }`,
				dbtest.StatementCounts{All: 1}},
			{"connection200CountWithTotalCount", `{ messagesConnection(first: 2) { totalCount edges { node { _id } } } }`,
				dbtest.StatementCounts{All: 2, Count: 1}},
			{"connection200CountWithAliasedTotalCount", `{ messagesConnection(first: 2) { n: totalCount } }`,
				dbtest.StatementCounts{All: 2, Count: 1}},
			{"connection200NoCountWhenTheFirstPageIsAll", `{ messagesConnection(channel: push, first: 1000) { totalCount } }`,
				dbtest.StatementCounts{All: 1}},
			{"connection200NoEmbeddedRecordsWhenNotSelected", `{ messagesConnection(first: 2) { edges { cursor node { _id _subscriberId _templateId } } } }`,
				dbtest.StatementCounts{All: 1}},
			{"connection200OnlySubscribers", `{ messagesConnection(first: 2) { edges { node { subscriber { _id } } } } }`,
				dbtest.StatementCounts{All: 2, Subscribers: 1}},
			{"connection200OnlyTemplates", `{ messagesConnection(first: 2) { edges { node { template { _id } } } } }`,
				dbtest.StatementCounts{All: 2, Templates: 1}},
			{"connection200EmbeddedThroughFragments", `{ messagesConnection(first: 2) { ...C } }
				fragment C on MessageConnection { total: totalCount edges { ... on MessageEdge { node { ...M } } } }
				fragment M on Message { subscriber { _id } ... on Message { template { name } } }`,
				dbtest.StatementCounts{All: 2, Count: 1}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				log.Take()
				var data map[string]any
				decode(t, post(t, endpoint, tt.query, nil), &data)
				if diff := cmp.Diff(tt.want, dbtest.CountStatements(log.Take())); diff != "" {
					t.Errorf("statements (-want +got):\n%s", diff)
				}
			})
		}

		for _, fl := range []struct {
			name   string
			filter string
			depth  int
			max    int
		}{
			{"all", ``, 500, 2},
			{"subscriber", `subscriberId: "` + subscriber + `", `, 500, 2},
			{"channel", `channel: ` + busiest("channel") + `, `, 200, 2},
		} {
			t.Run("connection200DeepPageCostsTheFirstPage_"+fl.name, func(t *testing.T) {
				query := `query($after: String) { messagesConnection(` + fl.filter + `first: 10, after: $after) {
					totalCount pageInfo { hasNextPage endCursor } edges { cursor node { ` + messageFields + ` } } } }` + stepFields
				var costs []dbtest.StatementCounts
				// A cursor is bound to its filter: go deep in this one.
				var d struct{ MessagesConnection connection }
				decode(t, post(t, endpoint, fmt.Sprintf(`{ messagesConnection(%sfirst: %d) { pageInfo { endCursor } } }`, fl.filter, fl.depth), nil), &d)
				for _, after := range []*string{nil, d.MessagesConnection.PageInfo.EndCursor} {
					log.Take()
					var got struct{ MessagesConnection connection }
					decode(t, post(t, endpoint, query, map[string]any{"after": after}), &got)
					if len(got.MessagesConnection.Edges) != 10 || !got.MessagesConnection.PageInfo.HasNextPage {
						t.Fatalf("after %v: %d edges, hasNextPage %v; the test needs a full page with more", after != nil,
							len(got.MessagesConnection.Edges), got.MessagesConnection.PageInfo.HasNextPage)
					}
					// Templates come from the cache once read: a page reads those it has
					// not seen yet, in one statement.
					c := dbtest.CountStatements(log.Take())
					if c.Templates > 1 {
						t.Errorf("templates read in %d statements, want at most 1", c.Templates)
					}
					c.All -= c.Templates
					c.Templates = 0
					costs = append(costs, c)
				}
				if diff := cmp.Diff(costs[0], costs[1]); diff != "" {
					t.Errorf("statements (-first page +page %d deep):\n%s", fl.depth, diff)
				}
				if costs[0].All > fl.max {
					t.Errorf("a page costs %d statements besides templates, want at most %d (the page and its count)", costs[0].All, fl.max)
				}
			})
		}

		t.Run("connection200FullPageOfEveryFieldWithinComplexity", func(t *testing.T) {
			query := `{ messagesConnection(first: 1000) { totalCount pageInfo { hasNextPage endCursor } edges { cursor node { ` + messageFields + ` } } } }` + stepFields
			res := post(t, endpoint, query, nil)
			if len(res.Errors) > 0 {
				t.Fatalf("refused: %s", res.Body)
			}
		})

		t.Run("connection422ComplexityOfAliases", func(t *testing.T) {
			one := func(alias string) string {
				return alias + `: messagesConnection(first: 1000) { edges { cursor node { ` + messageFields + ` } } }`
			}
			res := post(t, endpoint, `{ `+one("a")+` `+one("b")+` `+one("c")+` }`+stepFields, nil)
			if diff := cmp.Diff([]problem{{Code: "COMPLEXITY_LIMIT_EXCEEDED"}}, problems(res)); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	})
}

// pageInfo is PageInfo with every field, as a test compares it.
type pageInfo struct {
	HasNextPage, HasPreviousPage bool
	StartCursor, EndCursor       *string
}

// TestMessagesConnectionPageInfo checks PageInfo on first, later, last and empty pages:
// startCursor and endCursor are the first and last edges' cursors (null on an empty page),
// hasPreviousPage is true exactly when the page follows a cursor.
func TestMessagesConnectionPageInfo(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		f := newConnectionFixture(t, s)
		endpoint := serve(t, newHandler(s, discard, defaults), f.a)
		query := `query($sub: String, $first: Int, $after: String) { messagesConnection(subscriberId: $sub, first: $first, after: $after) {
			edges { cursor } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }`
		ask := func(t *testing.T, sub string, first int, after *string) pageInfo {
			t.Helper()
			var got struct {
				MessagesConnection struct{ PageInfo pageInfo }
			}
			vars := map[string]any{"first": first, "after": after}
			if sub != "" {
				vars["sub"] = sub
			}
			decode(t, post(t, endpoint, query, vars), &got)
			return got.MessagesConnection.PageInfo
		}
		// Every cursor of the list, in its order: cursors are deterministic, so a page's
		// are the same as the whole list's.
		var cursors []string
		for _, e := range connect(t, endpoint, nil, 1000, nil).Edges {
			cursors = append(cursors, e.Cursor)
		}
		n := len(cursors)
		at := func(i int) *string { return &cursors[i] }
		tests := []struct {
			name  string
			sub   string
			first int
			after *string
			want  pageInfo
		}{
			{"connection200FirstPage", "", 3, nil, pageInfo{HasNextPage: true, StartCursor: at(0), EndCursor: at(2)}},
			{"connection200FirstPageIsAll", "", 1000, nil, pageInfo{StartCursor: at(0), EndCursor: at(n - 1)}},
			{"connection200LaterPage", "", 3, at(2), pageInfo{HasNextPage: true, HasPreviousPage: true, StartCursor: at(3), EndCursor: at(5)}},
			{"connection200LastPage", "", 3, at(n - 3), pageInfo{HasPreviousPage: true, StartCursor: at(n - 2), EndCursor: at(n - 1)}},
			{"connection200EmptyPageAfterTheLast", "", 3, at(n - 1), pageInfo{HasPreviousPage: true}},
			{"connection200EmptyPageUnknownSubscriber", "sub-nobody", 3, nil, pageInfo{}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				if diff := cmp.Diff(tt.want, ask(t, tt.sub, tt.first, tt.after)); diff != "" {
					t.Errorf("pageInfo (-want +got):\n%s", diff)
				}
			})
		}
	})
}
