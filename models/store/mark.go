package store

import (
	"context"
	"errors"
	"messages/models"
	"messages/models/cluster"

	"gorm.io/gorm"
)

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
// and (when given) cta.action.result.payload change. On MySQL, outside a caller's
// transaction, it takes two round trips (markbatch.go); otherwise four: BEGIN (or a
// savepoint), the UPDATE, the SELECT of the record, COMMIT.
func (s *Store) MarkMessageAction(ctx context.Context, environmentID string, a models.MarkAction) (*models.Message, error) {
	if !models.IsID(a.MessageID) {
		return nil, errNotFound("message")
	}
	if s.batchPool != nil && !inTx(ctx) {
		return s.markBatched(ctx, environmentID, a)
	}
	var msg *models.Message
	// A transaction, though the UPDATE is one statement: if the request is abandoned while
	// the UPDATE waits for a row lock, the connection closes before COMMIT and the server
	// rolls the change back, instead of applying it after the client was told 503. It is
	// run again when it loses a conflict (on Galera, concurrent marks of one message on
	// two nodes: the second fails certification): the UPDATE sets values, so running it
	// again is the same mark.
	err := s.RetryTransaction(ctx, func(ctx context.Context) error {
		tx := s.conn(ctx)
		res := tx.Exec(markSQL, string(a.Status), string(a.Type), a.Payload,
			a.MessageID, environmentID, environmentID, a.SubscriberID)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			// Missing, another subscriber's, or another tenant's: the same answer for all.
			return errNotFound("message")
		}
		if hook := s.o.markHook; hook != nil {
			if err := cluster.NoteConflict(ctx, hook(ctx, a.MessageID)); err != nil {
				return err
			}
		}
		// The record as stored now, with its subscriber and template, in one statement.
		read, err := s.readMessages(ctx, environmentID,
			tx.Model(&models.Message{}).Select("id").Where("id = ? AND environment_id = ?", a.MessageID, environmentID),
			anyOrder, embedded{Subscribers: true, Templates: true})
		if err != nil {
			return err
		}
		if len(read) == 0 {
			return gorm.ErrRecordNotFound
		}
		msg = read[0]
		return nil
	})
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, errNotFound("message")
	}
	if err != nil && inTx(ctx) && models.IsConflict(err) {
		// The caller's transaction runs again, or reports this conflict itself when it
		// gives up: the answer made of this error is dropped, so it is not an outage to log.
		return nil, models.Unavailable(s.Now())
	}
	if err != nil {
		return nil, err
	}
	s.noteWrite()
	return msg, nil
}
