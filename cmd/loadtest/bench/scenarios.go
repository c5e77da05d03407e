package bench

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"messages/cmd/loadtest/api"
	"messages/cmd/loadtest/measure"
)

// target is what the scenarios need to know of the server and its data, found at start.
type target struct {
	api.Server
	// pageSize is the page length of every list; deepPage the page number of the deep one.
	pageSize, deepPage int
	// inboxSubscriber is the external id of a subscriber with many messages.
	inboxSubscriber string
	// transactionIDs are a few real transaction ids.
	transactionIDs []string
	// markMessageIDs are messages of inboxSubscriber, targets of the mark action.
	markMessageIDs []string
	// cursors are the opaque GraphQL cursors of the deep cursor scenarios, by scenario.
	cursors map[string]string
}

// builder makes the i-th request of a scenario.
type builder func(ctx context.Context, t *target, i int64) (*http.Request, error)

// scenarioDef is a named scenario: how to build its requests, which status is success,
// and which raw floors it is compared with.
type scenarioDef struct {
	name  string
	about string
	build builder
	// want is the success status; GraphQL answers 200 and its errors are in the body.
	want    int
	graphql bool
	// floor is the raw floor of the same read, with totalCount when the scenario has one;
	// floorNoCount the same read without the count (empty when the scenario has no count).
	floor, floorNoCount string
	// needs says what discovery must have found for the scenario to run.
	needs func(t *target) string
}

// scenarios are every scenario, in the order they run.
var scenarios = []scenarioDef{
	{name: "rest-first-page", about: "GET /v1/messages (first page, with totalCount)", build: restFirstPage, want: http.StatusOK,
		floor: floorFirstPage, floorNoCount: floorFirstPageNoCount},
	{name: "rest-page-1000", about: "GET /v1/messages?limit=1000 (first page of 1,000, with totalCount: about 4 MB)", build: restPage1000, want: http.StatusOK},
	{name: "rest-inbox-page", about: "GET /v1/messages?subscriberId= (a busy subscriber's first page)", build: restInboxPage, want: http.StatusOK,
		floor: floorInboxPage, floorNoCount: floorInboxPageNoCount, needs: needInbox},
	{name: "rest-deep-page", about: "GET /v1/messages?page=DEEP", build: restDeepPage, want: http.StatusOK,
		floor: floorDeepPage, floorNoCount: floorDeepPageNoCount},
	{name: "rest-transactions", about: "GET /v1/messages?transactionId[]=... (5 ids)", build: restTransactions, want: http.StatusOK,
		floor: floorTransactions, floorNoCount: floorTransactionsNoCount, needs: needTransactions},
	{name: "graphql-first-page", about: "messages(limit) without totalCount", build: graphqlFirstPage, want: http.StatusOK, graphql: true,
		floor: floorFirstPageNoCount},
	{name: "graphql-first-page-count", about: "messages(limit) with totalCount", build: graphqlFirstPageCount, want: http.StatusOK, graphql: true,
		floor: floorFirstPage, floorNoCount: floorFirstPageNoCount},
	{name: "graphql-cursor-deep", about: "messagesConnection(first, after) at --cursor-depth", build: graphqlCursor("graphql-cursor-deep"), want: http.StatusOK, graphql: true,
		floor: floorCursorDeep, needs: needCursor("graphql-cursor-deep")},
	{name: "graphql-cursor-far", about: "messagesConnection(first, after) at --far-cursor-depth", build: graphqlCursor("graphql-cursor-far"), want: http.StatusOK, graphql: true,
		floor: floorCursorFar, needs: needCursor("graphql-cursor-far")},
	{name: "graphql-inbox-counts", about: "messageCounts(subscriberId, channel: in_app): a busy subscriber's badge and tabs", build: graphqlInboxCounts,
		want: http.StatusOK, graphql: true, needs: needInbox},
	{name: "graphql-environment-counts", about: "messageCounts: the environment's messages by state", build: graphqlEnvironmentCounts,
		want: http.StatusOK, graphql: true},
	{name: "graphql-unread-page", about: "messages(subscriberId, channel: in_app, read: false, archived: false): the unread tab", build: graphqlUnreadPage,
		want: http.StatusOK, graphql: true, needs: needInbox},
	{name: "mark-action", about: "POST .../actions/primary, status alternating, on the busy subscriber's messages", build: markAction, want: http.StatusCreated,
		needs: needMarkTargets},
}

func scenarioNames() []string {
	out := make([]string, len(scenarios))
	for i, s := range scenarios {
		out[i] = s.name
	}
	return out
}

