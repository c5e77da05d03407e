package rest_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"messages/models"
	"messages/models/dbtest"
	"messages/models/store"
)

// inboxRows is every message of an environment as its state columns hold it, for
// comparing before and after a refused request.
func inboxRows(t testing.TB, s *store.Store, environmentID string) []map[string]any {
	t.Helper()
	var rows []map[string]any
	err := s.DB().Raw("SELECT id, `read`, seen, archived, archived_at, snoozed_until, action_status, action_result_type "+
		"FROM messages WHERE environment_id = ? ORDER BY id", environmentID).Scan(&rows).Error
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// Every filter the inbox API cannot apply is refused with 422 naming it, on every route
// and in every shape the client sends filters in (JSON bodies, the count's JSON
// filters, query strings), and changes nothing: an unknown member, a member given
// twice, a value of the wrong type, an empty group. Ignored, each would widen a bulk
// change or a count to messages the filter excludes. A filter that is well formed but
// matches nothing changes nothing either.
func TestInboxFiltersRefused(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		a := newInboxTenant(t, s, "inbox-filters")
		sub := a.Subscriber(t, "shared")
		plain, billing := a.Template(t, "plain"), a.Template(t, "billing")
		if err := s.DB().Exec("UPDATE templates SET tags = ? WHERE id = ?", `["billing"]`, billing.ID).Error; err != nil {
			t.Fatal(err)
		}
		var inApp string
		for i := range 17 {
			tpl := plain
			if i%3 == 0 {
				tpl = billing
			}
			inApp = a.Message(t, sub, tpl, func(m *models.Message) { m.Read = i%4 == 0 }).ID
		}
		email := a.Message(t, sub, plain, func(m *models.Message) { m.Channel = models.ChannelEmail }).ID
		api := newAPI(t, s)
		sess, _ := api.openSession(t, a, a.Key, "shared")
		before := inboxRows(t, s, a.Env.ID)
		countsBefore := gqlCounts(t, api, a.Key)

		count := func(filters string) string {
			return "/v1/inbox/notifications/count?filters=" + url.QueryEscape(filters)
		}
		const (
			archive = "/v1/inbox/notifications/archive"
			seen    = "/v1/inbox/notifications/seen"
		)
		typo := `{"and":[{"OR_typo":["no-such-tag"]}]}`
		for _, tt := range []struct {
			name, method, uri, body, field string
		}{
			{"archive422UnknownTagMember", http.MethodPost, archive, `{"tags":` + typo + `}`, "tags"},
			{"archive422TagsUnknownForm", http.MethodPost, archive, `{"tags":{"nor":["billing"]}}`, "tags"},
			{"archive422TagsBothForms", http.MethodPost, archive, `{"tags":{"or":["billing"],"and":[{"or":["plain"]}]}}`, "tags"},
			{"archive422TagsEmptyObject", http.MethodPost, archive, `{"tags":{}}`, "tags"},
			{"archive422TagsNestedAnd", http.MethodPost, archive, `{"tags":{"and":[{"and":[{"or":["billing"]}]}]}}`, "tags"},
			{"archive422TagsEmptyGroup", http.MethodPost, archive, `{"tags":{"and":[{"or":["billing"]},{"or":[]}]}}`, "tags"},
			{"archive422TagsGroupWithoutOr", http.MethodPost, archive, `{"tags":{"and":[{}]}}`, "tags"},
			{"archive422TagsRepeatedOr", http.MethodPost, archive, `{"tags":{"or":["no-such-tag"],"or":[]}}`, "or"},
			{"archive422TagsOrInOtherCase", http.MethodPost, archive, `{"tags":{"or":["no-such-tag"],"OR":["billing"]}}`, "OR"},
			{"archive422TagNotString", http.MethodPost, archive, `{"tags":[5]}`, "tags"},
			{"archive422TagNull", http.MethodPost, archive, `{"tags":["billing",null]}`, "tags"},
			{"archive422TagEmpty", http.MethodPost, archive, `{"tags":[""]}`, "tags"},
			{"archive422TagsString", http.MethodPost, archive, `{"tags":"billing"}`, "tags"},
			{"archive422UnknownMember", http.MethodPost, archive, `{"tagz":["no-such-tag"]}`, "tagz"},
			{"archive422RepeatedMember", http.MethodPost, archive, `{"tags":["no-such-tag"],"tags":[]}`, "tags"},
			{"archive422NotificationIds", http.MethodPost, archive, `{"notificationIds":["` + inApp + `"]}`, "notificationIds"},
			{"archive422Data", http.MethodPost, archive, `{"data":"{\"kind\":\"x\"}"}`, "data"},
			{"read422UnknownTagMember", http.MethodPost, "/v1/inbox/notifications/read", `{"tags":` + typo + `}`, "tags"},
			{"readArchive422UnknownTagMember", http.MethodPost, "/v1/inbox/notifications/read-archive", `{"tags":` + typo + `}`, "tags"},
			{"seen422UnknownTagMember", http.MethodPost, seen, `{"tags":` + typo + `}`, "tags"},
			{"seen422NotificationIdsString", http.MethodPost, seen, `{"notificationIds":"abc"}`, "notificationIds"},
			{"seen422NotificationIdNumber", http.MethodPost, seen, `{"notificationIds":[5]}`, "notificationIds"},
			{"seen422NotificationIdNull", http.MethodPost, seen, `{"notificationIds":[null]}`, "notificationIds"},
			{"seen422UnknownMember", http.MethodPost, seen, `{"notificationId":["` + inApp + `"]}`, "notificationId"},
			{"count422UnknownTagMember", http.MethodGet, count(`[{"tags":` + typo + `}]`), "", "tags"},
			{"count422TagsNestedAnd", http.MethodGet, count(`[{"tags":{"and":[{"and":[{"or":["billing"]}]}]}}]`), "", "tags"},
			{"count422UnknownMember", http.MethodGet, count(`[{"reed":false}]`), "", "reed"},
			{"count422RepeatedMember", http.MethodGet, count(`[{"read":true,"read":false}]`), "", "read"},
			{"count422ReadString", http.MethodGet, count(`[{"read":"false"}]`), "", "read"},
			{"count422SeverityNumber", http.MethodGet, count(`[{"severity":5}]`), "", "severity"},
			{"count422CreatedFraction", http.MethodGet, count(`[{"createdGte":1.5}]`), "", "createdGte"},
			{"count422FilterNotObject", http.MethodGet, count(`[5]`), "", "filters"},
			{"count422UnknownParameter", http.MethodGet, count(`[{}]`) + "&filter=x", "", "filter"},
			{"count422RepeatedFilters", http.MethodGet, count(`[{}]`) + "&filters=%5B%5D", "", "filters"},
			{"list422UnknownParameter", http.MethodGet, "/v1/inbox/notifications?reed=false", "", "reed"},
			{"list422RepeatedFlag", http.MethodGet, "/v1/inbox/notifications?read=true&read=false", "", "read"},
			{"list422TagsIndexWithoutGroup", http.MethodGet, "/v1/inbox/notifications?tags[0]=billing", "", "tags"},
			{"list422EmptyTag", http.MethodGet, "/v1/inbox/notifications?tags[]=", "", "tags"},
			{"list422SeverityBadBrackets", http.MethodGet, "/v1/inbox/notifications?severity[x]=high", "", "severity"},
			{"preferences422UnknownParameter", http.MethodGet, "/v1/inbox/preferences?tag=billing", "", "tag"},
			{"preferences422TagGroups", http.MethodGet, "/v1/inbox/preferences?tags[0][]=billing", "", "tags"},
			{"preferences422RepeatedCriticality", http.MethodGet, "/v1/inbox/preferences?criticality=all&criticality=critical", "", "criticality"},
		} {
			t.Run(tt.name, func(t *testing.T) {
				res := api.call(t, tt.method, tt.uri, sess, tt.body)
				body := errorBody(t, res, http.StatusUnprocessableEntity, tt.uri)
				if _, ok := body["errors"].(map[string]any)[tt.field]; !ok {
					t.Errorf("the refusal does not name %s: %s", tt.field, res.body)
				}
				if diff := cmp.Diff(before, inboxRows(t, s, a.Env.ID)); diff != "" {
					t.Errorf("a refused request changed messages (-before +after):\n%s", diff)
				}
			})
		}

		// GraphQL's filter is a typed input: gqlgen refuses its unknown fields and wrong
		// types, in the document and in variables, before anything runs.
		for _, tt := range []struct {
			name, query string
			variables   map[string]any
		}{
			{"markAllRefusedUnknownFieldLiteral", `mutation { markAllMessages(subscriberId: "shared", channel: in_app, where: {reed: false}, archived: true) { done } }`, nil},
			{"markAllRefusedUnknownFieldVariable", `mutation($w: MessageStateFilter) { markAllMessages(subscriberId: "shared", channel: in_app, where: $w, archived: true) { done } }`,
				map[string]any{"w": map[string]any{"reed": false}}},
			{"markAllRefusedWrongTypeVariable", `mutation($w: MessageStateFilter) { markAllMessages(subscriberId: "shared", channel: in_app, where: $w, archived: true) { done } }`,
				map[string]any{"w": map[string]any{"read": "false"}}},
			{"markAllRefusedChannelTypo", `mutation($c: ChannelType) { markAllMessages(subscriberId: "shared", channel: $c, archived: true) { done } }`,
				map[string]any{"c": "inapp"}},
		} {
			t.Run(tt.name, func(t *testing.T) {
				res := api.graphql(t, a.Key, tt.query, tt.variables)
				body := decode(t, res.body)
				if errs, _ := body["errors"].([]any); len(errs) == 0 || body["data"] != nil {
					t.Errorf("%d %s: want errors and no data", res.status, res.body)
				}
				if diff := cmp.Diff(before, inboxRows(t, s, a.Env.ID)); diff != "" {
					t.Errorf("a refused operation changed messages (-before +after):\n%s", diff)
				}
			})
		}

		// Variables that give a member twice: decoded, the last would win silently (this
		// archived the unread messages, read: false, of a filter sent as read: true).
		t.Run("markAll400RepeatedVariableMember", func(t *testing.T) {
			body := `{"query":"mutation($w: MessageStateFilter) { markAllMessages(subscriberId: \"shared\", channel: in_app, where: $w, archived: true) { done } }",` +
				`"variables":{"w":{"read":true,"read":false}}}`
			res := api.do(t, http.MethodPost, "/graphql", "ApiKey "+a.Key, http.Header{"Content-Type": {"application/json"}}, strings.NewReader(body))
			if res.status != http.StatusBadRequest || !strings.Contains(string(res.body), "given twice") {
				t.Errorf("%d %s: want 400 naming the repeated member", res.status, res.body)
			}
			if diff := cmp.Diff(before, inboxRows(t, s, a.Env.ID)); diff != "" {
				t.Errorf("a refused operation changed messages (-before +after):\n%s", diff)
			}
		})

		// The button of an email is not the inbox's to press: not found, as every other
		// change of a message that is not in-app.
		for _, change := range []string{"complete", "revert"} {
			t.Run(change+"404Email", func(t *testing.T) {
				uri := "/v1/inbox/notifications/" + email + "/" + change
				errorBody(t, api.call(t, http.MethodPatch, uri, sess, `{"actionType":"secondary"}`), http.StatusNotFound, uri)
				if diff := cmp.Diff(before, inboxRows(t, s, a.Env.ID)); diff != "" {
					t.Errorf("%s of an email changed messages (-before +after):\n%s", change, diff)
				}
			})
		}

		// Well formed, matching nothing: 200, nothing changed.
		for _, tt := range []struct{ name, uri, body string }{
			{"archive200NoSuchTagChangesNone", archive, `{"tags":{"and":[{"or":["no-such-tag"]}]}}`},
			{"seen200NoIdsChangesNone", seen, `{"notificationIds":[]}`},
		} {
			t.Run(tt.name, func(t *testing.T) {
				res := api.call(t, http.MethodPost, tt.uri, sess, tt.body)
				if diff := cmp.Diff(map[string]any{"data": map[string]any{"changed": 0.0}}, decode(t, res.body)); diff != "" {
					t.Errorf("%d (-want +got):\n%s", res.status, diff)
				}
				if diff := cmp.Diff(before, inboxRows(t, s, a.Env.ID)); diff != "" {
					t.Errorf("changed messages (-before +after):\n%s", diff)
				}
			})
		}
		if diff := cmp.Diff(countsBefore, gqlCounts(t, api, a.Key)); diff != "" {
			t.Errorf("counts moved (-before +after):\n%s", diff)
		}

		// The empty forms the client itself takes for no filter are no filter.
		res := api.call(t, http.MethodGet, count(`[{"tags":[]},{"tags":{"or":[]}},{"tags":{"and":[]}},{"tags":null,"read":null},{}]`), sess, "")
		if res.status != http.StatusOK {
			t.Fatalf("empty forms: %d %s", res.status, res.body)
		}
		for i, d := range decode(t, res.body)["data"].([]any) {
			if got := d.(map[string]any)["count"]; got != 17.0 {
				t.Errorf("empty form %d counts %v, want all 17", i, got)
			}
		}
	}, inboxSealer(t))
}

