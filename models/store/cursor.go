package store

import (
	"context"
	"messages/models"
)

// MessagesAfter returns up to first messages of the environment matching f that come
// after the position after in the list order (from the start when after is nil). Its cost
// does not depend on how deep after is: the page's ids come from a range scan of the
// filter's (environment, ..., created_at, id) index starting at after, then the rows by
// primary key, in one statement with the subscribers and template versions; a second
// reads the count when asked, a third templates that changed.
func (s *Store) MessagesAfter(ctx context.Context, environmentID string, f models.ListFilter, after *models.Keyset, first int, o models.ListOptions) (*models.MessagesConnectionPage, error) {
	found, err := s.page(ctx, environmentID, f, window{After: after, Size: first}, o)
	if err != nil {
		return nil, err
	}
	return &models.MessagesConnectionPage{Messages: found.Messages, HasNextPage: found.HasMore, TotalCount: found.TotalCount}, nil
}

// MessagesOldestFirst returns up to limit messages of an environment that come after the
// position after (from the start when nil) in the order oldest first (createdAt, then
// id), with their subscribers and templates: the walk an export takes. The keys come from
// the (environment_id, created_at, id) index, then the rows by primary key, so memory
// and cost stay flat however far the walk has gone.
func (s *Store) MessagesOldestFirst(ctx context.Context, environmentID string, after *models.Keyset, limit int) ([]*models.Message, error) {
	q := s.conn(ctx).Model(&models.Message{}).Select("id").Where("environment_id = ?", environmentID)
	if after != nil {
		q = q.Where("(created_at > ? OR (created_at = ? AND id > ?))", after.CreatedAt, after.CreatedAt, after.ID)
	}
	return s.readMessages(ctx, environmentID, q.Order("created_at, id").Limit(limit), oldestFirst,
		embedded{Subscribers: true, Templates: true})
}
