package peer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"time"

	"messages/cmd/loadtest/api"
)

// preparePeer signs the RLS peers' token, finds the mark targets and the cursors at
// depth on every side, checks that the policy restricts the RLS peers to the subscriber,
// and that every side returns the same rows for each read shape.
func preparePeer(ctx context.Context, client *http.Client, t *peerTarget, c peerConfig, log io.Writer) error {
	if c.jwtSecret != "" {
		var err error
		if t.token, err = subscriberToken(c.jwtSecret, c.jwtRole, t.subscriberKey, time.Now()); err != nil {
			return err
		}
	}
	first := t.peers[0]
	data, err := post(ctx, client, first.call(first.q.markTargets, map[string]any{"environmentId": t.environmentID, "subscriberId": t.subscriberKey}))
	if err != nil {
		return fmt.Errorf("the subscriber's messages on %s: %w", first.label, err)
	}
	if t.markIDs, err = nodeIDs(data, first.q.key); err != nil || len(t.markIDs) == 0 {
		return fmt.Errorf("the subscriber %s has no messages on %s (%v)", t.subscriberKey, first.label, err)
	}

	if slices.Contains(c.shapes, "cursor") {
		fmt.Fprintf(log, "finding the server's cursor %d rows deep\n", t.depth)
		walker := api.Server{BaseURL: t.serverURL, APIKey: t.apiKey}
		cursors, err := api.WalkCursors(ctx, client, walker, 1000, []int{t.depth})
		if err != nil {
			return fmt.Errorf("the server's cursor at %d: %w", t.depth, err)
		}
		t.serverCursor = cursors[t.depth]
	}
	for _, p := range t.peers {
		if err := preparePeerEngine(ctx, client, t, p, c); err != nil {
			return fmt.Errorf("%s: %w", p.label, err)
		}
	}
	fmt.Fprintf(log, "every side returns the same rows; %d mark targets\n", len(t.markIDs))
	return nil
}

// preparePeerEngine finds p's cursor at depth, checks its policy, and that it returns the
// server's rows for each read shape.
func preparePeerEngine(ctx context.Context, client *http.Client, t *peerTarget, p *peerEngine, c peerConfig) error {
	if slices.Contains(c.shapes, "cursor") {
		data, err := post(ctx, client, p.call(p.q.cursorAt, map[string]any{"environmentId": t.environmentID, "offset": t.depth - 1}))
		if err != nil {
			return fmt.Errorf("the cursor at %d: %w", t.depth, err)
		}
		if p.cursor, err = firstCursor(data); err != nil {
			return fmt.Errorf("the cursor at %d: %w", t.depth, err)
		}
	}
	if p.rlsURL != "" {
		mine, err := post(ctx, client, p.call(p.q.total, map[string]any{"subscriberId": t.subscriberKey}))
		if err != nil {
			return err
		}
		seen, err := post(ctx, client, p.rlsCall(t, p.q.total, nil))
		if err != nil {
			return fmt.Errorf("with JWT + RLS: %w", err)
		}
		if a, b := totalCount(mine), totalCount(seen); a != b || a <= 0 {
			return fmt.Errorf("with JWT + RLS it shows the subscriber's token %d messages, the subscriber has %d: is the policy in place?", b, a)
		}
	}
	// The same rows in the same order on both sides, or the comparison means nothing.
	for _, name := range c.shapes {
		shape := peerShapeByName(name)
		if name == "mark" || shape.server == nil {
			continue
		}
		a, err := post(ctx, client, shape.server(t, 0))
		if err != nil {
			return fmt.Errorf("%s on the server: %w", name, err)
		}
		b, err := post(ctx, client, shape.peer(t, p, 0))
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		serverIDs, err1 := messageIDs(a, "_id")
		peerIDs, err2 := messageIDs(b, p.q.key)
		if err := errors.Join(err1, err2); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if len(serverIDs) == 0 || !slices.Equal(serverIDs, peerIDs) {
			return fmt.Errorf("%s: the server returns %v, the peer %v", name, serverIDs, peerIDs)
		}
	}
	return nil
}

// messageIDs returns, in document order, the idKey of every message object in a GraphQL
// response's data: an object that has a createdAt (the subscriber and template objects
// of the selection have none).
func messageIDs(data json.RawMessage, idKey string) ([]string, error) {
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return nil, err
	}
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if _, ok := v["createdAt"]; ok {
				if id, ok := v[idKey].(string); ok {
					out = append(out, id)
				}
			}
			// Object keys in document order are lost in a map; messages only sit in
			// lists, whose order is kept, and one message per object.
			keys := make([]string, 0, len(v))
			for k := range v {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				walk(v[k])
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(v)
	return out, nil
}

// nodeIDs reads allMessages.nodes[].key.
func nodeIDs(data json.RawMessage, key string) ([]string, error) {
	var r struct {
		AllMessages struct {
			Nodes []map[string]any `json:"nodes"`
		} `json:"allMessages"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, err
	}
	out := make([]string, len(r.AllMessages.Nodes))
	for i, n := range r.AllMessages.Nodes {
		id, ok := n[key].(string)
		if !ok {
			return nil, fmt.Errorf("node %d has no %s", i, key)
		}
		out[i] = id
	}
	return out, nil
}

// firstCursor reads allMessages.edges[0].cursor.
func firstCursor(data json.RawMessage) (string, error) {
	var r struct {
		AllMessages struct {
			Edges []struct {
				Cursor string `json:"cursor"`
			} `json:"edges"`
		} `json:"allMessages"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return "", err
	}
	if len(r.AllMessages.Edges) == 0 || r.AllMessages.Edges[0].Cursor == "" {
		return "", errors.New("no row there")
	}
	return r.AllMessages.Edges[0].Cursor, nil
}

// totalCount reads allMessages.totalCount, -1 when absent.
func totalCount(data json.RawMessage) int {
	var r struct {
		AllMessages *struct {
			TotalCount int `json:"totalCount"`
		} `json:"allMessages"`
	}
	if json.Unmarshal(data, &r) != nil || r.AllMessages == nil {
		return -1
	}
	return r.AllMessages.TotalCount
}