// The keyless session's smaller refusals: a body over the edge's limit is 413 stating
// that limit, and a subscriber's data deeper than any stored value may be is 422.
func TestInboxSessionLimits(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		a := newInboxTenant(t, s, "inbox-session-limits")
		api := newAPI(t, s)
		large := `{"applicationIdentifier":"` + strings.Repeat("a", 20<<10) + `"}`
		res := api.call(t, http.MethodPost, "/v1/inbox/session", "", large)
		body := errorBody(t, res, http.StatusRequestEntityTooLarge, "/v1/inbox/session")
		if msg := body["message"].(string); !strings.Contains(msg, "16 KiB") {
			t.Errorf("413 message %q does not state the 16 KiB limit", msg)
		}
		withData := func(subscriberID, data string) string {
			return fmt.Sprintf(`{"applicationIdentifier":%q,"subscriberHash":%q,"subscriber":{"subscriberId":%q,"data":%s}}`,
				a.app, hashOf(a.Key, subscriberID), subscriberID, data)
		}
		res = api.call(t, http.MethodPost, "/v1/inbox/session", "", withData("deep", nested(models.MaxJSONDepth+1)))
		if _, ok := errorBody(t, res, http.StatusUnprocessableEntity, "/v1/inbox/session")["errors"].(map[string]any)["subscriber.data"]; !ok {
			t.Errorf("the refusal does not name subscriber.data: %s", res.body)
		}
		var n int64
		if err := s.DB().Raw("SELECT COUNT(*) FROM subscribers WHERE subscriber_id = ?", "deep").Scan(&n).Error; err != nil || n != 0 {
			t.Errorf("a refused session created its subscriber (%d rows, %v)", n, err)
		}
		if res := api.call(t, http.MethodPost, "/v1/inbox/session", "", withData("deepest", nested(models.MaxJSONDepth))); res.status != http.StatusCreated {
			t.Errorf("data of %d levels: %d %s", models.MaxJSONDepth, res.status, res.body)
		}
	}, inboxSealer(t))
}

// nested is a JSON object nesting depth levels: {"a":{"a":...{}}}.
func nested(depth int) string {
	return strings.Repeat(`{"a":`, depth-1) + "{}" + strings.Repeat("}", depth-1)
}
