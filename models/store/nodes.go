package store

import (
	"context"
	"messages/models"
)

// scopedToSubscriber restricts messages to those of one subscriber, named by external id,
// as the mark does (markSQL): the subquery carries the environment too.
const scopedToSubscriber = "subscriber_id = (SELECT id FROM subscribers WHERE environment_id = ? AND subscriber_id = ?)"

// Nodes loads the records q names from one environment: one query per kind asked for,
// whatever the number of ids, and one more per kind embedded in the messages.
func (s *Store) Nodes(ctx context.Context, environmentID string, q models.NodeQuery) (*models.Nodes, error) {
	n := &models.Nodes{Messages: map[string]*models.Message{}, Subscribers: map[string]*models.Subscriber{}, Templates: map[string]*models.Template{}}
	db := s.conn(ctx)
	if len(q.Messages) > 0 {
		find := db.Where("environment_id = ? AND id IN ?", environmentID, q.Messages)
		if q.SubscriberID != "" {
			find = find.Where(scopedToSubscriber, environmentID, q.SubscriberID)
		}
		var rows []*models.Message
		if err := find.Find(&rows).Error; err != nil {
			return nil, err
		}
		for _, m := range rows {
			m.Normalize()
			n.Messages[m.ID] = m
		}
		if err := s.embed(ctx, environmentID, rows, q.EmbedSubscribers, q.EmbedTemplates); err != nil {
			return nil, err
		}
		if err := chargeMessages(models.BudgetFrom(ctx), rows); err != nil {
			return nil, err
		}
	}
	if len(q.Subscribers) > 0 {
		find := db.Where("environment_id = ? AND id IN ?", environmentID, q.Subscribers)
		if q.SubscriberID != "" {
			find = find.Where("subscriber_id = ?", q.SubscriberID)
		}
		var rows []*models.Subscriber
		if err := find.Find(&rows).Error; err != nil {
			return nil, err
		}
		for _, r := range rows {
			n.Subscribers[r.ID] = r
		}
	}
	if len(q.Templates) > 0 {
		var rows []*models.Template
		if err := db.Where("environment_id = ? AND id IN ?", environmentID, q.Templates).Find(&rows).Error; err != nil {
			return nil, err
		}
		for _, r := range rows {
			r.Normalize()
			n.Templates[r.ID] = r
		}
	}
	return n, nil
}
