package graph_test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"messages/models"
	"messages/models/dbtest"
	"messages/models/store"
)

const pageFields = `totalCount hasMore pageSize page data { _id }`

func TestMessagesArguments(t *testing.T) {
	hundred := make([]string, 100)
	for i := range hundred {
		hundred[i] = fmt.Sprintf("txn-%d", i+1)
	}
	tests := []struct {
		name string
		args string
		// declare declares the variables args uses, given in variables.
		declare   string
		variables map[string]any
		want      pageSummary
	}{
		{"graph200Defaults", ``, ``, nil, pageSummary{
			Names: []string{"g12", "g11", "g10", "g9", "g8", "g7", "g6", "g5", "g4", "g3"}, TotalCount: 12, HasMore: true, PageSize: 10, Page: 0}},
		{"graph200Channel", `(channel: email)`, ``, nil, pageSummary{
			Names: []string{"g11", "g8", "g5", "g2"}, TotalCount: 4, PageSize: 10}},
		{"graph200SubscriberId", `(subscriberId: "sub-alice")`, ``, nil, pageSummary{
			Names: []string{"g11", "g9", "g7", "g5", "g3", "g1"}, TotalCount: 6, PageSize: 10}},
		{"graph200TransactionIds", `(transactionId: ["txn-1", "txn-4"])`, ``, nil, pageSummary{
			Names: []string{"g4", "g1"}, TotalCount: 2, PageSize: 10}},
		{"graph200TransactionIdAsSingleValue", `(transactionId: "txn-3")`, ``, nil, pageSummary{
			Names: []string{"g3"}, TotalCount: 1, PageSize: 10}},
		{"graph200HundredTransactionIds", `(transactionId: $txn, limit: 100)`, `($txn: [String!])`, map[string]any{"txn": hundred}, pageSummary{
			Names: []string{"g12", "g11", "g10", "g9", "g8", "g7", "g6", "g5", "g4", "g3", "g2", "g1"}, TotalCount: 12, PageSize: 100}},
		{"graph200PageAndLimit", `(page: 1, limit: 5)`, ``, nil, pageSummary{
			Names: []string{"g7", "g6", "g5", "g4", "g3"}, TotalCount: 12, HasMore: true, PageSize: 5, Page: 1}},
		{"graph200FullLastPageHasNoMore", `(page: 2, limit: 4)`, ``, nil, pageSummary{
			Names: []string{"g4", "g3", "g2", "g1"}, TotalCount: 12, PageSize: 4, Page: 2}},
		{"graph200PagePastTheEnd", `(page: 5, limit: 4)`, ``, nil, pageSummary{
			Names: []string{}, TotalCount: 12, PageSize: 4, Page: 5}},
		{"graph200MaxLimit", `(limit: 1000)`, ``, nil, pageSummary{
			Names: []string{"g12", "g11", "g10", "g9", "g8", "g7", "g6", "g5", "g4", "g3", "g2", "g1"}, TotalCount: 12, PageSize: 1000}},
		{"graph200EveryArgument", `(channel: in_app, subscriberId: "sub-alice", transactionId: ["txn-1", "txn-4", "txn-7"], page: 0, limit: 1)`, ``, nil, pageSummary{
			Names: []string{"g7"}, TotalCount: 2, HasMore: true, PageSize: 1}},
		{"graph200EveryArgumentAsVariables", `(channel: $channel, subscriberId: $sub, transactionId: $txn, page: $page, limit: $limit)`,
			`($channel: ChannelType, $sub: String, $txn: [String!], $page: Int, $limit: Int)`, map[string]any{"channel": "in_app", "sub": "sub-alice", "txn": []string{"txn-1", "txn-4", "txn-7"}, "page": 1, "limit": 1}, pageSummary{
				Names: []string{"g1"}, TotalCount: 2, PageSize: 1, Page: 1}},
		{"graph200OmittedVariablesUseDefaults", `(channel: $channel, subscriberId: $sub, transactionId: $txn, page: $page, limit: $limit)`,
			`($channel: ChannelType, $sub: String, $txn: [String!], $page: Int, $limit: Int)`, map[string]any{}, pageSummary{
				Names: []string{"g12", "g11", "g10", "g9", "g8", "g7", "g6", "g5", "g4", "g3"}, TotalCount: 12, HasMore: true, PageSize: 10}},
		{"graph200UnknownSubscriberIsEmpty", `(subscriberId: "sub-nobody")`, ``, nil, pageSummary{
			Names: []string{}, PageSize: 10}},
		{"graph200OtherTenantsSubscriberIsEmpty", `(subscriberId: "sub-carol")`, ``, nil, pageSummary{
			Names: []string{}, PageSize: 10}},
		{"graph200SharedTransactionIdOnlyOwn", `(transactionId: ["txn-1"])`, ``, nil, pageSummary{
			Names: []string{"g1"}, TotalCount: 1, PageSize: 10}},
	}
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		f := newGraphFixture(t, s)
		endpoint := serve(t, newHandler(s, discard, defaults), f.a)
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				query := `query` + tt.declare + ` { messages` + tt.args + ` { ` + pageFields + ` } }`
				var got struct{ Messages page }
				decode(t, post(t, endpoint, query, tt.variables), &got)
				if diff := cmp.Diff(tt.want, f.summarize(got.Messages)); diff != "" {
					t.Errorf("page (-want +got):\n%s", diff)
				}
			})
		}
	})
}

