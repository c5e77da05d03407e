package bench

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
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
	if err := t.ListInto(ctx, client, q, &page); err != nil {
		return nil, err
	}
	return &page, nil
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
