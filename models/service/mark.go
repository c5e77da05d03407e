package service

import (
	"context"
	"fmt"
	"unicode/utf8"

	"messages/models"
)

// Mark sets the state of a message's call-to-action, as the subscriber pressing one of
// its buttons would, and returns the message as stored after it. A session marks only
// its own subscriber's messages: another's do not exist for it (not found).
func (s *Service) Mark(ctx context.Context, a models.MarkAction) (*models.Message, error) {
	caller, err := models.CallerFrom(ctx)
	if err != nil {
		return nil, err
	}
	if err := checkMark(a); err != nil {
		return nil, err
	}
	if caller.Scoped() && a.SubscriberID != caller.SubscriberID {
		return nil, models.Errorf(models.ENOTFOUND, "message not found")
	}
	if a.Channel != nil {
		// A message's channel never changes, so it is checked before the mark rather than
		// in the mark's statement.
		found, err := s.store.Nodes(ctx, caller.EnvironmentID, models.NodeQuery{Messages: []string{a.MessageID}, SubscriberID: a.SubscriberID})
		if err != nil {
			return nil, err
		}
		if m := found.Messages[a.MessageID]; m == nil || m.Channel != *a.Channel {
			return nil, models.Errorf(models.ENOTFOUND, "message not found")
		}
	}
	return s.store.MarkMessageAction(ctx, caller.EnvironmentID, a)
}

// checkMark refuses a mark no message can take.
func checkMark(a models.MarkAction) error {
	if err := checkText("subscriberId", a.SubscriberID); err != nil {
		return err
	}
	if !a.Type.Valid() {
		return models.Invalid("type", string(a.Type), "type must be one of primary, secondary")
	}
	if !a.Status.Valid() {
		var value any = string(a.Status)
		if a.Status == "" {
			value = nil
		}
		return models.Invalid("status", value, "status must be one of pending, done")
	}
	p := a.Payload
	switch {
	case len(p) > models.MaxActionPayloadBytes:
		return models.Invalid("payload", nil, fmt.Sprintf("payload must be at most %d KiB", models.MaxActionPayloadBytes>>10))
	case p != nil && !utf8.Valid(p):
		return models.Invalid("payload", nil, "payload must be valid UTF-8")
	case p != nil && !p.IsObject():
		return models.Invalid("payload", p, "payload must be an object")
	case p.Depth() > models.MaxJSONDepth:
		return models.Invalid("payload", nil, fmt.Sprintf("payload must not nest deeper than %d levels", models.MaxJSONDepth))
	}
	return nil
}