func TestMessagesBadInput(t *testing.T) {
	tooMany := make([]string, 101)
	for i := range tooMany {
		tooMany[i] = fmt.Sprintf("txn-%d", i)
	}
	tests := []struct {
		name      string
		query     string
		variables map[string]any
		want      []problem
	}{
		{"graph422LimitZero", `{ messages(limit: 0) { totalCount } }`, nil,
			[]problem{{Path: "messages", Code: "BAD_USER_INPUT", Field: "limit"}}},
		{"graph422LimitNegative", `{ messages(limit: -1) { totalCount } }`, nil,
			[]problem{{Path: "messages", Code: "BAD_USER_INPUT", Field: "limit"}}},
		{"graph422LimitOverMax", `{ messages(limit: 1001) { totalCount } }`, nil,
			[]problem{{Path: "messages", Code: "BAD_USER_INPUT", Field: "limit"}}},
		{"graph422PageNegative", `{ messages(page: -1) { totalCount } }`, nil,
			[]problem{{Path: "messages", Code: "BAD_USER_INPUT", Field: "page"}}},
		{"graph422PageTooFar", `{ messages(page: 10000001) { totalCount } }`, nil,
			[]problem{{Path: "messages", Code: "BAD_USER_INPUT", Field: "page"}}},
		{"graph422TooManyTransactionIds", `query($txn: [String!]) { messages(transactionId: $txn) { totalCount } }`, map[string]any{"txn": tooMany},
			[]problem{{Path: "messages", Code: "BAD_USER_INPUT", Field: "transactionId"}}},
		{"graph422SubscriberIdTooLong", `query($sub: String) { messages(subscriberId: $sub) { totalCount } }`, map[string]any{"sub": strings.Repeat("x", 256)},
			[]problem{{Path: "messages", Code: "BAD_USER_INPUT", Field: "subscriberId"}}},
		{"graph422UnknownChannel", `{ messages(channel: fax) { totalCount } }`, nil,
			[]problem{{Code: "GRAPHQL_VALIDATION_FAILED"}}},
		{"graph422UnknownChannelVariable", `query($c: ChannelType) { messages(channel: $c) { totalCount } }`, map[string]any{"c": "fax"},
			[]problem{{Path: "variable.c", Code: "GRAPHQL_VALIDATION_FAILED"}}},
	}
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		f := newGraphFixture(t, s)
		endpoint := serve(t, newHandler(s, discard, defaults), f.a)
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				res := post(t, endpoint, tt.query, tt.variables)
				if diff := cmp.Diff(tt.want, problems(res)); diff != "" {
					t.Errorf("errors (-want +got):\n%s\n%s", diff, res.Body)
				}
				if !res.dataIsNull() {
					t.Errorf("data = %s, want null", res.Data)
				}
			})
		}
	})
}

