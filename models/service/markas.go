package service

import (
	"context"
	"strings"

	"messages/models"
)

// MarkMessagesAs applies one of /v1's marks (read, seen, unread, unseen) to messages of
// one subscriber: those t names, or every one t's channel and filter match. It is
// MarkSubscriberMessages with the mark's change; a mark it does not know is refused. A
// mark of all of a channel's messages carried on after the answer has its Total.
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
	if len(t.MessageIDs) > 0 || !t.Filter.IsZero() || len(t.Tags) > 0 || len(t.TemplateIDs) > 0 || t.TransactionID != "" {
		return s.MarkSubscriberMessages(ctx, t, c)
	}
	// A mark of all the subscriber's messages of a channel: counted first, from the
	// counters (one statement), so that an answer given while the change carries on
	// can say how many messages it changes, the one thing /v1's clients read of it.
	if err := s.checkSubscriber(ctx, t.SubscriberID); err != nil {
		return nil, err
	}
	before, err := s.StateCounts(ctx, &t.SubscriberID, t.Channel)
	if err != nil {
		return nil, err
	}
	changed, err := s.StateChange(ctx, t, c)
	if err != nil || changed.Done() {
		return changed, err
	}
	for state, n := range before {
		if c.Changes(models.State(state)) {
			changed.Total += n
		}
	}
	changed.Total = max(changed.Total, changed.Changed)
	return changed, nil
}

// MarkSubscriberMessages is StateChange for /v1, which names the subscriber in its path:
// one the caller's environment does not have is not found (404), before anything is read
// or written, and so is another subscriber for a session.
func (s *Service) MarkSubscriberMessages(ctx context.Context, t models.StateTarget, c models.StateChange) (*models.StateChanged, error) {
	if err := s.checkSubscriber(ctx, t.SubscriberID); err != nil {
		return nil, err
	}
	return s.StateChange(ctx, t, c)
}

// checkSubscriber refuses, as not found, a subscriber /v1 names in its path that the
// caller's environment does not have, or another subscriber than a session's own.
func (s *Service) checkSubscriber(ctx context.Context, subscriberID string) error {
	caller, err := models.CallerFrom(ctx)
	if err != nil {
		return err
	}
	if err := checkText("subscriberId", subscriberID); err != nil {
		return err
	}
	if caller.Scoped() && subscriberID != caller.SubscriberID {
		return subscriberNotFound(subscriberID)
	}
	known, err := s.store.SubscriberIDs(ctx, caller.EnvironmentID, []string{subscriberID})
	if err != nil {
		return err
	}
	if known[subscriberID] == "" {
		return subscriberNotFound(subscriberID)
	}
	return nil
}

func subscriberNotFound(id string) error {
	return models.Errorf(models.ENOTFOUND, "subscriber %q not found in this environment", id)
}
