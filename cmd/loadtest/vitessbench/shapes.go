package vitessbench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"messages/cmd/loadtest/api"
)

// side is one server and what the shapes need of each environment on it, found at start.
type side struct {
	name string // "direct" or "vitess"
	url  string
	envs []*sideEnv
}

// sideEnv is one environment on one side.
type sideEnv struct {
	env    environment
	server api.Server // the side's URL and the environment's API key there
	// session is the subscriber's inbox session token (POST /v1/inbox/session).
	session string
	// cursor points after the row at depth of the environment's list.
	cursor string
	// markIDs are messages of the subscriber, the targets of the mark shape; inboxIDs its
	// in-app messages, the targets of the inbox state change.
	markIDs, inboxIDs []string
}

// shape is one row of the table: a request, built for the i-th call on an environment.
type shape struct {
	name, about string
	build       func(ctx context.Context, e *sideEnv, pageSize int, i int64) (*http.Request, error)
	want        int  // the status of success
	graphql     bool // a response with errors fails
}

// shapes are the rows of the table, in the order they run.
var shapes = []shape{
	{name: "list", about: "GET /v1/messages?limit=PAGE, the first page", build: listPage, want: http.StatusOK},
	{name: "cursor", about: "messagesConnection(first: PAGE, after: the cursor DEPTH rows deep)", build: cursorPage, want: http.StatusOK, graphql: true},
	{name: "count", about: "messageCounts(subscriberId, channel: in_app): the subscriber's badge and tabs", build: inboxCounts, want: http.StatusOK, graphql: true},
	{name: "mark", about: "POST /v1/subscribers/{id}/messages/{id}/actions/primary, done and pending in turn", build: markAction, want: http.StatusCreated},
	{name: "inbox-read", about: "PATCH /v1/inbox/notifications/{id}/read and /unread in turn, with the subscriber's session", build: inboxChange, want: http.StatusOK},
}

func shapeNames() []string {
	out := make([]string, len(shapes))
	for i, s := range shapes {
		out[i] = s.name
	}
	return out
}

func shapeByName(name string) shape {
	for _, s := range shapes {
		if s.name == name {
			return s
		}
	}
	panic("unknown shape " + name)
}

func listPage(ctx context.Context, e *sideEnv, pageSize int, _ int64) (*http.Request, error) {
	return e.server.Get(ctx, e.server.ListURL(url.Values{"limit": {strconv.Itoa(pageSize)}}))
}

func cursorPage(ctx context.Context, e *sideEnv, pageSize int, _ int64) (*http.Request, error) {
	return e.server.GraphQL(ctx, api.CursorPageQuery, map[string]any{"first": pageSize, "after": e.cursor})
}

func inboxCounts(ctx context.Context, e *sideEnv, _ int, _ int64) (*http.Request, error) {
	return e.server.GraphQL(ctx, api.InboxCountsQuery, map[string]any{"subscriberId": e.env.Subscriber})
}

// pick is the i-th target of ids, in a scattered order.
func pick(ids []string, i int64) string {
	return ids[int(uint64(i*2654435761)%uint64(len(ids)))]
}

// markAction presses the primary button of one of the subscriber's messages, setting the
// status to done and pending in turn, as the list benchmark's mark-action does.
func markAction(ctx context.Context, e *sideEnv, _ int, i int64) (*http.Request, error) {
	status := "done"
	if i%2 == 1 {
		status = "pending"
	}
	body := fmt.Sprintf(`{"status":%q,"payload":{"loadtest":%d}}`, status, i)
	u := strings.TrimSuffix(e.server.BaseURL, "/") + "/v1/subscribers/" + url.PathEscape(e.env.Subscriber) +
		"/messages/" + url.PathEscape(pick(e.markIDs, i)) + "/actions/primary"
	return e.server.Post(ctx, u, []byte(body))
}

// inboxChange reads or unreads one of the subscriber's in-app messages, in turn, through
// the subscriber's session, as the inbox client does: each call changes a row (and its
// counters) more often than not.
func inboxChange(ctx context.Context, e *sideEnv, _ int, i int64) (*http.Request, error) {
	change := "read"
	if (i/2)%2 == 1 {
		change = "unread"
	}
	u := strings.TrimSuffix(e.server.BaseURL, "/") + "/v1/inbox/notifications/" + url.PathEscape(pick(e.inboxIDs, i/2)) + "/" + change
	req, err := http.NewRequestWithContext(ctx, http.MethodPatch, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+e.session)
	req.Header.Set("Accept", "application/json")
	return req, nil
}