const markMutation = `mutation($sub: String!, $id: ID!, $type: ButtonType!, $status: MessageActionStatus!, $payload: JSON) {
	markMessageAction(subscriberId: $sub, messageId: $id, type: $type, status: $status, payload: $payload) {
		_id cta { type data { url } action { status buttons { type content } result { type payload } } }
	}
}`

// ctaJSON is a message's cta as GraphQL returns it, decoded for comparison.
type ctaJSON struct {
	ID  string `json:"_id"`
	CTA any    `json:"cta"`
}

func TestMarkMessageAction(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		f := newGraphFixture(t, s)
		endpoint := serve(t, newHandler(s, discard, defaults), f.a)
		g1 := f.msgs["g1"]
		wantCTA := map[string]any{
			"type": "redirect", "data": map[string]any{"url": "/x"},
			"action": map[string]any{
				"status":  "done",
				"buttons": []any{map[string]any{"type": "primary", "content": "Accept"}, map[string]any{"type": "secondary", "content": "Decline"}},
				"result":  map[string]any{"type": "secondary", "payload": map[string]any{"reason": "late", "n": []any{1.0, 2.5}, "nested": map[string]any{"ok": true}}},
			},
		}

		t.Run("graph200MarkStoresAndReturnsPayload", func(t *testing.T) {
			payload := map[string]any{"reason": "late", "n": []any{1, 2.5}, "nested": map[string]any{"ok": true}}
			var got struct{ MarkMessageAction ctaJSON }
			decode(t, post(t, endpoint, markMutation, map[string]any{
				"sub": "sub-alice", "id": g1.ID, "type": "secondary", "status": "done", "payload": payload}), &got)
			if diff := cmp.Diff(ctaJSON{ID: g1.ID, CTA: wantCTA}, got.MarkMessageAction); diff != "" {
				t.Errorf("mutation result (-want +got):\n%s", diff)
			}

			// A later read returns what was stored.
			var listed struct {
				Messages struct{ Data []ctaJSON }
			}
			decode(t, post(t, endpoint, `{ messages(transactionId: "txn-1") {
				data { _id cta { type data { url } action { status buttons { type content } result { type payload } } } } } }`, nil), &listed)
			if diff := cmp.Diff([]ctaJSON{{ID: g1.ID, CTA: wantCTA}}, listed.Messages.Data); diff != "" {
				t.Errorf("listed after mark (-want +got):\n%s", diff)
			}

			var stored any
			if err := json.Unmarshal(dbtest.LoadMessage(t, s, g1.ID).CTA.Action.Result.Payload, &stored); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(wantCTA["action"].(map[string]any)["result"].(map[string]any)["payload"], stored); diff != "" {
				t.Errorf("stored payload (-want +got):\n%s", diff)
			}
		})

		t.Run("graph200MarkWithoutPayloadKeepsIt", func(t *testing.T) {
			var got struct{ MarkMessageAction ctaJSON }
			decode(t, post(t, endpoint, markMutation, map[string]any{
				"sub": "sub-alice", "id": g1.ID, "type": "secondary", "status": "done"}), &got)
			if diff := cmp.Diff(ctaJSON{ID: g1.ID, CTA: wantCTA}, got.MarkMessageAction); diff != "" {
				t.Errorf("mutation result (-want +got):\n%s", diff)
			}
		})

		other := f.msgs["b1"]
		bob := f.msgs["g2"]
		tests := []struct {
			name      string
			variables map[string]any
			want      []problem
		}{
			{"graph404UnknownMessage", map[string]any{"sub": "sub-alice", "id": models.NewID(time.Now()), "type": "primary", "status": "done"},
				[]problem{{Path: "markMessageAction", Code: "NOT_FOUND"}}},
			{"graph404MalformedId", map[string]any{"sub": "sub-alice", "id": "nope", "type": "primary", "status": "done"},
				[]problem{{Path: "markMessageAction", Code: "NOT_FOUND"}}},
			{"graph404OtherTenantsMessage", map[string]any{"sub": "sub-alice", "id": other.ID, "type": "primary", "status": "done"},
				[]problem{{Path: "markMessageAction", Code: "NOT_FOUND"}}},
			{"graph404OtherSubscribersMessage", map[string]any{"sub": "sub-alice", "id": bob.ID, "type": "primary", "status": "done"},
				[]problem{{Path: "markMessageAction", Code: "NOT_FOUND"}}},
			{"graph404UnknownSubscriber", map[string]any{"sub": "sub-nobody", "id": g1.ID, "type": "primary", "status": "done"},
				[]problem{{Path: "markMessageAction", Code: "NOT_FOUND"}}},
			{"graph422PayloadList", map[string]any{"sub": "sub-alice", "id": g1.ID, "type": "primary", "status": "done", "payload": []any{1, 2}},
				[]problem{{Path: "markMessageAction", Code: "BAD_USER_INPUT", Field: "payload"}}},
			{"graph422PayloadString", map[string]any{"sub": "sub-alice", "id": g1.ID, "type": "primary", "status": "done", "payload": "text"},
				[]problem{{Path: "markMessageAction", Code: "BAD_USER_INPUT", Field: "payload"}}},
			{"graph422PayloadNumber", map[string]any{"sub": "sub-alice", "id": g1.ID, "type": "primary", "status": "done", "payload": 3},
				[]problem{{Path: "markMessageAction", Code: "BAD_USER_INPUT", Field: "payload"}}},
			{"graph422PayloadBoolean", map[string]any{"sub": "sub-alice", "id": g1.ID, "type": "primary", "status": "done", "payload": true},
				[]problem{{Path: "markMessageAction", Code: "BAD_USER_INPUT", Field: "payload"}}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				before := dbtest.LoadMessage(t, s, g1.ID)
				res := post(t, endpoint, markMutation, tt.variables)
				if diff := cmp.Diff(tt.want, problems(res)); diff != "" {
					t.Errorf("errors (-want +got):\n%s\n%s", diff, res.Body)
				}
				if !res.dataIsNull() {
					t.Errorf("data = %s, want null", res.Data)
				}
				if diff := cmp.Diff(before.CTA, dbtest.LoadMessage(t, s, g1.ID).CTA); diff != "" {
					t.Errorf("a refused mark changed the message (-before +after):\n%s", diff)
				}
			})
		}

		t.Run("graph404OtherTenantLooksLikeMissing", func(t *testing.T) {
			missing := post(t, endpoint, markMutation, map[string]any{"sub": "sub-alice", "id": models.NewID(time.Now()), "type": "primary", "status": "done"})
			foreign := post(t, endpoint, markMutation, map[string]any{"sub": "sub-alice", "id": other.ID, "type": "primary", "status": "done"})
			if diff := cmp.Diff(missing.Errors, foreign.Errors); diff != "" {
				t.Errorf("another tenant's message answers differently from a missing one (-missing +foreign):\n%s", diff)
			}
		})

		t.Run("graph422PayloadListLiteral", func(t *testing.T) {
			res := post(t, endpoint, fmt.Sprintf(`mutation { markMessageAction(subscriberId: "sub-alice", messageId: %q, type: primary, status: done, payload: [1, 2]) { _id } }`, g1.ID), nil)
			want := []problem{{Path: "markMessageAction", Code: "BAD_USER_INPUT", Field: "payload"}}
			if diff := cmp.Diff(want, problems(res)); diff != "" {
				t.Errorf("errors (-want +got):\n%s\n%s", diff, res.Body)
			}
		})
	})
}

