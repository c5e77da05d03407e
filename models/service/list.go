package service

import (
	"context"
	"fmt"

	"messages/models"
)

// ListQuery is a list of messages as either API asked for it, before checks and defaults:
// /v1's query string, or the arguments of GraphQL's messages.
type ListQuery struct {
	// Filter is the list's filters as given; List checks them.
	Filter models.ListFilter
	// Page counts from 0 (default 0); Limit is the page size (default
	// models.DefaultPageSize).
	Page, Limit *int
	// Parts are the parts of the page the caller uses: /v1 all of them
	// (models.Everything), a GraphQL query what it selects.
	Parts models.ListOptions
}

// List returns one page of the caller's messages, newest first: the environment's for
// an API key (optionally one subscriber's), the session's subscriber's for a session.
func (s *Service) List(ctx context.Context, q ListQuery) (*models.MessagesPage, error) {
	caller, err := models.CallerFrom(ctx)
	if err != nil {
		return nil, err
	}
	f, err := checkFilter(caller, q.Filter)
	if err != nil {
		return nil, err
	}
	p, err := page(q.Page, q.Limit)
	if err != nil {
		return nil, err
	}
	return s.store.ListMessages(ctx, caller.EnvironmentID, f, p, q.Parts)
}

// checkFilter checks a list's filters and scopes them to the caller: a session's list is
// its own subscriber's.
func checkFilter(caller models.Caller, f models.ListFilter) (models.ListFilter, error) {
	var err error
	if f.SubscriberID, err = scopedSubscriber(caller, f.SubscriberID); err != nil {
		return f, err
	}
	checked, err := listFilter(f.Channel, f.SubscriberID, f.TransactionIDs)
	checked.StateFilter = f.StateFilter
	return checked, err
}

// listFilter checks a list's filters and builds the store's.
func listFilter(channel *models.ChannelType, subscriberID *string, transactionIDs []string) (models.ListFilter, error) {
	var f models.ListFilter
	if channel != nil {
		if !channel.Valid() {
			return f, models.Invalid("channel", string(*channel), "channel must be one of "+channelList())
		}
		f.Channel = channel
	}
	if subscriberID != nil {
		if err := checkText("subscriberId", *subscriberID); err != nil {
			return f, err
		}
		f.SubscriberID = subscriberID
	}
	if len(transactionIDs) > models.MaxTransactionIDs {
		return f, models.Invalid("transactionId", len(transactionIDs),
			fmt.Sprintf("transactionId accepts at most %d values, got %d", models.MaxTransactionIDs, len(transactionIDs)))
	}
	for _, id := range transactionIDs {
		if err := checkText("transactionId", id); err != nil {
			return f, err
		}
	}
	f.TransactionIDs = transactionIDs
	return f, nil
}

// page checks a page number and size and applies their defaults.
func page(number, limit *int) (models.Page, error) {
	p := models.Page{Number: 0, Size: models.DefaultPageSize}
	if number != nil {
		if *number < 0 || *number > models.MaxPage {
			return p, models.Invalid("page", *number, fmt.Sprintf("page must be an integer from 0 to %d", models.MaxPage))
		}
		p.Number = *number
	}
	if limit != nil {
		if *limit < 1 || *limit > models.MaxPageSize {
			return p, models.Invalid("limit", *limit, fmt.Sprintf("limit must be an integer from 1 to %d", models.MaxPageSize))
		}
		p.Size = *limit
	}
	return p, nil
}
