package bench

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"messages/cmd/loadtest/measure"
)

// The raw floors: the pages of the REST and GraphQL scenarios read with plain
// database/sql and encoded with encoding/json to io.Discard. No HTTP, no GraphQL, no
// GORM, no decoding of the JSON columns: the least work that produces the same page, so
// a scenario's ratio to its floor is the server's overhead, not a worse query.
const (
	floorFirstPage           = "floor-first-page"
	floorFirstPageNoCount    = "floor-first-page-nocount"
	floorInboxPage           = "floor-inbox-page"
	floorInboxPageNoCount    = "floor-inbox-page-nocount"
	floorDeepPage            = "floor-deep-page"
	floorDeepPageNoCount     = "floor-deep-page-nocount"
	floorTransactions        = "floor-transactions"
	floorTransactionsNoCount = "floor-transactions-nocount"
	floorCursorDeep          = "floor-cursor-deep"
	floorCursorFar           = "floor-cursor-far"
	naiveFirstPage           = "naive-first-page"
	naiveDeepPage            = "naive-deep-page"
)

// floorDef is one floor: which page it reads and how.
type floorDef struct {
	name, about string
	// inbox narrows to the busy subscriber, transactions to the transaction ids.
	inbox, transactions bool
	// deep reads the page at --deep-page; keyset, when set, the page after the deep
	// cursor of that scenario.
	deep   bool
	keyset string
	// count adds the exact totalCount (COUNT(*) through the narrowest index) whenever
	// the page does not reach the end of the list, as the server's uncached path does.
	count bool
	// naive reads whole rows with OFFSET and counts on every request: the plan the
	// issue measured before any work on the list.
	naive bool
}

var floors = []floorDef{
	{name: floorFirstPage, about: "first page + COUNT", count: true},
	{name: floorFirstPageNoCount, about: "first page"},
	{name: floorInboxPage, about: "subscriber's first page + COUNT", inbox: true, count: true},
	{name: floorInboxPageNoCount, about: "subscriber's first page", inbox: true},
	{name: floorDeepPage, about: "deep OFFSET page + COUNT", deep: true, count: true},
	{name: floorDeepPageNoCount, about: "deep OFFSET page", deep: true},
	{name: floorTransactions, about: "transactionId IN (5) + COUNT", transactions: true, count: true},
	{name: floorTransactionsNoCount, about: "transactionId IN (5)", transactions: true},
	{name: floorCursorDeep, about: "keyset page after the --cursor-depth row", keyset: "graphql-cursor-deep"},
	{name: floorCursorFar, about: "keyset page after the --far-cursor-depth row", keyset: "graphql-cursor-far"},
	{name: naiveFirstPage, about: "naive: whole rows, first page, COUNT(*) every time", count: true, naive: true},
	{name: naiveDeepPage, about: "naive: whole rows, deep OFFSET, COUNT(*) every time", deep: true, count: true, naive: true},
}

func floorByName(name string) floorDef {
	for _, f := range floors {
		if f.name == name {
			return f
		}
	}
	panic("unknown floor " + name)
}

// keysetPosition is the (created_at, id) of the last row before a cursor page.
type keysetPosition struct {
	createdAt time.Time
	id        string
}

// rawFloor reads pages of one environment with plain database/sql.
type rawFloor struct {
	db             *sql.DB
	environmentID  string
	pageSize       int
	deepOffset     int
	inbox          string
	transactionIDs []string
	positions      map[string]keysetPosition
}

// operation returns one request of a floor.
func (f *rawFloor) operation(def floorDef) measure.Operation {
	return func(ctx context.Context, _ int64) error {
		page, err := f.page(ctx, def)
		if err != nil {
			return err
		}
		enc := json.NewEncoder(io.Discard)
		enc.SetEscapeHTML(false)
		return enc.Encode(page)
	}
}

// floorPage is GET /v1/messages's body.
type floorPage struct {
	TotalCount int             `json:"totalCount"`
	HasMore    bool            `json:"hasMore"`
	Data       []*floorMessage `json:"data"`
	PageSize   int             `json:"pageSize"`
	Page       int             `json:"page"`
}

