package service

import (
	"context"
	"fmt"

	"messages/models"
)

// MaxTags bounds the tags one inbox filter names, over all its groups.
const MaxTags = 30

// templatesTagged resolves the inbox client's tags filter to the caller's environment's
// templates (workflows) whose tags meet every group, each group met by any of its tags.
// none reports that no template does, so no message can match.
func (s *Service) templatesTagged(ctx context.Context, environmentID string, groups [][]string) (ids []string, none bool, err error) {
	n := 0
	for _, g := range groups {
		for _, tag := range g {
			if err := checkText("tags", tag); err != nil {
				return nil, false, err
			}
			n++
		}
	}
	if n > MaxTags {
		return nil, false, models.Invalid("tags", n, fmt.Sprintf("at most %d tags may be named at once, got %d", MaxTags, n))
	}
	if n == 0 {
		return nil, false, nil
	}
	ids, err = s.store.TemplatesTagged(ctx, environmentID, groups)
	return ids, err == nil && len(ids) == 0, err
}

// InboxFilter is one filter of the inbox client's counts: a state, and the tags of the
// workflows whose messages count (groups, each met by any of its tags; none: all).
type InboxFilter struct {
	State models.StateFilter
	Tags  [][]string
	// CreatedFrom and CreatedTo count messages created in that range, both ends included.
	CreatedFrom, CreatedTo *models.Time
}

// InboxCounts answers how many of the caller's messages of a channel each filter
// matches, exactly: the filters of states alone from one read of the counters, each with
// tags or a creation range by counting its rows.
func (s *Service) InboxCounts(ctx context.Context, subscriberID *string, channel *models.ChannelType, filters []InboxFilter) ([]int, error) {
	caller, err := models.CallerFrom(ctx)
	if err != nil {
		return nil, err
	}
	if len(filters) > MaxStateFilters {
		return nil, models.Invalid("filters", len(filters), fmt.Sprintf("at most %d filters may be counted at once", MaxStateFilters))
	}
	counts, err := s.StateCounts(ctx, subscriberID, channel)
	if err != nil {
		return nil, err
	}
	if subscriberID, err = scopedSubscriber(caller, subscriberID); err != nil {
		return nil, err
	}
	out := make([]int, len(filters))
	for i, f := range filters {
		ids, none, err := s.templatesTagged(ctx, caller.EnvironmentID, f.Tags)
		switch {
		case err != nil:
			return nil, err
		case none:
			out[i] = 0
		case ids == nil && f.CreatedFrom == nil && f.CreatedTo == nil:
			out[i] = counts.Count(f.State)
		default:
			n, err := s.store.CountMessages(ctx, caller.EnvironmentID, models.ListFilter{SubscriberID: subscriberID,
				Channel: channel, StateFilter: f.State, TemplateIDs: ids, CreatedFrom: f.CreatedFrom, CreatedTo: f.CreatedTo})
			if err != nil {
				return nil, err
			}
			out[i] = n
		}
	}
	return out, nil
}
