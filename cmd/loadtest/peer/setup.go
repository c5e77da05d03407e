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

// preparePeer signs the RLS peer's token, finds the mark targets and the cursors at
// depth on both sides, checks that the policy restricts the RLS peer to the subscriber,
// and that both sides return the same rows for each read shape.
func preparePeer(ctx context.Context, client *http.Client, t *peerTarget, c peerConfig, log io.Writer) error {
	if t.peerRLSURL != "" {
		var err error
		if t.token, err = subscriberToken(c.jwtSecret, c.jwtRole, t.subscriberKey, time.Now()); err != nil {
			return err
		}
	}

	data, err := post(ctx, client, t.peer(peerMarkTargetsQuery, map[string]any{"environmentId": t.environmentID, "subscriberId": t.subscriberKey}))
	if err != nil {
		return fmt.Errorf("the subscriber's messages on the peer: %w", err)
	}
	if t.markIDs, err = nodeIDs(data); err != nil || len(t.markIDs) == 0 {
		return fmt.Errorf("the subscriber %s has no messages on the peer (%v)", t.subscriberKey, err)
	}

	needCursors := slices.Contains(c.shapes, "cursor")
	if needCursors {
		fmt.Fprintf(log, "finding the server's cursor %d rows deep\n", t.depth)
		walker := api.Server{BaseURL: t.serverURL, APIKey: t.apiKey}
		cursors, err := api.WalkCursors(ctx, client, walker, 1000, []int{t.depth})
		if err != nil {
			return fmt.Errorf("the server's cursor at %d: %w", t.depth, err)
		}
		t.serverCursor = cursors[t.depth]
		data, err := post(ctx, client, t.peer(peerCursorAtQuery, map[string]any{"environmentId": t.environmentID, "offset": t.depth - 1}))
		if err != nil {
			return fmt.Errorf("the peer's cursor at %d: %w", t.depth, err)
		}
		if t.peerCursor, err = firstCursor(data); err != nil {
			return fmt.Errorf("the peer's cursor at %d: %w", t.depth, err)
		}
	}

	if t.peerRLSURL != "" {
		mine, err := post(ctx, client, t.peer(peerTotalQuery, map[string]any{"subscriberId": t.subscriberKey}))
		if err != nil {
			return err
		}
		seen, err := post(ctx, client, gqlCall{url: t.peerRLSURL, header: http.Header{"Authorization": {"Bearer " + t.token}}, query: peerTotalQuery})
		if err != nil {
			return fmt.Errorf("the RLS peer: %w", err)
		}
		if a, b := totalCount(mine), totalCount(seen); a != b || a <= 0 {
			return fmt.Errorf("the RLS peer shows the subscriber's token %d messages, the subscriber has %d: is the policy in place?", b, a)
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
		b, err := post(ctx, client, shape.peer(t, 0))
		if err != nil {
			return fmt.Errorf("%s on the peer: %w", name, err)
		}
		serverIDs, err1 := messageIDs(a, "_id")
		peerIDs, err2 := messageIDs(b, "id")
		if err := errors.Join(err1, err2); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if len(serverIDs) == 0 || !slices.Equal(serverIDs, peerIDs) {
			return fmt.Errorf("%s: the server returns %v, the peer %v", name, serverIDs, peerIDs)
		}
	}
	fmt.Fprintf(log, "both sides return the same rows; %d mark targets\n", len(t.markIDs))
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

// nodeIDs reads allMessages.nodes[].id.
func nodeIDs(data json.RawMessage) ([]string, error) {
	var r struct {
		AllMessages struct {
			Nodes []struct {
				ID string `json:"id"`
			} `json:"nodes"`
		} `json:"allMessages"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, err
	}
	out := make([]string, len(r.AllMessages.Nodes))
	for i, n := range r.AllMessages.Nodes {
		out[i] = n.ID
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