// page reads one page as the server's store does: ids through the covering index (one
// past the page, for hasMore), rows by primary key, the count when needed, then the
// page's subscribers and templates in one query each.
func (f *rawFloor) page(ctx context.Context, def floorDef) (*floorPage, error) {
	where, args, err := f.filter(ctx, def)
	if err != nil {
		return nil, err
	}
	pageWhere, pageArgs := where, args
	if def.keyset != "" {
		pos, ok := f.positions[def.keyset]
		if !ok {
			return nil, errors.New("no keyset position")
		}
		pageWhere += " AND (created_at < ? OR (created_at = ? AND id < ?))"
		pageArgs = append(append([]any(nil), args...), pos.createdAt, pos.createdAt, pos.id)
	}
	offset := 0
	if def.deep {
		offset = f.deepOffset
	}
	page := &floorPage{PageSize: f.pageSize, Page: offset / f.pageSize}

	msgs, err := f.pageMessages(ctx, def.naive, pageWhere, pageArgs, offset)
	if err != nil {
		return nil, err
	}
	if len(msgs) > f.pageSize {
		page.HasMore = true
		msgs = msgs[:f.pageSize]
	}
	page.Data = msgs
	if page.Data == nil {
		page.Data = []*floorMessage{}
	}

	if def.count {
		if !def.naive && !page.HasMore && (len(msgs) > 0 || offset == 0) {
			page.TotalCount = offset + len(msgs)
		} else if err := f.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM messages WHERE "+where, args...).Scan(&page.TotalCount); err != nil {
			return nil, fmt.Errorf("count: %w", err)
		}
	}
	if err := f.embed(ctx, msgs); err != nil {
		return nil, err
	}
	return page, nil
}

// filter is the WHERE clause of the floor's list, without its page: the environment,
// narrowed to the busy subscriber or the transaction ids.
func (f *rawFloor) filter(ctx context.Context, def floorDef) (string, []any, error) {
	where, args := "environment_id = ?", []any{f.environmentID}
	if def.inbox {
		var id string
		err := f.db.QueryRowContext(ctx, "SELECT id FROM subscribers WHERE environment_id = ? AND subscriber_id = ? LIMIT 1",
			f.environmentID, f.inbox).Scan(&id)
		if err != nil {
			return "", nil, fmt.Errorf("subscriber: %w", err)
		}
		where, args = where+" AND subscriber_id = ?", append(args, id)
	}
	if def.transactions {
		where += " AND transaction_id IN (" + placeholders(len(f.transactionIDs)) + ")"
		for _, id := range f.transactionIDs {
			args = append(args, id)
		}
	}
	return where, args, nil
}

// pageMessages reads one past a page of rows matching where, offset rows in, newest
// first: naive reads whole rows with OFFSET; otherwise ids through the covering index,
// then the rows by primary key.
func (f *rawFloor) pageMessages(ctx context.Context, naive bool, where string, args []any, offset int) ([]*floorMessage, error) {
	if naive {
		return f.messages(ctx, "SELECT "+messageColumns+" FROM messages WHERE "+where+
			" ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?", append(args, f.pageSize+1, offset)...)
	}
	ids, err := f.strings(ctx, "SELECT id FROM messages WHERE "+where+
		" ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?", append(args, f.pageSize+1, offset)...)
	if err != nil || len(ids) == 0 {
		return nil, err
	}
	rowArgs := []any{f.environmentID}
	for _, id := range ids {
		rowArgs = append(rowArgs, id)
	}
	rows, err := f.messages(ctx, "SELECT "+messageColumns+" FROM messages WHERE environment_id = ? AND id IN ("+
		placeholders(len(ids))+")", rowArgs...)
	if err != nil {
		return nil, err
	}
	return inOrder(ids, rows), nil
}

// inOrder returns rows in the order of ids.
func inOrder(ids []string, rows []*floorMessage) []*floorMessage {
	byID := make(map[string]*floorMessage, len(rows))
	for _, m := range rows {
		byID[m.ID] = m
	}
	out := make([]*floorMessage, 0, len(ids))
	for _, id := range ids {
		if m, ok := byID[id]; ok {
			out = append(out, m)
		}
	}
	return out
}

func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?,", n), ",")
}

func (f *rawFloor) strings(ctx context.Context, query string, args ...any) ([]string, error) {
	rows, err := f.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// embed attaches the page's subscribers and templates, one query for each kind.
func (f *rawFloor) embed(ctx context.Context, msgs []*floorMessage) error {
	if len(msgs) == 0 {
		return nil
	}
	subIDs, tplIDs := distinctIDs(msgs, func(m *floorMessage) string { return m.SubscriberID }),
		distinctIDs(msgs, func(m *floorMessage) string { return m.TemplateID })
	subs, err := f.subscribers(ctx, subIDs)
	if err != nil {
		return err
	}
	tpls, err := f.templates(ctx, tplIDs)
	if err != nil {
		return err
	}
	for _, m := range msgs {
		m.Subscriber = subs[m.SubscriberID]
		m.Template = tpls[m.TemplateID]
	}
	return nil
}

func distinctIDs(msgs []*floorMessage, key func(*floorMessage) string) []any {
	seen := make(map[string]bool, len(msgs))
	var out []any
	for _, m := range msgs {
		if k := key(m); k != "" && !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

// rawJSON keeps a JSON text column as it is; NULL and "null" are no value.
func rawJSON(b []byte) json.RawMessage {
	if len(b) == 0 || string(b) == "null" {
		return nil
	}
	return json.RawMessage(b)
}

// rawArray is rawJSON for the arrays the wire always carries.
func rawArray(b []byte) json.RawMessage {
	if j := rawJSON(b); j != nil {
		return j
	}
	return json.RawMessage("[]")
}
