package store

import (
	"context"

	"messages/models"
)

// MaxWorkflows bounds the workflows one environment's preferences list: an inbox renders
// them all at once.
const MaxWorkflows = 1000

// Workflows returns the environment's workflows (templates) that are active and not
// deleted, by name, at most MaxWorkflows of them: what a subscriber's preferences list.
func (s *Store) Workflows(ctx context.Context, environmentID string) ([]*models.Template, error) {
	var out []*models.Template
	err := s.conn(ctx).Where("environment_id = ? AND active = ? AND deleted = ?", environmentID, true, false).
		Order("name, id").Limit(MaxWorkflows).Find(&out).Error
	return out, err
}
