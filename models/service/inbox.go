package service

import (
	"context"
	"fmt"
	"time"

	"messages/models"
)

// MaxSnooze is how far ahead a message may be snoozed.
const MaxSnooze = 90 * 24 * time.Hour

// MaxStateFilters bounds the filters one counts request asks for.
const MaxStateFilters = 30

// StateChange changes the inbox state of messages of one subscriber: those t names, or
// every one t's channel and filter match. A session changes only its own subscriber's
// messages; another's do not exist for it. A change of every message runs as a job
// (statejobs.go): when it is not done shortly before ctx's deadline, the answer says so
// (JobID) and the change carries on until done. An error means nothing was changed.
func (s *Service) StateChange(ctx context.Context, t models.StateTarget, c models.StateChange) (*models.StateChanged, error) {
	caller, err := models.CallerFrom(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.checkStateChange(t, c); err != nil {
		return nil, err
	}
	if caller.Scoped() && t.SubscriberID != caller.SubscriberID {
		if len(t.MessageIDs) > 0 {
			return &models.StateChanged{Messages: []*models.Message{}}, nil
		}
		return nil, models.Errorf(models.EFORBIDDEN, "this session may change only its own subscriber's messages")
	}
	if len(t.MessageIDs) == 0 {
		templates, none, err := s.templatesTagged(ctx, caller.EnvironmentID, t.Tags)
		if err != nil {
			return nil, err
		}
		if none {
			return &models.StateChanged{}, nil
		}
		t.TemplateIDs = templates
		return s.changeAll(ctx, caller.EnvironmentID, t, c)
	}
	return s.store.ChangeState(ctx, caller.EnvironmentID, t, c)
}

func (s *Service) checkStateChange(t models.StateTarget, c models.StateChange) error {
	if err := checkText("subscriberId", t.SubscriberID); err != nil {
		return err
	}
	if err := checkText("transactionId", t.TransactionID); err != nil {
		return err
	}
	if t.TransactionID != "" && len(t.MessageIDs) > 0 {
		return models.Invalid("transactionId", t.TransactionID, "name messages or a transaction, not both: transactionId narrows a change of all messages")
	}
	if len(t.MessageIDs) > models.MaxStateMessageIDs {
		return models.Invalid("messageIds", len(t.MessageIDs),
			fmt.Sprintf("at most %d messages may be named at once, got %d", models.MaxStateMessageIDs, len(t.MessageIDs)))
	}
	if t.Channel != nil && !t.Channel.Valid() {
		return models.Invalid("channel", string(*t.Channel), "channel must be one of "+channelList())
	}
	if c.IsZero() {
		return models.Invalid("change", nil, "the change must set at least one of read, seen, archived, snoozedUntil")
	}
	if c.SnoozedUntil != nil {
		if len(t.MessageIDs) == 0 {
			return models.Invalid("snoozedUntil", c.SnoozedUntil.String(), "snooze names its messages")
		}
		if c.Unsnooze {
			return models.Invalid("snoozedUntil", c.SnoozedUntil.String(), "a change cannot both snooze and unsnooze")
		}
		now := s.now()
		if !c.SnoozedUntil.After(now) || c.SnoozedUntil.Sub(now) > MaxSnooze {
			return models.Invalid("snoozedUntil", c.SnoozedUntil.String(),
				fmt.Sprintf("snoozedUntil must be in the future, at most %d days ahead", int(MaxSnooze.Hours()/24)))
		}
	}
	return nil
}

// CountsQuery asks how many of one subscriber's (or the environment's) messages each
// filter matches.
type CountsQuery struct {
	// SubscriberID is the external id; nil counts the environment's messages (an API key
	// only: a session counts its own subscriber's).
	SubscriberID *string
	Channel      *models.ChannelType
	Filters      []models.StateFilter
}

// Counts answers each of q's filters, in order, exactly, from one read of the counters.
func (s *Service) Counts(ctx context.Context, q CountsQuery) ([]int, error) {
	counts, err := s.StateCounts(ctx, q.SubscriberID, q.Channel)
	if err != nil {
		return nil, err
	}
	if len(q.Filters) > MaxStateFilters {
		return nil, models.Invalid("filters", len(q.Filters), fmt.Sprintf("at most %d filters may be counted at once", MaxStateFilters))
	}
	out := make([]int, len(q.Filters))
	for i, f := range q.Filters {
		out[i] = counts.Count(f)
	}
	return out, nil
}

// StateCounts returns how many of the caller's messages (one subscriber's, or for an
// API key the environment's when subscriberID is nil) of a channel, or all, are in each
// inbox state.
func (s *Service) StateCounts(ctx context.Context, subscriberID *string, channel *models.ChannelType) (models.StateCounts, error) {
	caller, err := models.CallerFrom(ctx)
	if err != nil {
		return models.StateCounts{}, err
	}
	if subscriberID, err = scopedSubscriber(caller, subscriberID); err != nil {
		return models.StateCounts{}, err
	}
	if _, err := listFilter(channel, subscriberID, nil); err != nil {
		return models.StateCounts{}, err
	}
	return s.store.CountStates(ctx, caller.EnvironmentID, subscriberID, channel)
}

// InboxQuery is a page of a subscriber's inbox as the platform's inbox API asks for it:
// counted in messages from an offset, or after a message named by its id.
type InboxQuery struct {
	SubscriberID *string
	Channel      *models.ChannelType
	State        models.StateFilter
	// Tags keeps the messages of workflows with these tags (groups, each met by any of
	// its tags); none: all.
	Tags [][]string
	// CreatedFrom and CreatedTo keep messages created in that range, both ends included.
	CreatedFrom, CreatedTo *models.Time
	// Limit is the page size (default models.DefaultPageSize); Offset skips that many
	// messages; AfterID starts after that message instead.
	Limit, Offset *int
	AfterID       *string
	Parts         models.ListOptions
}

// Inbox returns a page of the caller's inbox and whether more follow.
func (s *Service) Inbox(ctx context.Context, q InboxQuery) ([]*models.Message, bool, error) {
	caller, err := models.CallerFrom(ctx)
	if err != nil {
		return nil, false, err
	}
	if q.SubscriberID, err = scopedSubscriber(caller, q.SubscriberID); err != nil {
		return nil, false, err
	}
	f, err := listFilter(q.Channel, q.SubscriberID, nil)
	if err != nil {
		return nil, false, err
	}
	f.StateFilter = q.State
	templates, none, err := s.templatesTagged(ctx, caller.EnvironmentID, q.Tags)
	if err != nil || none {
		return []*models.Message{}, false, err
	}
	f.TemplateIDs = templates
	f.CreatedFrom, f.CreatedTo = q.CreatedFrom, q.CreatedTo
	size := models.DefaultPageSize
	if q.Limit != nil {
		if *q.Limit < 1 || *q.Limit > models.MaxPageSize {
			return nil, false, models.Invalid("limit", *q.Limit, fmt.Sprintf("limit must be an integer from 1 to %d", models.MaxPageSize))
		}
		size = *q.Limit
	}
	if q.AfterID != nil {
		after, err := s.store.KeysetOfMessage(ctx, caller.EnvironmentID, f, *q.AfterID)
		if err != nil {
			return nil, false, err
		}
		page, err := s.store.MessagesAfter(ctx, caller.EnvironmentID, f, after, size, q.Parts)
		if err != nil {
			return nil, false, err
		}
		return page.Messages, page.HasNextPage, nil
	}
	offset := 0
	if q.Offset != nil {
		if *q.Offset < 0 || *q.Offset > models.MaxPage {
			return nil, false, models.Invalid("offset", *q.Offset, fmt.Sprintf("offset must be an integer from 0 to %d", models.MaxPage))
		}
		offset = *q.Offset
	}
	return s.store.ListMessagesFrom(ctx, caller.EnvironmentID, f, offset, size, q.Parts)
}