func TestUnauthenticated(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		f := newGraphFixture(t, s)
		log := dbtest.RecordStatements(t, s)
		endpoint := serve(t, newHandler(s, discard, defaults), nil)
		tests := []struct {
			name      string
			query     string
			variables map[string]any
			want      []problem
		}{
			{"graph401Query", `{ messages { totalCount data { _id } } }`, nil,
				[]problem{{Path: "messages", Code: "UNAUTHENTICATED"}}},
			{"graph401Mutation", markMutation, map[string]any{"sub": "sub-alice", "id": f.msgs["g1"].ID, "type": "primary", "status": "done"},
				[]problem{{Path: "markMessageAction", Code: "UNAUTHENTICATED"}}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				log.Take()
				res := post(t, endpoint, tt.query, tt.variables)
				if diff := cmp.Diff(tt.want, problems(res)); diff != "" {
					t.Errorf("errors (-want +got):\n%s\n%s", diff, res.Body)
				}
				if !res.dataIsNull() {
					t.Errorf("data = %s, want null", res.Data)
				}
				if n := len(log.Take()); n != 0 {
					t.Errorf("an unauthenticated request ran %d statements, want none", n)
				}
			})
		}
	})
}

// TestInternalErrorMasked closes the database under the server: the client sees only
// "internal error" and an id, and the log holds the cause under that id.
func TestInternalErrorMasked(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		f := newGraphFixture(t, s)
		var logs lockedBuffer
		endpoint := serve(t, newHandler(s, slogTo(&logs), defaults), f.a)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}

		for _, tt := range []struct {
			name, query string
			variables   map[string]any
			path        string
		}{
			{"graph500Query", `{ messages { totalCount data { _id } } }`, nil, "messages"},
			{"graph500Mutation", markMutation, map[string]any{"sub": "sub-alice", "id": f.msgs["g1"].ID, "type": "primary", "status": "done"}, "markMessageAction"},
		} {
			t.Run(tt.name, func(t *testing.T) {
				res := post(t, endpoint, tt.query, tt.variables)
				if len(res.Errors) != 1 {
					t.Fatalf("got %d errors, want 1: %s", len(res.Errors), res.Body)
				}
				e := res.Errors[0]
				errorID, _ := e.Extensions["errorId"].(string)
				if !models.IsID(errorID) {
					t.Errorf("extensions.errorId = %v, want an id", e.Extensions["errorId"])
				}
				want := gqlError{Message: "internal error", Path: []any{tt.path},
					Extensions: map[string]any{"code": "INTERNAL_SERVER_ERROR", "errorId": errorID}}
				if diff := cmp.Diff(want, e); diff != "" {
					t.Errorf("error (-want +got):\n%s", diff)
				}
				if !res.dataIsNull() {
					t.Errorf("data = %s, want null", res.Data)
				}
				for _, leak := range []string{"sql", "database", "closed", "gorm", "select"} {
					if strings.Contains(strings.ToLower(res.Body), leak) {
						t.Errorf("response leaks %q: %s", leak, res.Body)
					}
				}
				if !regexp.MustCompile(`errorId=` + errorID + `\b.*database is closed`).MatchString(logs.String()) {
					t.Errorf("the log has no line with errorId=%s and the cause:\n%s", errorID, logs.String())
				}
			})
		}
	})
}

