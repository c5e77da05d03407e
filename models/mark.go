package models

import (
	"context"
	"errors"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// MarkAction sets the state of a message's call-to-action, as a subscriber pressing one
// of its buttons would.
type MarkAction struct {
	// SubscriberID is the external subscriber id the message must belong to.
	SubscriberID string
	MessageID    string
	Type         ButtonType
	Status       MessageActionStatus
	// Payload replaces the stored result payload when set; nil keeps it.
	Payload JSON
}

// MarkMessageAction applies a to the message and returns the message as stored after the
// change, with its subscriber and template. Only cta.action.status, cta.action.result.type
// and (when given) cta.action.result.payload change. The row is locked for the
// read-modify-write, so concurrent marks apply one after the other and the last wins whole.
func (s *Store) MarkMessageAction(ctx context.Context, environmentID string, a MarkAction) (*Message, error) {
	if !IsID(a.MessageID) {
		return nil, errNotFound("message")
	}
	var msg Message
	err := s.conn(ctx).Transaction(func(tx *gorm.DB) error {
		var subscriberIDs []string
		if err := tx.Model(&Subscriber{}).
			Where("environment_id = ? AND subscriber_id = ?", environmentID, a.SubscriberID).
			Limit(1).Pluck("id", &subscriberIDs).Error; err != nil {
			return err
		}
		if len(subscriberIDs) == 0 {
			return errNotFound("subscriber")
		}
		err := tx.Clauses(clause.Locking{Strength: clause.LockingStrengthUpdate}).
			Where("id = ? AND environment_id = ? AND subscriber_id = ?", a.MessageID, environmentID, subscriberIDs[0]).
			Take(&msg).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return errNotFound("message")
		}
		if err != nil {
			return err
		}

		if msg.CTA.Action == nil {
			msg.CTA.Action = &CTAAction{}
		}
		action := msg.CTA.Action
		action.Status = a.Status
		if action.Result == nil {
			action.Result = &CTAResult{}
		}
		action.Result.Type = a.Type
		if a.Payload != nil {
			action.Result.Payload = a.Payload
		}
		if err := tx.Model(&Message{ID: msg.ID}).Where("environment_id = ?", environmentID).
			Select("cta").Updates(&Message{CTA: msg.CTA}).Error; err != nil {
			return err
		}
		msg.normalize()
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := s.embed(ctx, environmentID, []*Message{&msg}, true, true); err != nil {
		return nil, err
	}
	return &msg, nil
}
