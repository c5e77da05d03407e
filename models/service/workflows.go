package service

import (
	"context"

	"messages/models"
)

// Workflows returns the caller's environment's active workflows, by name: the
// preferences a subscriber's inbox shows, one per workflow.
func (s *Service) Workflows(ctx context.Context) ([]*models.Template, error) {
	caller, err := models.CallerFrom(ctx)
	if err != nil {
		return nil, err
	}
	return s.store.Workflows(ctx, caller.EnvironmentID)
}
