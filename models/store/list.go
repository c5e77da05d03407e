package store

import (
	"context"
	"messages/models"

	"gorm.io/gorm"
)

// ListMessages returns one page of an environment's messages, newest first with ties
// broken by id descending, so paging is stable. Whatever the page size, it is one
// statement for the page with its subscribers (readMessages), one more for totalCount
// when asked and not known from the page, one more for templates that changed.
func (s *Store) ListMessages(ctx context.Context, environmentID string, f models.ListFilter, p models.Page, o models.ListOptions) (*models.MessagesPage, error) {
	found, err := s.page(ctx, environmentID, f, window{Offset: p.Number * p.Size, Size: p.Size, Walk: true}, o)
	if err != nil {
		return nil, err
	}
	return &models.MessagesPage{TotalCount: found.TotalCount, HasMore: found.HasMore, Data: found.Messages, PageSize: p.Size, Page: p.Number}, nil
}

// ListMessagesFrom returns up to size of the environment's messages f matches, in the
// list order, skipping offset of them, and whether more follow: the inbox's pages,
// which count in messages, not pages.
func (s *Store) ListMessagesFrom(ctx context.Context, environmentID string, f models.ListFilter, offset, size int, o models.ListOptions) ([]*models.Message, bool, error) {
	found, err := s.page(ctx, environmentID, f, window{Offset: offset, Size: size}, o)
	if err != nil {
		return nil, false, err
	}
	return found.Messages, found.HasMore, nil
}

// KeysetOfMessage returns the list position of one of the environment's messages that
// f's subscriber and channel allow, for a page that starts after it, from the message's
// tombstone when it was deleted since; not found when there is neither.
func (s *Store) KeysetOfMessage(ctx context.Context, environmentID string, f models.ListFilter, id string) (*models.Keyset, error) {
	if !models.IsID(id) {
		return nil, errNotFound("message")
	}
	var rows []struct {
		ID        string
		CreatedAt models.Time
	}
	q := s.filtered(ctx, environmentID, models.ListFilter{SubscriberID: f.SubscriberID, Channel: f.Channel})
	if err := q.Select("id, created_at").Where("id = ?", id).Limit(1).Find(&rows).Error; err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		// Deleted since the client read it: its tombstone keeps its place in the list.
		gone := s.conn(ctx).Model(&MessageDeletion{}).Where("environment_id = ?", environmentID)
		if f.SubscriberID != nil {
			gone = gone.Where(scopedToSubscriber, environmentID, *f.SubscriberID)
		}
		if f.Channel != nil {
			gone = gone.Where("channel = ?", string(*f.Channel))
		}
		if err := gone.Select("id, created_at").Where("id = ?", id).Limit(1).Find(&rows).Error; err != nil {
			return nil, err
		}
	}
	if len(rows) == 0 {
		return nil, errNotFound("message")
	}
	return &models.Keyset{CreatedAt: rows[0].CreatedAt, ID: rows[0].ID}, nil
}

// filtered returns a query on the environment's messages narrowed by f. The subscriber
// filter names the external id: the subquery finds the row id in the same statement (an
// unknown subscriber matches no message, never everyone's), and both databases read it
// as a constant that bounds the (environment, subscriber, ...) index range.
func (s *Store) filtered(ctx context.Context, environmentID string, f models.ListFilter) *gorm.DB {
	q := s.conn(ctx).Model(&models.Message{}).Where("environment_id = ?", environmentID)
	if f.SubscriberID != nil {
		q = q.Where(scopedToSubscriber, environmentID, *f.SubscriberID)
	}
	if f.Channel != nil {
		q = q.Where("channel = ?", string(*f.Channel))
	}
	if len(f.TransactionIDs) > 0 {
		q = q.Where("transaction_id IN ?", f.TransactionIDs)
	}
	if len(f.TemplateIDs) > 0 {
		q = q.Where("template_id IN ?", f.TemplateIDs)
	}
	if f.CreatedFrom != nil {
		q = q.Where("created_at >= ?", *f.CreatedFrom)
	}
	if f.CreatedTo != nil {
		q = q.Where("created_at <= ?", *f.CreatedTo)
	}
	return byState(q, f.StateFilter)
}

