package graph

import (
	"context"

	"messages/models"
)

// countOf answers one field of MessageCounts: the counts summed over the states f
// matches, or the error that ended a live stream of counts.
func countOf(c *models.Counts, f models.StateFilter) (int, error) {
	if c.Err != nil {
		return 0, streamEnded(c.Err)
	}
	return c.States.Count(f), nil
}

// changeOne applies c to one message and returns it as stored after, not found when
// the subscriber has no such message.
func (r *mutationResolver) changeOne(ctx context.Context, subscriberID, messageID string, c models.StateChange) (*models.Message, error) {
	changed, err := r.Service.StateChange(ctx, models.StateTarget{SubscriberID: subscriberID, MessageIDs: []string{messageID}}, c)
	if err != nil {
		return nil, err
	}
	if len(changed.Messages) == 0 {
		return nil, models.Errorf(models.ENOTFOUND, "message not found")
	}
	return changed.Messages[0], nil
}

// severities is the set of a severity argument; none (nil or empty) filters nothing.
// The enum has already refused a severity it does not know.
func severities(list []models.Severity) models.SeveritySet {
	set, _ := models.NewSeveritySet(list)
	return set
}
