package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// target is what the scenarios need to know of the server and its data, found at start.
type target struct {
	baseURL string
	apiKey  string
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

// listURL is GET /v1/messages with query values.
func (t *target) listURL(q url.Values) string {
	u := strings.TrimSuffix(t.baseURL, "/") + "/v1/messages"
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	return u
}

func (t *target) get(ctx context.Context, u string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "ApiKey "+t.apiKey)
	req.Header.Set("Accept", "application/json")
	return req, nil
}

func (t *target) post(ctx context.Context, u string, body []byte) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "ApiKey "+t.apiKey)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	return req, nil
}

func restFirstPage(ctx context.Context, t *target, _ int64) (*http.Request, error) {
	return t.get(ctx, t.listURL(url.Values{"limit": {strconv.Itoa(t.pageSize)}}))
}

// restPage1000 is the largest page /v1 serves, whatever --page-size says: the encoding's
// cost and memory at their most.
func restPage1000(ctx context.Context, t *target, _ int64) (*http.Request, error) {
	return t.get(ctx, t.listURL(url.Values{"limit": {"1000"}}))
}

func restInboxPage(ctx context.Context, t *target, _ int64) (*http.Request, error) {
	return t.get(ctx, t.listURL(url.Values{"subscriberId": {t.inboxSubscriber}, "limit": {strconv.Itoa(t.pageSize)}}))
}

func restDeepPage(ctx context.Context, t *target, _ int64) (*http.Request, error) {
	return t.get(ctx, t.listURL(url.Values{"page": {strconv.Itoa(t.deepPage)}, "limit": {strconv.Itoa(t.pageSize)}}))
}

func restTransactions(ctx context.Context, t *target, _ int64) (*http.Request, error) {
	// transactionId[]=a&transactionId[]=b, as the axios-based SDK sends arrays.
	return t.get(ctx, t.listURL(url.Values{"transactionId[]": t.transactionIDs, "limit": {strconv.Itoa(t.pageSize)}}))
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
	u := strings.TrimSuffix(t.baseURL, "/") + "/v1/subscribers/" + url.PathEscape(t.inboxSubscriber) +
		"/messages/" + url.PathEscape(id) + "/actions/primary"
	return t.post(ctx, u, []byte(body))
}

// messageFields is what the GraphQL scenarios select of each message: an inbox row with
// its call-to-action, subscriber and template.
const messageFields = `fragment Row on Message {
  _id createdAt channel transactionId subject title read seen status
  content { type content url }
  cta { type data { url } action { status buttons { type content } result { type payload } } }
  payload
  subscriber { _id subscriberId firstName lastName email }
  template { _id name }
}`

const (
	firstPageQuery = `query FirstPage($limit: Int) {
  messages(limit: $limit) { hasMore page pageSize data { ...Row } }
}
` + messageFields
	firstPageCountQuery = `query FirstPageCount($limit: Int) {
  messages(limit: $limit) { totalCount hasMore page pageSize data { ...Row } }
}
` + messageFields
	cursorPageQuery = `query CursorPage($first: Int, $after: String) {
  messagesConnection(first: $first, after: $after) {
    edges { cursor node { ...Row } }
    pageInfo { hasNextPage endCursor }
  }
}
` + messageFields
	// cursorWalkQuery finds a deep cursor: page info only, nothing of the rows.
	cursorWalkQuery = `query CursorWalk($first: Int, $after: String) {
  messagesConnection(first: $first, after: $after) { pageInfo { hasNextPage endCursor } }
}`
)

// graphqlBody is a GraphQL request.
type graphqlBody struct {
	Query     string         `json:"query"`
	Variables map[string]any `json:"variables,omitempty"`
}

func (t *target) graphql(ctx context.Context, query string, vars map[string]any) (*http.Request, error) {
	body, err := json.Marshal(graphqlBody{Query: query, Variables: vars})
	if err != nil {
		return nil, err
	}
	return t.post(ctx, strings.TrimSuffix(t.baseURL, "/")+"/graphql", body)
}

func graphqlFirstPage(ctx context.Context, t *target, _ int64) (*http.Request, error) {
	return t.graphql(ctx, firstPageQuery, map[string]any{"limit": t.pageSize})
}

func graphqlFirstPageCount(ctx context.Context, t *target, _ int64) (*http.Request, error) {
	return t.graphql(ctx, firstPageCountQuery, map[string]any{"limit": t.pageSize})
}

func graphqlCursor(name string) builder {
	return func(ctx context.Context, t *target, _ int64) (*http.Request, error) {
		return t.graphql(ctx, cursorPageQuery, map[string]any{"first": t.pageSize, "after": t.cursors[name]})
	}
}

// send performs a request and reads the whole body. A status other than want, a
// transport failure or, on GraphQL, a response with errors is an error.
func send(client *http.Client, req *http.Request, want int, graphql bool) ([]byte, error) {
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("read body: %w", err)
	}
	if resp.StatusCode != want {
		return body, fmt.Errorf("%s %s: status %d: %s", req.Method, req.URL.Path, resp.StatusCode, clip(body))
	}
	// gqlgen writes "errors" first, so a response with errors starts with it.
	if graphql && bytes.HasPrefix(bytes.TrimSpace(body), []byte(`{"errors"`)) {
		return body, fmt.Errorf("%s %s: GraphQL errors: %s", req.Method, req.URL.Path, clip(body))
	}
	return body, nil
}

// clip shortens a response body for an error message.
func clip(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 300 {
		return s[:300] + "..."
	}
	return s
}

// httpOperation turns a scenario into an operation against t.
func httpOperation(client *http.Client, t *target, s scenarioDef) operation {
	return func(ctx context.Context, i int64) error {
		req, err := s.build(ctx, t, i)
		if err != nil {
			return err
		}
		_, err = send(client, req, s.want, s.graphql)
		return err
	}
}
