package events

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"messages/cmd/loadtest/report"
	"messages/models"
)

// markMutation marks a message's primary action.
const markMutation = `mutation($s: String!, $m: ID!, $st: MessageActionStatus!) {
  markMessageAction(subscriberId: $s, messageId: $m, type: primary, status: $st) { _id }
}`

// markWriter marks, through base, four messages of the writer's subscriber in turn
// (inserted with plain SQL first, each with a primary button), done and pending
// alternately, so every mark changes its row.
func (b *eventsBench) markWriter(base string) changeWriter {
	return changeWriter{kind: "updated", setup: func(ctx context.Context, _ int, sub subscriberRef) (writeFunc, error) {
		rows := newRawMessages(4, []subscriberRef{sub}, "")
		if _, err := b.insertRaw(ctx, rows); err != nil {
			return nil, err
		}
		done := map[string]bool{}
		i := 0
		return func(ctx context.Context) (string, time.Time, time.Time, error) {
			id := rows[i%len(rows)].id
			i++
			status := "done"
			if done[id] {
				status = "pending"
			}
			started := time.Now()
			err := b.postGraphQL(ctx, base, markMutation, map[string]any{"s": sub.external, "m": id, "st": status})
			committed := time.Now()
			if err == nil {
				done[id] = !done[id]
			}
			return id, started, committed, err
		}, nil
	}}
}

// rawWriter inserts one message a change with plain SQL, committed on its own.
func (b *eventsBench) rawWriter() changeWriter {
	return changeWriter{kind: "created", setup: func(_ context.Context, _ int, sub subscriberRef) (writeFunc, error) {
		return func(ctx context.Context) (string, time.Time, time.Time, error) {
			rows := newRawMessages(1, []subscriberRef{sub}, "")
			started := time.Now()
			committed, err := b.insertRaw(ctx, rows)
			return rows[0].id, started, committed, err
		}, nil
	}}
}

// importWriter runs `server import` on a file of one message for the writer's
// subscriber: a copy of one of its messages (as the REST API lists it, the import
// format) with a new id, creation time and transaction id.
func (b *eventsBench) importWriter() changeWriter {
	return changeWriter{kind: "created", setup: func(ctx context.Context, w int, sub subscriberRef) (writeFunc, error) {
		var page struct {
			Data []map[string]any `json:"data"`
		}
		if err := b.getJSON(ctx, b.c.baseURL+"/v1/messages?limit=1&subscriberId="+sub.external, &page); err != nil {
			return nil, err
		}
		if len(page.Data) == 0 {
			return nil, fmt.Errorf("subscriber %s has no message to copy", sub.external)
		}
		record := page.Data[0]
		if record["status"] == "" || record["status"] == nil {
			record["status"] = "sent" // rows inserted with plain SQL have none; import wants one
		}
		dir, err := os.MkdirTemp("", "loadtest-events-import-")
		if err != nil {
			return nil, err
		}
		path := filepath.Join(dir, fmt.Sprintf("writer-%d.jsonl", w))
		return func(ctx context.Context) (string, time.Time, time.Time, error) {
			defer os.Remove(path)
			now := time.Now()
			id := models.NewID(now)
			record["_id"] = id
			record["createdAt"] = now.UTC().Format("2006-01-02T15:04:05.000Z")
			record["transactionId"] = "events-bench-import-" + id
			line, err := json.Marshal(record)
			if err != nil {
				return "", time.Time{}, time.Time{}, err
			}
			if err := os.WriteFile(path, append(line, '\n'), 0o600); err != nil {
				return "", time.Time{}, time.Time{}, err
			}
			cmd := exec.CommandContext(ctx, b.c.serverBin, "--database-url", b.c.databaseURL, "import", "--file", path)
			started := time.Now()
			out, err := cmd.CombinedOutput()
			committed := time.Now()
			if err != nil {
				err = errors.New("import: " + err.Error() + ": " + report.Clip(string(out), 200))
			}
			return id, started, committed, err
		}, nil
	}}
}
