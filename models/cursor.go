package models

import "context"

// Keyset is a message's position in the orders by createdAt, then id: in the list order
// (both descending) it is the last message a page showed, and the next page starts
// strictly after it; MessagesOldestFirst walks the same keys ascending.
type Keyset struct {
	CreatedAt Time
	ID        string
}

// KeysetOf is the position of m in the list order.
func KeysetOf(m *Message) Keyset { return Keyset{CreatedAt: m.CreatedAt, ID: m.ID} }

// MessageEdge is one message of a connection and the cursor that resumes after it.
type MessageEdge struct {
	Cursor string   `json:"cursor"`
	Node   *Message `json:"node"`
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
// primary key, in one statement with the subscribers and template versions; a second
// reads the count when asked, a third templates that changed.
func (s *Store) MessagesAfter(ctx context.Context, environmentID string, f ListFilter, after *Keyset, first int, o ListOptions) (*MessagesConnectionPage, error) {
	found, err := s.page(ctx, environmentID, f, window{After: after, Size: first}, o)
	if err != nil {
		return nil, err
	}
	return &MessagesConnectionPage{Messages: found.Messages, HasNextPage: found.HasMore, TotalCount: found.TotalCount}, nil
}

// MessagesOldestFirst returns up to limit messages of an environment that come after the
// position after (from the start when nil) in the order oldest first (createdAt, then
// id), with their subscribers and templates: the walk an export takes. The keys come from
// the (environment_id, created_at, id) index, then the rows by primary key, so memory
// and cost stay flat however far the walk has gone.
func (s *Store) MessagesOldestFirst(ctx context.Context, environmentID string, after *Keyset, limit int) ([]*Message, error) {
	q := s.conn(ctx).Model(&Message{}).Select("id").Where("environment_id = ?", environmentID)
	if after != nil {
		q = q.Where("(created_at > ? OR (created_at = ? AND id > ?))", after.CreatedAt, after.CreatedAt, after.ID)
	}
	return s.readMessages(ctx, environmentID, q.Order("created_at, id").Limit(limit), oldestFirst,
		embedded{Subscribers: true, Templates: true})
}
