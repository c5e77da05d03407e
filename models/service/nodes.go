package service

import (
	"context"
	"fmt"

	"messages/models"
)

// MaxNodes bounds the records one nodes query names.
const MaxNodes = 100

// Nodes loads the records q names from the caller's environment; for a session, only its
// own subscriber's messages and the subscriber itself are found. What the caller may not
// see is simply not found, so ids reveal nothing.
func (s *Service) Nodes(ctx context.Context, q models.NodeQuery) (*models.Nodes, error) {
	caller, err := models.CallerFrom(ctx)
	if err != nil {
		return nil, err
	}
	if n := len(q.Messages) + len(q.Subscribers) + len(q.Templates); n > MaxNodes {
		return nil, models.Invalid("ids", n, fmt.Sprintf("ids accepts at most %d global ids, got %d", MaxNodes, n))
	}
	q.SubscriberID = caller.SubscriberID
	return s.store.Nodes(ctx, caller.EnvironmentID, q)
}
