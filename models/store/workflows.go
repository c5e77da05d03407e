package store

import (
	"context"
	"slices"

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

// TemplatesTagged returns the ids of the environment's templates, deleted or not (their
// messages remain), whose tags meet every group: each group is met by a template with any
// of its tags. Tags are kept in a JSON document per template, so they are matched here
// rather than in SQL; an environment has few templates.
func (s *Store) TemplatesTagged(ctx context.Context, environmentID string, groups [][]string) ([]string, error) {
	var rows []struct {
		ID   string
		Tags []string `gorm:"serializer:jsontext"`
	}
	if err := s.conn(ctx).Model(&models.Template{}).Select("id, tags").Where("environment_id = ?", environmentID).
		Order("id").Find(&rows).Error; err != nil {
		return nil, err
	}
	ids := []string{}
	for _, r := range rows {
		if slices.ContainsFunc(groups, func(group []string) bool {
			return !slices.ContainsFunc(group, func(tag string) bool { return slices.Contains(r.Tags, tag) })
		}) {
			continue
		}
		ids = append(ids, r.ID)
	}
	return ids, nil
}

// CountMessages counts the environment's messages f matches: from the counters when
// they answer it (ListFilter.Counted), else with COUNT over its rows.
func (s *Store) CountMessages(ctx context.Context, environmentID string, f models.ListFilter) (int, error) {
	return s.countMessages(ctx, environmentID, f)
}
