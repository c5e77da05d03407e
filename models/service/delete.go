package service

import (
	"context"
	"fmt"

	"messages/models"
)

// Delete deletes messages for good, as the platform's delete does: those t names, or
// every message of t's transaction, or every one of a subscriber's that t's channel,
// filter and tags match. An API key deletes any subscriber's messages of its environment;
// a session only its own subscriber's: another's named messages do not exist for it,
// and a transaction or filter of another subscriber is forbidden. Deleting what is
// already gone deletes nothing and is no error; the transports answer it as the platform
// does. A delete by filter runs as a job, as a bulk state change does (statejobs.go):
// when it is not done shortly before ctx's deadline, the answer says so (JobID) and the
// delete carries on until done. An error means nothing was deleted.
func (s *Service) Delete(ctx context.Context, t models.DeleteTarget) (*models.Deleted, error) {
	caller, err := models.CallerFrom(ctx)
	if err != nil {
		return nil, err
	}
	if err := checkDelete(t); err != nil {
		return nil, err
	}
	if caller.Scoped() {
		if t.SubscriberID != nil && *t.SubscriberID != caller.SubscriberID {
			if len(t.MessageIDs) > 0 {
				return &models.Deleted{IDs: []string{}}, nil
			}
			return nil, models.Errorf(models.EFORBIDDEN, "this session may delete only its own subscriber's messages")
		}
		own := caller.SubscriberID
		t.SubscriberID = &own
	}
	if t.ByFilter() {
		if t.SubscriberID == nil {
			return nil, models.Invalid("subscriberId", nil, "subscriberId is required to delete messages by filter")
		}
		templates, none, err := s.templatesTagged(ctx, caller.EnvironmentID, t.Tags)
		if err != nil {
			return nil, err
		}
		if none {
			return &models.Deleted{}, nil
		}
		t.TemplateIDs = templates
		return s.deleteAll(ctx, caller.EnvironmentID, t)
	}
	return s.store.DeleteMessages(ctx, caller.EnvironmentID, t)
}

// checkDelete refuses a delete that names nothing it can apply.
func checkDelete(t models.DeleteTarget) error {
	if t.SubscriberID != nil {
		if err := checkText("subscriberId", *t.SubscriberID); err != nil {
			return err
		}
	}
	if len(t.MessageIDs) > models.MaxDeleteMessageIDs {
		return models.Invalid("messageIds", len(t.MessageIDs),
			fmt.Sprintf("at most %d messages may be named at once, got %d", models.MaxDeleteMessageIDs, len(t.MessageIDs)))
	}
	if t.TransactionID != nil {
		if len(t.MessageIDs) > 0 {
			return models.Invalid("transactionId", *t.TransactionID, "name messages or a transaction, not both")
		}
		if *t.TransactionID == "" {
			return models.Invalid("transactionId", "", "transactionId must not be empty")
		}
		if err := checkText("transactionId", *t.TransactionID); err != nil {
			return err
		}
	}
	if t.Channel != nil && !t.Channel.Valid() {
		return models.Invalid("channel", string(*t.Channel), "channel must be one of "+channelList())
	}
	if !t.ByFilter() && (!t.Filter.IsZero() || len(t.Tags) > 0) {
		return models.Invalid("filter", nil, "a filter applies to a delete of all a subscriber's messages, not to named messages or a transaction")
	}
	return nil
}
