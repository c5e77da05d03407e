package store

import (
	"context"
	"messages/models"

	"gorm.io/gorm/clause"
)

// window places one page in the list order (createdAt descending, then id descending):
// Size messages, skipping Offset of them (ListMessages) or starting strictly after the
// position After (MessagesAfter).
type window struct {
	Offset int
	After  *models.Keyset
	Size   int
	// Walk says the window is a numbered page (ListMessages), which may continue where
	// the previous page ended (boundary.go).
	Walk bool
}

// messagePage is what the page pipeline found: the messages of a window in list order,
// whether more follow, and the total when asked for.
type messagePage struct {
	Messages   []*models.Message
	HasMore    bool
	TotalCount int
}

// page runs the steps ListMessages and MessagesAfter share: read the window's messages
// with their subscribers and template versions in one statement, and count the filter's
// messages when asked (a constant-time read of its counter rows). With read replicas, all
// of it reads one replica's snapshot (readList).
func (s *Store) page(ctx context.Context, environmentID string, f models.ListFilter, w window, o models.ListOptions) (*messagePage, error) {
	var found *messagePage
	err := s.readList(ctx, func(ctx context.Context) error {
		var err error
		found, err = s.readPage(ctx, environmentID, f, w, o)
		return err
	})
	return found, err
}

// readPage is page's work, on whichever database ctx leads to (conn).
func (s *Store) readPage(ctx context.Context, environmentID string, f models.ListFilter, w window, o models.ListOptions) (*messagePage, error) {
	page := &messagePage{}
	// A deep offset page counts first: the count decides whether a boundary left by the
	// previous page can replace the offset (boundary.go), and is the page's totalCount.
	walk := w.Walk && w.Offset >= minBoundaryOffset
	counted := false
	var key boundaryKey
	read := w
	if walk {
		total, err := s.countMessages(ctx, environmentID, f)
		if err != nil {
			return nil, err
		}
		page.TotalCount, counted = total, true
		key = boundaryKey{filter: filterKey(environmentID, f), offset: w.Offset}
		if b, ok := s.boundaries.entries.Get(key); ok && b.total == total && w.Offset > 0 {
			read = window{After: &b.before, Size: w.Size}
		}
	}

	e := embedded{Subscribers: o.Subscribers, Templates: o.Templates}
	msgs, err := s.readWindow(ctx, environmentID, f, read, e)
	if err != nil {
		return nil, err
	}
	if len(msgs) > read.Size {
		page.HasMore = true
		msgs = msgs[:read.Size]
	}
	page.Messages = msgs
	if walk && page.HasMore {
		next := boundaryKey{filter: key.filter, offset: w.Offset + len(msgs)}
		s.boundaries.entries.Add(next, boundary{before: models.KeysetOf(msgs[len(msgs)-1]), total: page.TotalCount})
	}

	if o.Count && !counted {
		if w.After == nil && !page.HasMore && (len(msgs) > 0 || w.Offset == 0) {
			// The page reached the end of a list read from its start, so the count is
			// known without a query.
			page.TotalCount = w.Offset + len(msgs)
		} else if page.TotalCount, err = s.countMessages(ctx, environmentID, f); err != nil {
			return nil, err
		}
	}
	if !o.Count {
		page.TotalCount = 0
	}
	return page, nil
}

// readWindow reads the messages of window w that filter f finds, in list order, through
// the index f reads (listindex.go). When the database no longer has the index named, the
// name is dropped, the list of indexes read again, and the page read once more.
func (s *Store) readWindow(ctx context.Context, environmentID string, f models.ListFilter, w window, e embedded) ([]*models.Message, error) {
	hint := s.listIndexHint(ctx, f)
	msgs, err := s.readWindowBy(ctx, environmentID, f, w, e, hint)
	if hint != nil && isUnknownIndex(err) {
		s.listIndexes.forget()
		return s.readWindowBy(ctx, environmentID, f, w, e, nil)
	}
	return msgs, err
}

// readWindowBy is readWindow's read, naming the index by hint (nil: none): a first page
// in one statement, a page past an offset or from a position by picking its ids first
// (read.go).
func (s *Store) readWindowBy(ctx context.Context, environmentID string, f models.ListFilter, w window, e embedded, hint clause.Interface) ([]*models.Message, error) {
	// The position (t, i) is spelled created_at <= t AND (created_at < t OR id < i): of
	// the equivalent forms, it is the one both databases bound the index range with, as
	// EXPLAIN shows (TestMessagesAfterSeededList). MariaDB 10.11 uses only the equality
	// prefix for the row value (created_at, id) < (t, i), and SQLite no bound at all for
	// created_at < t OR (created_at = t AND id < i). The second condition then skips only
	// the messages sharing the position's createdAt, so the cost does not depend on depth.
	found := s.filtered(ctx, environmentID, f)
	if hint != nil {
		found = found.Clauses(hint)
	}
	if w.After != nil {
		found = found.Where("created_at <= ? AND (created_at < ? OR id < ?)", w.After.CreatedAt, w.After.CreatedAt, w.After.ID)
	}
	// One message past the page tells whether more follow, exactly.
	found = found.Order("created_at DESC, id DESC").Limit(w.Size + 1)
	if w.After == nil && w.Offset == 0 {
		return s.readLeadingMessages(ctx, environmentID, found, newestFirst, e)
	}
	return s.readMessages(ctx, environmentID, found.Select("id").Offset(w.Offset), newestFirst, e)
}
