package events

import (
	"context"
	"strings"
	"time"

	"messages/models"
)

// rawMessage is one row inserted with plain SQL, as another program of the platform
// writes them: no code of the server runs.
type rawMessage struct {
	id           string
	subscriberID string // the subscriber's row id
	payload      string // JSON, or empty for NULL
}

// rawColumns are the columns a raw insert sets; the rest take their defaults, the
// change stamps included.
const rawColumns = `(id, environment_id, organization_id, subscriber_id, created_at, transaction_id, subject,
	channel, email, phone, direct_webhook_url, title, cta, error_text, content, payload)`

// rawRow is one row's values: six placeholders, the rest constant. The call to action has
// a primary button, so the row can be marked.
const rawRow = `(?, ?, ?, ?, ?, 'events-bench', 'Live events benchmark', 'in_app', '', '', '',
	'Inserted with plain SQL', '{"type":"redirect","action":{"status":"pending","buttons":[{"type":"primary","content":"OK"}]}}', '', '[]', ?)`

// rawInsert is one multi-row INSERT of rows in environment env/org at createdAt.
func rawInsert(env, org string, createdAt time.Time, rows []rawMessage) (string, []any) {
	var q strings.Builder
	q.WriteString("INSERT INTO messages " + rawColumns + " VALUES ")
	args := make([]any, 0, 6*len(rows))
	for i, r := range rows {
		if i > 0 {
			q.WriteString(", ")
		}
		q.WriteString(rawRow)
		var payload any
		if r.payload != "" {
			payload = r.payload
		}
		args = append(args, r.id, env, org, r.subscriberID, createdAt.UTC(), payload)
	}
	return q.String(), args
}

// rawChunk bounds the rows of one INSERT statement.
const rawChunk = 1000

// insertRaw writes rows in one transaction, rawChunk rows a statement, and returns when
// the commit has returned.
func (b *eventsBench) insertRaw(ctx context.Context, rows []rawMessage) (time.Time, error) {
	tx, err := b.db.BeginTx(ctx, nil)
	if err != nil {
		return time.Time{}, err
	}
	now := time.Now()
	for len(rows) > 0 {
		n := min(len(rows), rawChunk)
		q, args := rawInsert(b.envID, b.orgID, now, rows[:n])
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			_ = tx.Rollback()
			return time.Time{}, err
		}
		rows = rows[n:]
	}
	if err := tx.Commit(); err != nil {
		return time.Time{}, err
	}
	return time.Now(), nil
}

// newRawMessages makes n rows, the i-th for subs[i % len(subs)].
func newRawMessages(n int, subs []subscriberRef, payload string) []rawMessage {
	rows := make([]rawMessage, n)
	now := time.Now()
	for i := range rows {
		rows[i] = rawMessage{id: models.NewID(now), subscriberID: subs[i%len(subs)].id, payload: payload}
	}
	return rows
}
