package models

import (
	"context"
	"errors"

	"gorm.io/gorm"
)

// Keyset is a position in the list order (createdAt descending, then id descending): the
// last message a page showed. The next page starts strictly after it.
type Keyset struct {
	CreatedAt Time
	ID        string
}

// KeysetOf is the position of m in the list order.
func KeysetOf(m *Message) Keyset { return Keyset{CreatedAt: m.CreatedAt, ID: m.ID} }

// MessageConnection is one page of a cursor walk over messages, in the shape GraphQL
// clients know from Relay. The cursors are filled in by the API layer, which owns their
// signing key; the store deals in Keysets only.
type MessageConnection struct {
	Edges    []*MessageEdge `json:"edges"`
	PageInfo PageInfo       `json:"pageInfo"`
	// TotalCount is computed only when asked for (ListOptions.Count).
	TotalCount int `json:"totalCount"`
}

// MessageEdge is one message of a connection and the cursor that resumes after it.
type MessageEdge struct {
	Cursor string   `json:"cursor"`
	Node   *Message `json:"node"`
}

// PageInfo says whether a connection continues and where.
type PageInfo struct {
	HasNextPage bool `json:"hasNextPage"`
	// EndCursor is the cursor of the last edge; nil on an empty page.
	EndCursor *string `json:"endCursor"`
}

// MessagesConnectionPage is what MessagesAfter found: the messages of one page in list
// order, whether more follow, and the total when asked for.
type MessagesConnectionPage struct {
	Messages    []*Message
	HasNextPage bool
	TotalCount  int
}

// MessagesAfter returns up to first messages of the environment matching f that come
// after the position after in the list order (from the start when after is nil). Its cost
// does not depend on how deep after is: the page's ids come from a range scan of the
// filter's (environment, ..., created_at, id) index starting at after, then the rows by
// primary key. At most six queries: subscriber lookup, ids, rows, count, subscribers,
// templates.
func (s *Store) MessagesAfter(ctx context.Context, environmentID string, f ListFilter, after *Keyset, first int, o ListOptions) (*MessagesConnectionPage, error) {
	page := &MessagesConnectionPage{Messages: []*Message{}}
	q, err := s.filtered(ctx, environmentID, f)
	if errors.Is(err, errNoMatch) {
		return page, nil
	}
	if err != nil {
		return nil, err
	}

	// Only ids, so the index covers the query: selecting whole rows in a keyset query
	// makes MySQL abandon the range scan for a table scan (seconds at a million rows, as
	// measured for issue 4), while ids take well under a millisecond.
	//
	// The position (t, i) is spelled created_at <= t AND (created_at < t OR id < i): of
	// the equivalent forms, it is the one both databases bound the index range with, as
	// EXPLAIN shows (TestMessagesAfterPlan). MariaDB 10.11 uses only the equality prefix
	// for the row value (created_at, id) < (t, i), and SQLite no bound at all for
	// created_at < t OR (created_at = t AND id < i). The second condition then skips only
	// the messages sharing the position's createdAt, so the cost does not depend on depth.
	ids := q.Session(&gorm.Session{}).Select("id")
	if after != nil {
		ids = ids.Where("created_at <= ? AND (created_at < ? OR id < ?)", after.CreatedAt, after.CreatedAt, after.ID)
	}
	var list []string
	// One id past the page tells whether more follow, exactly.
	if err := ids.Order("created_at DESC, id DESC").Limit(first+1).Pluck("id", &list).Error; err != nil {
		return nil, err
	}
	if len(list) > first {
		page.HasNextPage = true
		list = list[:first]
	}
	if page.Messages, err = s.messagesByID(ctx, environmentID, list); err != nil {
		return nil, err
	}

	if o.Count {
		if after == nil && !page.HasNextPage {
			// The first page holds the whole list, so the count is known without a query.
			page.TotalCount = len(list)
		} else if page.TotalCount, err = s.countMessages(ctx, environmentID, f, q); err != nil {
			return nil, err
		}
	}
	if err := s.embed(ctx, environmentID, page.Messages, o.Subscribers, o.Templates); err != nil {
		return nil, err
	}
	return page, nil
}
