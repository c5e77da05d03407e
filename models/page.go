package models

import (
	"context"
	"errors"

	"gorm.io/gorm"
)

// window places one page in the list order (createdAt descending, then id descending):
// Size messages, skipping Offset of them (ListMessages) or starting strictly after the
// position After (MessagesAfter).
type window struct {
	Offset int
	After  *Keyset
	Size   int
}

// messagePage is what the page pipeline found: the messages of a window in list order,
// whether more follow, and the total when asked for.
type messagePage struct {
	Messages   []*Message
	HasMore    bool
	TotalCount int
}

// page runs the steps ListMessages and MessagesAfter share, at most one query each:
// look up the filter's subscriber, read the window's ids, load their rows, count the
// filter's messages, and embed subscribers and templates.
func (s *Store) page(ctx context.Context, environmentID string, f ListFilter, w window, o ListOptions) (*messagePage, error) {
	page := &messagePage{Messages: []*Message{}}
	q, err := s.filtered(ctx, environmentID, f)
	if errors.Is(err, errNoMatch) {
		return page, nil
	}
	if err != nil {
		return nil, err
	}

	// Only ids, through the covering (environment, ..., created_at, id) index, then the
	// rows by primary key: deep offsets walk the narrow index, not whole rows, and
	// selecting whole rows in a keyset query makes MySQL abandon the range scan for a
	// table scan (seconds at a million rows, as measured for issue 4), while ids take
	// well under a millisecond.
	//
	// The position (t, i) is spelled created_at <= t AND (created_at < t OR id < i): of
	// the equivalent forms, it is the one both databases bound the index range with, as
	// EXPLAIN shows (TestMessagesAfterPlan). MariaDB 10.11 uses only the equality prefix
	// for the row value (created_at, id) < (t, i), and SQLite no bound at all for
	// created_at < t OR (created_at = t AND id < i). The second condition then skips only
	// the messages sharing the position's createdAt, so the cost does not depend on depth.
	ids := q.Session(&gorm.Session{}).Select("id")
	if w.After != nil {
		ids = ids.Where("created_at <= ? AND (created_at < ? OR id < ?)", w.After.CreatedAt, w.After.CreatedAt, w.After.ID)
	}
	var list []string
	// One id past the page tells whether more follow, exactly.
	if err := ids.Order("created_at DESC, id DESC").Limit(w.Size+1).Offset(w.Offset).Pluck("id", &list).Error; err != nil {
		return nil, err
	}
	if len(list) > w.Size {
		page.HasMore = true
		list = list[:w.Size]
	}
	if page.Messages, err = s.messagesByID(ctx, environmentID, list); err != nil {
		return nil, err
	}

	if o.Count {
		if w.After == nil && !page.HasMore && (len(list) > 0 || w.Offset == 0) {
			// The page reached the end of a list read from its start, so the count is
			// known without a query.
			page.TotalCount = w.Offset + len(list)
		} else if page.TotalCount, err = s.countMessages(ctx, environmentID, f); err != nil {
			return nil, err
		}
	}
	if err := s.embed(ctx, environmentID, page.Messages, o.Subscribers, o.Templates); err != nil {
		return nil, err
	}
	return page, nil
}
