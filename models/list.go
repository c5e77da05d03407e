package models

import (
	"context"

	"gorm.io/gorm"
)

// Limits of a list request, enforced by the resolver and documented in the API.
const (
	DefaultPageSize   = 10
	MaxPageSize       = 1000
	MaxPage           = 10_000_000
	MaxTransactionIDs = 100
	MaxFilterLength   = 255
)

// ListFilter narrows a list of messages. Nil and empty fields do not filter.
type ListFilter struct {
	Channel *ChannelType
	// SubscriberID is the external subscriber id (Subscriber.subscriberId).
	SubscriberID   *string
	TransactionIDs []string
}

// Page selects one page of a list: Number counts from 0, Size is the page length.
type Page struct {
	Number int
	Size   int
}

// ListOptions says which parts of a page the caller will use, so GraphQL queries that
// do not select totalCount, subscriber or template do not pay for them.
type ListOptions struct {
	Count       bool
	Subscribers bool
	Templates   bool
}

// Everything is what /v1 always returns.
var Everything = ListOptions{Count: true, Subscribers: true, Templates: true}

// MessagesPage is one page of messages and what the caller needs to fetch the next.
type MessagesPage struct {
	TotalCount int        `json:"totalCount"`
	HasMore    bool       `json:"hasMore"`
	Data       []*Message `json:"data"`
	PageSize   int        `json:"pageSize"`
	Page       int        `json:"page"`
}

// ListMessages returns one page of an environment's messages, newest first with ties
// broken by id descending, so paging is stable. Whatever the page size, it is one
// statement for the page with its subscribers (readMessages), one more for totalCount
// when asked and not known from the page, one more for templates that changed.
func (s *Store) ListMessages(ctx context.Context, environmentID string, f ListFilter, p Page, o ListOptions) (*MessagesPage, error) {
	found, err := s.page(ctx, environmentID, f, window{Offset: p.Number * p.Size, Size: p.Size, Walk: true}, o)
	if err != nil {
		return nil, err
	}
	return &MessagesPage{TotalCount: found.TotalCount, HasMore: found.HasMore, Data: found.Messages, PageSize: p.Size, Page: p.Number}, nil
}

// filtered returns a query on the environment's messages narrowed by f. The subscriber
// filter names the external id: the subquery finds the row id in the same statement (an
// unknown subscriber matches no message, never everyone's), and both databases read it
// as a constant that bounds the (environment, subscriber, ...) index range.
func (s *Store) filtered(ctx context.Context, environmentID string, f ListFilter) *gorm.DB {
	q := s.conn(ctx).Model(&Message{}).Where("environment_id = ?", environmentID)
	if f.SubscriberID != nil {
		q = q.Where(scopedToSubscriber, environmentID, *f.SubscriberID)
	}
	if f.Channel != nil {
		q = q.Where("channel = ?", string(*f.Channel))
	}
	if len(f.TransactionIDs) > 0 {
		q = q.Where("transaction_id IN ?", f.TransactionIDs)
	}
	return q
}

func (s *Store) subscriberInternalID(ctx context.Context, environmentID, subscriberID string) (string, error) {
	var ids []string
	err := s.conn(ctx).Model(&Subscriber{}).
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
func (s *Store) embed(ctx context.Context, environmentID string, msgs []*Message, subscribers, templates bool) error {
	if len(msgs) == 0 {
		return nil
	}
	db := s.conn(ctx)
	if subscribers {
		var rows []*Subscriber
		if err := db.Where("environment_id = ? AND id IN ?", environmentID, distinct(msgs, func(m *Message) string { return m.SubscriberID })).
			Find(&rows).Error; err != nil {
			return err
		}
		byID := make(map[string]*Subscriber, len(rows))
		for _, r := range rows {
			byID[r.ID] = r
		}
		for _, m := range msgs {
			m.Subscriber = byID[m.SubscriberID]
		}
	}
	if templates {
		ids := distinct(msgs, func(m *Message) string { return m.TemplateID })
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
func distinct(msgs []*Message, key func(*Message) string) []string {
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