// prepare finds, on each side and environment, the session, the cursor at depth and the
// targets of the writes, and checks that both sides return the same rows for the reads.
func prepare(ctx context.Context, client *http.Client, sides []*side, c config) error {
	for _, s := range sides {
		for _, e := range s.envs {
			if err := prepareEnv(ctx, client, e, c); err != nil {
				return fmt.Errorf("%s, environment %s: %w", s.name, e.env.ID, err)
			}
		}
	}
	// The same rows in the same order on both sides, or the comparison means nothing.
	for k := range c.envs {
		for _, name := range []string{"list", "cursor"} {
			if !slices.Contains(c.shapes, name) {
				continue
			}
			var got [][]string
			for _, s := range sides {
				ids, err := pageIDs(ctx, client, shapeByName(name), s.envs[k], c.pageSize)
				if err != nil {
					return fmt.Errorf("%s on %s: %w", name, s.name, err)
				}
				got = append(got, ids)
			}
			if len(got[0]) == 0 || !slices.Equal(got[0], got[1]) {
				return fmt.Errorf("%s of environment %s: the direct server returns %v, the Vitess one %v: not the same rows",
					name, c.envs[k].ID, got[0], got[1])
			}
		}
	}
	return nil
}

// prepareEnv finds what the shapes need of one environment on one side.
func prepareEnv(ctx context.Context, client *http.Client, e *sideEnv, c config) error {
	if slices.Contains(c.shapes, "cursor") {
		cursors, err := api.WalkCursors(ctx, client, e.server, 1000, []int{c.depth})
		if err != nil {
			return fmt.Errorf("the cursor at %d: %w", c.depth, err)
		}
		e.cursor = cursors[c.depth]
	}
	var page struct {
		Data []struct {
			ID string `json:"_id"`
		} `json:"data"`
	}
	if err := e.server.ListInto(ctx, client, url.Values{"subscriberId": {e.env.Subscriber}, "limit": {"100"}}, &page); err != nil {
		return fmt.Errorf("the subscriber's messages: %w", err)
	}
	for _, m := range page.Data {
		e.markIDs = append(e.markIDs, m.ID)
	}
	if len(e.markIDs) == 0 {
		return fmt.Errorf("the subscriber %s has no messages", e.env.Subscriber)
	}
	req, err := e.server.Post(ctx, strings.TrimSuffix(e.server.BaseURL, "/")+"/v1/inbox/session",
		[]byte(fmt.Sprintf(`{"subscriberId":%q}`, e.env.Subscriber)))
	if err != nil {
		return err
	}
	body, err := api.Send(client, req, http.StatusCreated, false)
	if err != nil {
		return fmt.Errorf("the subscriber's session: %w", err)
	}
	var session struct {
		Token string `json:"token"`
	}
	if err := json.Unmarshal(body, &session); err != nil || session.Token == "" {
		return fmt.Errorf("the subscriber's session: no token in %s", api.Clip(body))
	}
	e.session = session.Token
	req, err = http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(e.server.BaseURL, "/")+"/v1/inbox/notifications?limit=100", nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+e.session)
	if body, err = api.Send(client, req, http.StatusOK, false); err != nil {
		return fmt.Errorf("the subscriber's inbox: %w", err)
	}
	var inbox struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &inbox); err != nil {
		return fmt.Errorf("the subscriber's inbox: %w", err)
	}
	for _, m := range inbox.Data {
		e.inboxIDs = append(e.inboxIDs, m.ID)
	}
	if len(e.inboxIDs) == 0 {
		return fmt.Errorf("the subscriber %s has no in-app messages", e.env.Subscriber)
	}
	return nil
}

// pageIDs sends a read shape once and returns the ids of the messages it answered with, in
// order.
func pageIDs(ctx context.Context, client *http.Client, s shape, e *sideEnv, pageSize int) ([]string, error) {
	req, err := s.build(ctx, e, pageSize, 0)
	if err != nil {
		return nil, err
	}
	body, err := api.Send(client, req, s.want, s.graphql)
	if err != nil {
		return nil, err
	}
	var v struct {
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(body, &v); err != nil {
		return nil, err
	}
	var page []struct {
		ID string `json:"_id"`
	}
	var conn struct {
		MessagesConnection struct {
			Edges []struct {
				Node struct {
					ID string `json:"_id"`
				} `json:"node"`
			} `json:"edges"`
		} `json:"messagesConnection"`
	}
	if s.graphql {
		if err := json.Unmarshal(v.Data, &conn); err != nil {
			return nil, err
		}
		for _, e := range conn.MessagesConnection.Edges {
			page = append(page, e.Node)
		}
	} else if err := json.Unmarshal(v.Data, &page); err != nil {
		return nil, err
	}
	out := make([]string, len(page))
	for i, m := range page {
		out[i] = m.ID
	}
	if len(out) == 0 {
		return nil, errors.New("an empty page")
	}
	return out, nil
}
