package events

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"messages/cmd/loadtest/loopback"
	"messages/cmd/loadtest/report"
	"messages/cmd/loadtest/serverdb"
	"messages/graph/gqlclient"
)

// eventsBench is what the event scenarios share: the database, an HTTP client, the
// environment of the API key and its subscribers.
type eventsBench struct {
	c    eventsConfig
	log  io.Writer
	db   *sql.DB
	http *http.Client
	// ws makes the WebSocket upgrades: loopback only, no timeout (a socket lives long).
	ws          *http.Client
	envID       string
	orgID       string
	subscribers []subscriberRef // ordered by external id
}

// subscriberRef is a subscriber's row id (messages.subscriber_id) and external id.
type subscriberRef struct{ id, external string }

func newEventsBench(ctx context.Context, c eventsConfig, log io.Writer) (*eventsBench, error) {
	db, err := serverdb.Open(ctx, c.databaseURL, 8)
	if err != nil {
		return nil, err
	}
	b := &eventsBench{c: c, log: log, db: db, http: loopback.NewHTTPClient(c.writers*2, 30*time.Second, false), ws: newWebSocketClient(0)}
	if err := b.discover(ctx); err != nil {
		b.close()
		return nil, err
	}
	return b, nil
}

func (b *eventsBench) close() { _ = b.db.Close() }

// discover finds the API key's environment (from a message it lists) and its subscribers.
func (b *eventsBench) discover(ctx context.Context) error {
	var page struct {
		Data []struct {
			EnvironmentID  string `json:"_environmentId"`
			OrganizationID string `json:"_organizationId"`
		} `json:"data"`
	}
	if err := b.getJSON(ctx, b.c.baseURL+"/v1/messages?limit=1", &page); err != nil {
		return fmt.Errorf("finding the environment: %w", err)
	}
	if len(page.Data) == 0 {
		return errors.New("the API key's environment has no message: seed it first")
	}
	b.envID, b.orgID = page.Data[0].EnvironmentID, page.Data[0].OrganizationID
	rows, err := b.db.QueryContext(ctx, `SELECT id, subscriber_id FROM subscribers WHERE environment_id = ? ORDER BY subscriber_id`, b.envID)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var s subscriberRef
		if err := rows.Scan(&s.id, &s.external); err != nil {
			return err
		}
		b.subscribers = append(b.subscribers, s)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	need := max(b.c.burstSubs, b.c.writers+1)
	if len(b.subscribers) < need {
		return fmt.Errorf("the environment has %d subscribers; the scenarios need %d", len(b.subscribers), need)
	}
	fmt.Fprintf(b.log, "environment %s: %d subscribers\n", b.envID, len(b.subscribers))
	return nil
}

// getJSON GETs url with the API key and decodes the answer.
func (b *eventsBench) getJSON(ctx context.Context, url string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "ApiKey "+b.c.apiKey)
	resp, err := b.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %d %s", url, resp.StatusCode, report.Clip(string(body), 200))
	}
	return json.Unmarshal(body, v)
}

// postGraphQL sends query to base's /graphql and fails on a status other than 200 or
// any error in the answer.
func (b *eventsBench) postGraphQL(ctx context.Context, base, query string, vars map[string]any) error {
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/graphql", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "ApiKey "+b.c.apiKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := b.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	var r struct {
		Errors []gqlclient.Error `json:"errors"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(out, &r) != nil || len(r.Errors) > 0 {
		return fmt.Errorf("graphql: %d %s", resp.StatusCode, report.Clip(string(out), 200))
	}
	return nil
}