func TestRecordWireFormat(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		tn := dbtest.NewTenant(t, s, "a")
		sub, tpl := tn.Subscriber(t, "sub-alice"), tn.Template(t, "tpl")
		tn.Message(t, sub, tpl, func(m *models.Message) {
			m.LastSeenDate = models.TimePtr(dbtest.Base.Add(1750 * time.Millisecond))
			m.LastReadDate = models.TimePtr(time.Date(2025, 3, 1, 10, 0, 0, 5_000_000, time.FixedZone("CET", 3600)))
		})
		endpoint := serve(t, newHandler(s, discard, defaults), tn)

		var got struct {
			Messages struct{ Data []map[string]any }
		}
		decode(t, post(t, endpoint, `{ messages { data {
			createdAt deliveredAt lastSeenDate lastReadDate snoozedUntil
			subscriber { _v subscriberId lastOnlineAt createdAt updatedAt }
			template { deletedAt }
		} } }`, nil), &got)
		want := []map[string]any{{
			"createdAt":    "2025-03-01T08:00:01.000Z",
			"deliveredAt":  []any{"2025-03-01T08:00:01.000Z"},
			"lastSeenDate": "2025-03-01T08:00:01.750Z",
			"lastReadDate": "2025-03-01T09:00:00.005Z",
			"snoozedUntil": nil,
			"subscriber": map[string]any{"_v": 3.0, "subscriberId": "sub-alice", "lastOnlineAt": "2025-03-01T08:00:00.000Z",
				"createdAt": "2025-03-01T08:00:00.000Z", "updatedAt": "2025-03-01T09:00:00.000Z"},
			"template": map[string]any{"deletedAt": nil},
		}}
		if diff := cmp.Diff(want, got.Messages.Data); diff != "" {
			t.Errorf("record (-want +got):\n%s", diff)
		}
	})
}

