package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	jsonv1 "github.com/go-json-experiment/json/v1"
)

// dataset is what discovery learnt of the data, for the report.
type dataset struct {
	EnvironmentID   string   `json:"environmentId"`
	TotalMessages   int      `json:"totalMessages"`
	InboxSubscriber string   `json:"inboxSubscriber"`
	InboxMessages   int      `json:"inboxMessages"`
	TransactionIDs  []string `json:"transactionIds"`
	// FoundBy says where the busy subscriber came from: "database" or "api".
	FoundBy string `json:"foundBy"`
}

// listBody is the part of GET /v1/messages's body discovery reads.
type listBody struct {
	TotalCount int `json:"totalCount"`
	Data       []struct {
		ID            string `json:"_id"`
		EnvironmentID string `json:"_environmentId"`
		TransactionID string `json:"transactionId"`
		Subscriber    *struct {
			SubscriberID string `json:"subscriberId"`
		} `json:"subscriber"`
	} `json:"data"`
}

func (t *target) list(ctx context.Context, client *http.Client, q url.Values) (*listBody, error) {
	var page listBody
	if err := t.listInto(ctx, client, q, &page); err != nil {
		return nil, err
	}
	return &page, nil
}

// listInto reads GET /v1/messages with q and decodes its page into v.
func (t *target) listInto(ctx context.Context, client *http.Client, q url.Values, v any) error {
	req, err := t.get(ctx, t.listURL(q))
	if err != nil {
		return err
	}
	body, err := send(client, req, http.StatusOK, false)
	if err != nil {
		return err
	}
	// encoding/json's semantics on its v2 implementation (jsonv1): a 400 KB page decodes in
	// a third of encoding/json's time, which a walk of every page would otherwise count.
	if err := jsonv1.Unmarshal(body, v); err != nil {
		return fmt.Errorf("GET /v1/messages: the page is not JSON: %w", err)
	}
	return nil
}

// transactionsWanted is how many transaction ids rest-transactions filters by.
const transactionsWanted = 5

// discover finds, through the API (and the database when db is not nil), the data the
// scenarios need: the environment, a busy subscriber and its messages, a few transaction
// ids. A scenario whose data is missing is reported unavailable, not run.
func discover(ctx context.Context, client *http.Client, t *target, db *sql.DB) (dataset, error) {
	var ds dataset
	first, err := t.list(ctx, client, url.Values{"limit": {"100"}})
	if err != nil {
		return ds, fmt.Errorf("first page: %w", err)
	}
	if len(first.Data) == 0 {
		return ds, errors.New("the environment of this API key has no messages: seed it first")
	}
	ds.EnvironmentID, ds.TotalMessages = first.Data[0].EnvironmentID, first.TotalCount
	seen := map[string]bool{}
	counts := map[string]int{}
	for _, m := range first.Data {
		if m.TransactionID != "" && !seen[m.TransactionID] && len(t.transactionIDs) < transactionsWanted {
			seen[m.TransactionID] = true
			t.transactionIDs = append(t.transactionIDs, m.TransactionID)
		}
		if m.Subscriber != nil {
			counts[m.Subscriber.SubscriberID]++
		}
	}
	ds.TransactionIDs = t.transactionIDs

	if db != nil {
		if t.inboxSubscriber, err = busiestSubscriber(ctx, db, ds.EnvironmentID); err != nil {
			return ds, err
		}
		ds.FoundBy = "database"
	} else {
		// The most frequent subscriber of the newest 100 messages: with realistic data, one
		// who gets many messages.
		best := 0
		for id, n := range counts {
			if n > best || (n == best && id < t.inboxSubscriber) {
				t.inboxSubscriber, best = id, n
			}
		}
		ds.FoundBy = "api"
	}
	ds.InboxSubscriber = t.inboxSubscriber
	if t.inboxSubscriber != "" {
		inbox, err := t.list(ctx, client, url.Values{"subscriberId": {t.inboxSubscriber}, "limit": {"100"}})
		if err != nil {
			return ds, fmt.Errorf("inbox page: %w", err)
		}
		ds.InboxMessages = inbox.TotalCount
		for _, m := range inbox.Data {
			t.markMessageIDs = append(t.markMessageIDs, m.ID)
		}
	}
	return ds, nil
}

