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
	each, err := s.TemplatesTaggedEach(ctx, environmentID, [][][]string{groups})
	if err != nil {
		return nil, err
	}
	return each[0], nil
}

// TemplatesTaggedEach is TemplatesTagged for the groups of several filters at once, from
// one read of the templates: the ids for each, in order.
func (s *Store) TemplatesTaggedEach(ctx context.Context, environmentID string, filters [][][]string) ([][]string, error) {
	var rows []struct {
		ID   string
		Tags []string `gorm:"serializer:jsontext"`
	}
	if err := s.conn(ctx).Model(&models.Template{}).Select("id, tags").Where("environment_id = ?", environmentID).
		Order("id").Find(&rows).Error; err != nil {
		return nil, err
	}
	out := make([][]string, len(filters))
	for i, groups := range filters {
		ids := []string{}
		for _, r := range rows {
			if slices.ContainsFunc(groups, func(group []string) bool {
				return !slices.ContainsFunc(group, func(tag string) bool { return slices.Contains(r.Tags, tag) })
			}) {
				continue
			}
			ids = append(ids, r.ID)
		}
		out[i] = ids
	}
	return out, nil
}