// TestSelectionAwareness checks that a query pays only for what it selects: no COUNT
// without totalCount, no template query without template fields, and that a page is
// one statement (plus its count) once its templates are cached.
func TestSelectionAwareness(t *testing.T) {
	tests := []struct {
		name  string
		query string
		want  dbtest.StatementCounts
	}{
		{"graph200NoCountWithoutTotalCount", `{ messages(limit: 2) { hasMore data { _id } } }`,
			dbtest.StatementCounts{All: 1}},
		{"graph200CountWithTotalCount", `{ messages(limit: 2) { totalCount data { _id } } }`,
			dbtest.StatementCounts{All: 2, Count: 1}},
		{"graph200CountWithAliasedTotalCount", `{ messages(limit: 2) { n: totalCount } }`,
			dbtest.StatementCounts{All: 2, Count: 1}},
		{"graph200NoEmbeddedRecordsWhenNotSelected", `{ messages(limit: 2) { data { _id _subscriberId _templateId } } }`,
			dbtest.StatementCounts{All: 1}},
		// The first to select a subscriber reads the page's subscribers once, the first
		// to select a template its templates once...
		{"graph200OnlySubscribers", `{ messages(limit: 2) { data { subscriber { _id } } } }`,
			dbtest.StatementCounts{All: 2, Subscribers: 1}},
		{"graph200OnlyTemplates", `{ messages(limit: 2) { data { template { _id } } } }`,
			dbtest.StatementCounts{All: 2, Templates: 1}},
		// ...and the next finds both cached at the versions its page read.
		{"graph200EmbeddedThroughFragments", `{ messages(limit: 2) { ...P } } fragment P on MessagesPage { total: totalCount data { ... on Message { subscriber { _id } } ...T } } fragment T on Message { template { name } }`,
			dbtest.StatementCounts{All: 2, Count: 1}},
	}
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		f := newGraphFixture(t, s)
		log := dbtest.RecordStatements(t, s)
		endpoint := serve(t, newHandler(s, discard, defaults), f.a)
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				log.Take()
				var data map[string]any
				decode(t, post(t, endpoint, tt.query, nil), &data)
				got := dbtest.CountStatements(log.Take())
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("statements (-want +got):\n%s", diff)
				}
			})
		}

		t.Run("graph200SameStatementsForEverySize", func(t *testing.T) {
			var counts []dbtest.StatementCounts
			for _, size := range []int{1, 10, 100} {
				log.Take()
				var got struct {
					Messages struct{ Data []map[string]any }
				}
				decode(t, post(t, endpoint, fmt.Sprintf(`{ messages(limit: %d) { totalCount data { %s } } }`, size, messageFields)+stepFields, nil), &got)
				if len(got.Messages.Data) != min(size, 12) {
					t.Fatalf("limit %d: got %d messages", size, len(got.Messages.Data))
				}
				counts = append(counts, dbtest.CountStatements(log.Take()))
			}
			// Pages of 1 and 10 have more after them and count; the page of 100 does not
			// need to, so compare what does not depend on that.
			// Templates the earlier pages did not show are read once.
			for i := range counts {
				if counts[i].Templates > 1 {
					t.Errorf("templates read in %d statements, want at most 1", counts[i].Templates)
				}
				counts[i].All -= counts[i].Count + counts[i].Templates
				counts[i].Count, counts[i].Templates = 0, 0
			}
			want := []dbtest.StatementCounts{counts[0], counts[0], counts[0]}
			if diff := cmp.Diff(want, counts); diff != "" {
				t.Errorf("statements per page size 1, 10, 100 (-same as size 1 +got):\n%s", diff)
			}
			if counts[0].All != 1 {
				t.Errorf("a page costs %d statements besides its count and templates, want 1", counts[0].All)
			}
		})
	})
}
