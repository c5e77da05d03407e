package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

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

// WalkCursors pages through messagesConnection, step rows at a time, and returns the
// endCursor at each of depths (ascending): the cursor after which the page at that depth
// starts. An error means the field is missing or the list is shorter.
func WalkCursors(ctx context.Context, client *http.Client, s Server, step int, depths []int) (map[int]string, error) {
	out := map[int]string{}
	after, done := "", 0
	for _, depth := range depths {
		for done < depth {
			n := min(step, depth-done)
			vars := map[string]any{"first": n}
			if after != "" {
				vars["after"] = after
			}
			req, err := s.GraphQL(ctx, cursorWalkQuery, vars)
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
				return out, fmt.Errorf("status %d: %s", resp.StatusCode, Clip(body))
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
