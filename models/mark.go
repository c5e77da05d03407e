package models

import (
	"context"
	"errors"

	"gorm.io/gorm"
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

// markSQL is the whole mark: one conditional UPDATE of the mark columns, matching the
// message only in the caller's environment and only if it belongs to the named subscriber.
// Concurrent marks are applied by the database one at a time, each whole, so the last
// wins; no read-modify-write. With clientFoundRows (MySQL) and SQLite's change count, a
// repeated mark with the same values still reports its row.
const markSQL = `UPDATE messages
SET action_status = ?, action_result_type = ?, action_result_payload = COALESCE(?, action_result_payload)
WHERE id = ? AND environment_id = ?
  AND subscriber_id = (SELECT id FROM subscribers WHERE environment_id = ? AND subscriber_id = ?)`

// MarkMessageAction applies a to the message and returns the message as stored after the
// change, with its subscriber and template. Only cta.action.status, cta.action.result.type
// and (when given) cta.action.result.payload change.
func (s *Store) MarkMessageAction(ctx context.Context, environmentID string, a MarkAction) (*Message, error) {
	if !IsID(a.MessageID) {
		return nil, errNotFound("message")
	}
	var msg Message
	// A transaction, though the UPDATE is one statement: if the request is abandoned while
	// the UPDATE waits for a row lock, the connection closes before COMMIT and the server
	// rolls the change back, instead of applying it after the client was told 503.
	err := s.conn(ctx).Transaction(func(tx *gorm.DB) error {
		res := tx.Exec(markSQL, string(a.Status), string(a.Type), a.Payload,
			a.MessageID, environmentID, environmentID, a.SubscriberID)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			// Missing, another subscriber's, or another tenant's: the same answer for all.
			return errNotFound("message")
		}
		return tx.Where("id = ? AND environment_id = ?", a.MessageID, environmentID).Take(&msg).Error
	})
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, errNotFound("message")
	}
	if err != nil {
		return nil, err
	}
	msg.normalize()
	if err := s.embed(ctx, environmentID, []*Message{&msg}, true, true); err != nil {
		return nil, err
	}
	return &msg, nil
}
