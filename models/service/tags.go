package service

import (
	"context"
	"encoding/binary"
	"fmt"

	"messages/models"
	"messages/models/store"
)

// MaxTags bounds the tags one inbox filter names, over all its groups.
const MaxTags = 30

// templatesTagged resolves the inbox client's tags filter to the caller's environment's
// templates (workflows) whose tags meet every group, each group met by any of its tags.
// none reports that no template does, so no message can match.
func (s *Service) templatesTagged(ctx context.Context, environmentID string, groups [][]string) (ids []string, none bool, err error) {
	n, err := checkTags(groups)
	if err != nil || n == 0 {
		return nil, false, err
	}
	ids, err = s.store.TemplatesTagged(ctx, environmentID, groups)
	return ids, err == nil && len(ids) == 0, err
}

// checkTags checks the tags of one filter and returns how many there are. A group
// without tags is refused: no template meets it, yet counted as no tags at all it would
// filter nothing.
func checkTags(groups [][]string) (int, error) {
	n := 0
	for _, g := range groups {
		if len(g) == 0 {
			return 0, models.Invalid("tags", nil, "each group of tags must name at least one tag")
		}
		for _, tag := range g {
			if err := checkText("tags", tag); err != nil {
				return 0, err
			}
			n++
		}
	}
	if n > MaxTags {
		return 0, models.Invalid("tags", n, fmt.Sprintf("at most %d tags may be named at once, got %d", MaxTags, n))
	}
	return n, nil
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
// matches, exactly, in two statements whatever the number of filters: the tags of every
// filter resolved from one read of the workflows, then every filter from one read of the
// counters (store.CountEach: a subscriber's counters by workflow and month answer tags
// and creation ranges). A count that also reads messages (store.CountReadsRows: a
// creation range covering a month in part, or tags and creation ranges across
// subscribers, for an API key naming none) runs in one of the environment's turns,
// shared by the same request waiting for it (countScans), and costs the caller a unit of
// its rate limit per filter that reads messages (models.Charge).
func (s *Service) InboxCounts(ctx context.Context, subscriberID *string, channel *models.ChannelType, filters []InboxFilter) ([]int, error) {
	caller, err := models.CallerFrom(ctx)
	if err != nil {
		return nil, err
	}
	if len(filters) > MaxStateFilters {
		return nil, models.Invalid("filters", len(filters), fmt.Sprintf("at most %d filters may be counted at once", MaxStateFilters))
	}
	if subscriberID, err = scopedSubscriber(caller, subscriberID); err != nil {
		return nil, err
	}
	if _, err := listFilter(channel, subscriberID, nil); err != nil {
		return nil, err
	}
	// The workflows of each filter with tags, from one read of them.
	var tagged [][][]string
	var taggedAt []int
	for i, f := range filters {
		n, err := checkTags(f.Tags)
		if err != nil {
			return nil, err
		}
		if n > 0 {
			tagged, taggedAt = append(tagged, f.Tags), append(taggedAt, i)
		}
	}
	templates := make([][]string, len(filters))
	if len(tagged) > 0 {
		each, err := s.store.TemplatesTaggedEach(ctx, caller.EnvironmentID, tagged)
		if err != nil {
			return nil, err
		}
		for k, i := range taggedAt {
			templates[i] = each[k]
		}
	}
	out := make([]int, len(filters))
	var asked []models.ListFilter
	var askedAt []int
	for i, f := range filters {
		if templates[i] != nil && len(templates[i]) == 0 {
			continue // no workflow has the tags: no message matches
		}
		asked = append(asked, models.ListFilter{SubscriberID: subscriberID, StateFilter: f.State, TemplateIDs: templates[i],
			CreatedFrom: f.CreatedFrom, CreatedTo: f.CreatedTo})
		askedAt = append(askedAt, i)
	}
	count := func(ctx context.Context) ([]int, error) {
		return s.store.CountEach(ctx, caller.EnvironmentID, subscriberID, channel, asked)
	}
	var counts []int
	if store.CountReadsRows(subscriberID, asked) {
		// Each filter the counters cannot answer reads messages row by row, a cost that
		// grows with the inbox: it is charged to the caller's rate limit, a unit per
		// such filter, before any is read.
		scanning := 0
		for _, f := range asked {
			if store.CountReadsRows(subscriberID, []models.ListFilter{f}) {
				scanning++
			}
		}
		if err := models.Charge(ctx, scanning); err != nil {
			return nil, err
		}
		key := []byte(caller.EnvironmentID)
		key = models.ListFilter{SubscriberID: subscriberID, Channel: channel}.AppendKey(key)
		key = binary.AppendUvarint(key, uint64(len(asked)))
		for _, f := range asked {
			key = f.AppendKey(key)
		}
		counts, err = s.scans.count(ctx, caller.EnvironmentID, string(key), count)
	} else {
		counts, err = count(ctx)
	}
	if err != nil {
		return nil, err
	}
	for k, i := range askedAt {
		out[i] = counts[k]
	}
	return out, nil
}
