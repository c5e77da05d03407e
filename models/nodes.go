package models

import "context"

// NodeQuery names the records Query.nodes asks for, by record id and kind, and whom for.
type NodeQuery struct {
	Messages, Subscribers, Templates []string
	// SubscriberID is the external id of the subscriber a session is scoped to
	// (Caller.SubscriberID): only that subscriber's messages and the subscriber itself are
	// found. Empty (an API key) finds any of the environment's.
	SubscriberID string
	// EmbedSubscribers and EmbedTemplates say which records to embed in the messages found.
	EmbedSubscribers, EmbedTemplates bool
}

// Nodes are the records a NodeQuery found, by record id; what is missing was not found
// in the environment, or is not the scoped subscriber's.
type Nodes struct {
	Messages    map[string]*Message
	Subscribers map[string]*Subscriber
	Templates   map[string]*Template
}

// scopedToSubscriber restricts messages to those of one subscriber, named by external id,
// as the mark does (markSQL): the subquery carries the environment too.
const scopedToSubscriber = "subscriber_id = (SELECT id FROM subscribers WHERE environment_id = ? AND subscriber_id = ?)"

// Nodes loads the records q names from one environment: one query per kind asked for,
// whatever the number of ids, and one more per kind embedded in the messages.
func (s *Store) Nodes(ctx context.Context, environmentID string, q NodeQuery) (*Nodes, error) {
	n := &Nodes{Messages: map[string]*Message{}, Subscribers: map[string]*Subscriber{}, Templates: map[string]*Template{}}
	db := s.conn(ctx)
	if len(q.Messages) > 0 {
		find := db.Where("environment_id = ? AND id IN ?", environmentID, q.Messages)
		if q.SubscriberID != "" {
			find = find.Where(scopedToSubscriber, environmentID, q.SubscriberID)
		}
		var rows []*Message
		if err := find.Find(&rows).Error; err != nil {
			return nil, err
		}
		for _, m := range rows {
			m.normalize()
			n.Messages[m.ID] = m
		}
		if err := s.embed(ctx, environmentID, rows, q.EmbedSubscribers, q.EmbedTemplates); err != nil {
			return nil, err
		}
		if err := chargeMessages(BudgetFrom(ctx), rows); err != nil {
			return nil, err
		}
	}
	if len(q.Subscribers) > 0 {
		find := db.Where("environment_id = ? AND id IN ?", environmentID, q.Subscribers)
		if q.SubscriberID != "" {
			find = find.Where("subscriber_id = ?", q.SubscriberID)
		}
		var rows []*Subscriber
		if err := find.Find(&rows).Error; err != nil {
			return nil, err
		}
		for _, r := range rows {
			n.Subscribers[r.ID] = r
		}
	}
	if len(q.Templates) > 0 {
		var rows []*Template
		if err := db.Where("environment_id = ? AND id IN ?", environmentID, q.Templates).Find(&rows).Error; err != nil {
			return nil, err
		}
		for _, r := range rows {
			r.normalize()
			n.Templates[r.ID] = r
		}
	}
	return n, nil
}