// byState narrows q by the inbox state f asks for, as the counters tell the states
// apart: snoozed is snoozed_until set.
func byState(q *gorm.DB, f models.StateFilter) *gorm.DB {
	for _, c := range stateConditions(f) {
		q = q.Where(c.sql, c.args...)
	}
	return q
}

// condition is one SQL condition with its values.
type condition struct {
	sql  string
	args []any
}

// stateConditions are the conditions of f (byState, and CountEach's per filter).
func stateConditions(f models.StateFilter) []condition {
	var out []condition
	for _, c := range []struct {
		column string
		want   *bool
	}{{"`read` = ?", f.Read}, {"seen = ?", f.Seen}, {"archived = ?", f.Archived}} {
		if c.want != nil {
			out = append(out, condition{c.column, []any{*c.want}})
		}
	}
	if f.Snoozed != nil {
		if *f.Snoozed {
			out = append(out, condition{sql: "snoozed_until IS NOT NULL"})
		} else {
			out = append(out, condition{sql: "snoozed_until IS NULL"})
		}
	}
	if f.Severities != 0 && !f.Severities.All() {
		out = append(out, severityCondition(f.Severities))
	}
	return out
}

// severityCondition keeps the messages of the severities in set, as the counters'
// triggers tell them apart: high, medium and low by name, none any other value (none,
// empty, or another writer's). With none in the set it names the levels left out.
func severityCondition(set models.SeveritySet) condition {
	var in, out []string
	for _, s := range []models.Severity{models.SeverityHigh, models.SeverityMedium, models.SeverityLow} {
		if set.Has(s) {
			in = append(in, string(s))
		} else {
			out = append(out, string(s))
		}
	}
	if set.Has(models.SeverityNone) {
		return condition{"severity NOT IN ?", []any{out}}
	}
	return condition{"severity IN ?", []any{in}}
}

func (s *Store) subscriberInternalID(ctx context.Context, environmentID, subscriberID string) (string, error) {
	var ids []string
	err := s.conn(ctx).Model(&models.Subscriber{}).
		Where("environment_id = ? AND subscriber_id = ?", environmentID, subscriberID).
		Limit(1).Pluck("id", &ids).Error
	if err != nil {
		return "", err
	}
	if len(ids) == 0 {
		return "", gorm.ErrRecordNotFound
	}
	return ids[0], nil
}

// embed attaches subscribers and templates to messages already read, one query for each
// kind (pages read them with the messages instead: readMessages).
func (s *Store) embed(ctx context.Context, environmentID string, msgs []*models.Message, subscribers, templates bool) error {
	if len(msgs) == 0 {
		return nil
	}
	db := s.conn(ctx)
	if subscribers {
		var rows []*models.Subscriber
		if err := db.Where("environment_id = ? AND id IN ?", environmentID, distinct(msgs, func(m *models.Message) string { return m.SubscriberID })).
			Find(&rows).Error; err != nil {
			return err
		}
		byID := make(map[string]*models.Subscriber, len(rows))
		for _, r := range rows {
			byID[r.ID] = r
		}
		for _, m := range msgs {
			m.Subscriber = byID[m.SubscriberID]
		}
	}
	if templates {
		ids := distinct(msgs, func(m *models.Message) string { return m.TemplateID })
		if len(ids) == 0 {
			return nil
		}
		byID, err := s.templates.read(ctx, s, environmentID, ids)
		if err != nil {
			return err
		}
		for _, m := range msgs {
			m.Template = byID[m.TemplateID]
		}
	}
	return nil
}

// distinct returns the non-empty values of key over msgs, each once, in first-seen order.
func distinct(msgs []*models.Message, key func(*models.Message) string) []string {
	seen := make(map[string]bool, len(msgs))
	out := make([]string, 0, len(msgs))
	for _, m := range msgs {
		if k := key(m); k != "" && !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}
