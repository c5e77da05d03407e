package service

import (
	"context"

	"messages/models"
	"messages/models/changefeed"
)

// CountChanges streams the state counts of the caller's messages (one subscriber's, or
// the environment's for an API key with subscriberID nil) of a channel or all: the
// counts now, then the counts again after each change to those messages that changes
// them. The counts are read once per batch of changes for every stream of the same
// counts (FollowCounts); a stream whose client reads slowly skips to the newest. The
// stream ends, with a last value carrying Err, when the server shuts down or a read of
// the counts fails, and closes when ctx ends.
func (s *Service) CountChanges(ctx context.Context, subscriberID *string, channel *models.ChannelType) (<-chan *models.Counts, error) {
	wake := make(chan struct{}, 1)
	f, err := s.FollowCounts(ctx, subscriberID, channel, func() {
		select {
		case wake <- struct{}{}:
		default:
		}
	})
	if err != nil {
		return nil, err
	}
	out := make(chan *models.Counts, 1)
	go streamCounts(ctx, f, wake, out)
	return out, nil
}

// streamCounts sends what f is told on out, the counts when they changed, until a
// failed read or the end of the watch (sent as the last value) or ctx ends.
func streamCounts(ctx context.Context, f *CountFollow, wake <-chan struct{}, out chan<- *models.Counts) {
	defer close(out)
	defer f.Close()
	for {
		if u, ok := f.Next(); ok {
			c := &models.Counts{States: u.States, Err: u.Err}
			if u.End != nil {
				c.Err = u.End
			}
			select {
			case out <- c:
			case <-ctx.Done():
				return
			}
			if c.Err != nil {
				return
			}
			continue
		}
		select {
		case <-wake:
		case <-ctx.Done():
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