func scenarioByName(name string) scenarioDef {
	for _, s := range scenarios {
		if s.name == name {
			return s
		}
	}
	panic("unknown scenario " + name)
}

func needInbox(t *target) string {
	if t.inboxSubscriber == "" {
		return "no subscriber found"
	}
	return ""
}

func needTransactions(t *target) string {
	if len(t.transactionIDs) == 0 {
		return "no transaction ids found"
	}
	return ""
}

func needMarkTargets(t *target) string {
	if t.inboxSubscriber == "" || len(t.markMessageIDs) == 0 {
		return "no messages of a subscriber found"
	}
	return ""
}

func needCursor(name string) func(t *target) string {
	return func(t *target) string {
		if _, ok := t.cursors[name]; !ok {
			return "no cursor"
		}
		return ""
	}
}

func restFirstPage(ctx context.Context, t *target, _ int64) (*http.Request, error) {
	return t.Get(ctx, t.ListURL(url.Values{"limit": {strconv.Itoa(t.pageSize)}}))
}

// restPage1000 is the largest page /v1 serves, whatever --page-size says: the encoding's
// cost and memory at their most.
func restPage1000(ctx context.Context, t *target, _ int64) (*http.Request, error) {
	return t.Get(ctx, t.ListURL(url.Values{"limit": {"1000"}}))
}

func restInboxPage(ctx context.Context, t *target, _ int64) (*http.Request, error) {
	return t.Get(ctx, t.ListURL(url.Values{"subscriberId": {t.inboxSubscriber}, "limit": {strconv.Itoa(t.pageSize)}}))
}

func restDeepPage(ctx context.Context, t *target, _ int64) (*http.Request, error) {
	return t.Get(ctx, t.ListURL(url.Values{"page": {strconv.Itoa(t.deepPage)}, "limit": {strconv.Itoa(t.pageSize)}}))
}

func restTransactions(ctx context.Context, t *target, _ int64) (*http.Request, error) {
	// transactionId[]=a&transactionId[]=b, as the axios-based SDK sends arrays.
	return t.Get(ctx, t.ListURL(url.Values{"transactionId[]": t.transactionIDs, "limit": {strconv.Itoa(t.pageSize)}}))
}

// markAction presses the primary button of one of the subscriber's messages, chosen by
// i, setting the status to done and pending in turn.
func markAction(ctx context.Context, t *target, i int64) (*http.Request, error) {
	id := t.markMessageIDs[int(uint64(i*2654435761)%uint64(len(t.markMessageIDs)))]
	status := "done"
	if i%2 == 1 {
		status = "pending"
	}
	body := fmt.Sprintf(`{"status":%q,"payload":{"loadtest":%d}}`, status, i)
	u := strings.TrimSuffix(t.BaseURL, "/") + "/v1/subscribers/" + url.PathEscape(t.inboxSubscriber) +
		"/messages/" + url.PathEscape(id) + "/actions/primary"
	return t.Post(ctx, u, []byte(body))
}

func graphqlFirstPage(ctx context.Context, t *target, _ int64) (*http.Request, error) {
	return t.GraphQL(ctx, api.FirstPageQuery, map[string]any{"limit": t.pageSize})
}

func graphqlFirstPageCount(ctx context.Context, t *target, _ int64) (*http.Request, error) {
	return t.GraphQL(ctx, api.FirstPageCountQuery, map[string]any{"limit": t.pageSize})
}

func graphqlInboxCounts(ctx context.Context, t *target, _ int64) (*http.Request, error) {
	return t.GraphQL(ctx, api.InboxCountsQuery, map[string]any{"subscriberId": t.inboxSubscriber})
}

func graphqlEnvironmentCounts(ctx context.Context, t *target, _ int64) (*http.Request, error) {
	return t.GraphQL(ctx, api.EnvironmentCountsQuery, nil)
}

func graphqlUnreadPage(ctx context.Context, t *target, _ int64) (*http.Request, error) {
	return t.GraphQL(ctx, api.UnreadPageQuery, map[string]any{"subscriberId": t.inboxSubscriber, "limit": t.pageSize})
}

func graphqlCursor(name string) builder {
	return func(ctx context.Context, t *target, _ int64) (*http.Request, error) {
		return t.GraphQL(ctx, api.CursorPageQuery, map[string]any{"first": t.pageSize, "after": t.cursors[name]})
	}
}

// httpOperation turns a scenario into an operation against t.
func httpOperation(client *http.Client, t *target, s scenarioDef) measure.Operation {
	return func(ctx context.Context, i int64) error {
		req, err := s.build(ctx, t, i)
		if err != nil {
			return err
		}
		_, err = api.Send(client, req, s.want, s.graphql)
		return err
	}
}