// busiestSubscriber returns the external id of the subscriber with the most messages,
// through the (environment_id, subscriber_id, ...) index.
func busiestSubscriber(ctx context.Context, db *sql.DB, environmentID string) (string, error) {
	var id string
	err := db.QueryRowContext(ctx, `SELECT s.subscriber_id FROM subscribers s JOIN (
		SELECT subscriber_id, COUNT(*) AS n FROM messages WHERE environment_id = ?
		GROUP BY subscriber_id ORDER BY n DESC, subscriber_id LIMIT 1) busiest ON busiest.subscriber_id = s.id`,
		environmentID).Scan(&id)
	if err != nil {
		return "", fmt.Errorf("busiest subscriber: %w", err)
	}
	return id, nil
}

// cursorWalk is the part of a messagesConnection response the walk reads.
type cursorWalk struct {
	Data *struct {
		MessagesConnection *struct {
			PageInfo struct {
				HasNextPage bool   `json:"hasNextPage"`
				EndCursor   string `json:"endCursor"`
			} `json:"pageInfo"`
		} `json:"messagesConnection"`
	} `json:"data"`
	Errors []struct {
		Message string `json:"message"`
	} `json:"errors"`
}

// walkCursors pages through messagesConnection, step rows at a time, and returns the
// endCursor at each of depths (ascending): the cursor after which the page at that depth
// starts. An error means the field is missing or the list is shorter.
func walkCursors(ctx context.Context, client *http.Client, t *target, step int, depths []int) (map[int]string, error) {
	out := map[int]string{}
	after, done := "", 0
	for _, depth := range depths {
		for done < depth {
			n := min(step, depth-done)
			vars := map[string]any{"first": n}
			if after != "" {
				vars["after"] = after
			}
			req, err := t.graphql(ctx, cursorWalkQuery, vars)
			if err != nil {
				return out, err
			}
			resp, err := client.Do(req)
			if err != nil {
				return out, err
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				return out, err
			}
			var w cursorWalk
			if err := json.Unmarshal(body, &w); err != nil {
				return out, fmt.Errorf("status %d: %s", resp.StatusCode, clip(body))
			}
			if len(w.Errors) > 0 {
				msgs := make([]string, len(w.Errors))
				for i, e := range w.Errors {
					msgs[i] = e.Message
				}
				return out, errors.New(strings.Join(msgs, "; "))
			}
			if w.Data == nil || w.Data.MessagesConnection == nil || w.Data.MessagesConnection.PageInfo.EndCursor == "" {
				return out, fmt.Errorf("no endCursor after %d rows (status %d)", done, resp.StatusCode)
			}
			info := w.Data.MessagesConnection.PageInfo
			after, done = info.EndCursor, done+n
			if !info.HasNextPage && done < depths[len(depths)-1] {
				return out, fmt.Errorf("the list ends after %d rows", done)
			}
		}
		out[depth] = after
	}
	return out, nil
}

// keysetPositions returns, for each depth, the (created_at, id) of the depth-th row of
// the environment's list: the row a cursor at that depth points after.
func keysetPositions(ctx context.Context, db *sql.DB, environmentID string, depths map[string]int) (map[string]keysetPosition, error) {
	out := map[string]keysetPosition{}
	for name, depth := range depths {
		var p keysetPosition
		err := db.QueryRowContext(ctx, "SELECT created_at, id FROM messages WHERE environment_id = ? "+
			"ORDER BY created_at DESC, id DESC LIMIT 1 OFFSET "+strconv.Itoa(depth-1), environmentID).Scan(&p.createdAt, &p.id)
		if err != nil {
			return nil, fmt.Errorf("row at depth %d: %w", depth, err)
		}
		out[name] = p
	}
	return out, nil
}
