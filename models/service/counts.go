package service

import (
	"context"

	"messages/models"
	"messages/models/changefeed"
)

// CountChanges streams the state counts of the caller's messages (one subscriber's, or
// the environment's for an API key with subscriberID nil) of a channel or all: the
// counts now, then the counts again after each change to those messages that changes
// them. Changes that arrive while the counts are read are read together, once. The
// stream ends, with a last value carrying Err, when the change feed ends it, and closes
// when ctx ends.
func (s *Service) CountChanges(ctx context.Context, subscriberID *string, channel *models.ChannelType) (<-chan *models.Counts, error) {
	first, err := s.StateCounts(ctx, subscriberID, channel)
	if err != nil {
		return nil, err
	}
	sub, err := s.Events(ctx, EventsQuery{SubscriberID: subscriberID, Channel: channel})
	if err != nil {
		return nil, err
	}
	out := make(chan *models.Counts, 1)
	out <- &models.Counts{States: first}
	go s.followCounts(ctx, sub, subscriberID, channel, first, out)
	return out, nil
}

// followCounts reads the counts again after each batch of events of sub and sends them
// when they changed, until sub or ctx ends.
func (s *Service) followCounts(ctx context.Context, sub *changefeed.Subscription, subscriberID *string, channel *models.ChannelType, last models.StateCounts, out chan<- *models.Counts) {
	defer close(out)
	defer sub.Close()
	send := func(c *models.Counts) bool {
		select {
		case out <- c:
			return true
		case <-ctx.Done():
			return false
		}
	}
	for {
		var e *changefeed.Event
		var ok bool
		select {
		case e, ok = <-sub.Events():
		case <-ctx.Done():
			return
		}
		if !ok {
			return
		}
		if e.Err != nil {
			send(&models.Counts{Err: e.Err})
			return
		}
		end, closed := drain(sub.Events())
		now, err := s.StateCounts(ctx, subscriberID, channel)
		if err != nil {
			if ctx.Err() == nil {
				send(&models.Counts{Err: err})
			}
			return
		}
		if now != last {
			last = now
			if !send(&models.Counts{States: now}) {
				return
			}
		}
		if end != nil {
			send(&models.Counts{Err: end.Err})
			return
		}
		if closed {
			return
		}
	}
}

// drain takes the events already waiting, which one read of the counts covers, and
// returns the event that ended the stream, or whether it closed, if either came.
func drain(events <-chan *changefeed.Event) (end *changefeed.Event, closed bool) {
	for {
		select {
		case e, ok := <-events:
			if !ok {
				return nil, true
			}
			if e.Err != nil {
				return e, false
			}
		default:
			return nil, false
		}
	}
}
