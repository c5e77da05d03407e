package service

import (
	"context"
	"strings"

	"messages/models"
)

// MarkMessagesAs applies one of /v1's marks (read, seen, unread, unseen) to messages of
// one subscriber: those t names, or every one t's channel and filter match. It is
// MarkSubscriberMessages with the mark's change; a mark it does not know is refused.
func (s *Service) MarkMessagesAs(ctx context.Context, t models.StateTarget, as models.MarkAs) (*models.StateChanged, error) {
	c, ok := as.Change()
	if !ok {
		names := make([]string, len(models.MarkAsValues))
		for i, m := range models.MarkAsValues {
			names[i] = string(m)
		}
		var value any = string(as)
		if as == "" {
			value = nil
		}
		return nil, models.Invalid("markAs", value, "markAs must be one of "+strings.Join(names, ", "))
	}
	return s.MarkSubscriberMessages(ctx, t, c)
}

// MarkSubscriberMessages is StateChange for /v1, which names the subscriber in its path:
// one the caller's environment does not have is not found (404), before anything is read
// or written, and so is another subscriber for a session.
func (s *Service) MarkSubscriberMessages(ctx context.Context, t models.StateTarget, c models.StateChange) (*models.StateChanged, error) {
	caller, err := models.CallerFrom(ctx)
	if err != nil {
		return nil, err
	}
	if err := checkText("subscriberId", t.SubscriberID); err != nil {
		return nil, err
	}
	if caller.Scoped() && t.SubscriberID != caller.SubscriberID {
		return nil, subscriberNotFound(t.SubscriberID)
	}
	known, err := s.store.SubscriberIDs(ctx, caller.EnvironmentID, []string{t.SubscriberID})
	if err != nil {
		return nil, err
	}
	if known[t.SubscriberID] == "" {
		return nil, subscriberNotFound(t.SubscriberID)
	}
	return s.StateChange(ctx, t, c)
}

func subscriberNotFound(id string) error {
	return models.Errorf(models.ENOTFOUND, "subscriber %q not found in this environment", id)
}
