package store

import (
	"context"
	"sync/atomic"
	"time"

	"messages/models"
)

// Deleting messages is permanent, as the platform's delete is: the rows go, and the
// database's triggers take their counts back (messages_count_delete) and leave a
// tombstone (messages_tombstone, migration 13) that the change feed reads as a deletion,
// whoever deleted them.

// deleteBatch is how many messages one statement of a delete by filter or transaction
// removes: each batch is a transaction of its own, as a bulk state change's is.
const deleteBatch = stateBatch

// DeleteMessages deletes the messages t names, or every message of t's transaction, or
// every one of t's subscriber's that t's channel and filter match, and says how many it
// deleted and, for named messages, which. Named messages are deleted in one transaction;
// the others in batches, each its own transaction, so a delete that fails midway has
// deleted a part and is completed by running it again. Deleting what is already gone
// deletes nothing.
func (s *Store) DeleteMessages(ctx context.Context, environmentID string, t models.DeleteTarget) (*models.Deleted, error) {
	defer s.noteWrite()
	if len(t.MessageIDs) > 0 {
		return s.deleteNamed(ctx, environmentID, t)
	}
	out := &models.Deleted{}
	f := deleteFilter(t)
	after := ""
	for {
		var n int
		var last string
		err := s.RetryTransaction(ctx, func(ctx context.Context) error {
			var err error
			n, last, err = s.deleteBatch(ctx, environmentID, f, after)
			return err
		})
		out.Deleted += n
		if err != nil || last == "" {
			return out, err
		}
		after = last
	}
}

// deleteFilter is the messages a delete that names none applies to.
func deleteFilter(t models.DeleteTarget) models.ListFilter {
	f := models.ListFilter{Channel: t.Channel, SubscriberID: t.SubscriberID, StateFilter: t.Filter, TemplateIDs: t.TemplateIDs}
	if t.TransactionID != nil {
		f.TransactionIDs = []string{*t.TransactionID}
	}
	return f
}

// deleteNamed deletes the named messages (of t's subscriber and channel, when it names
// them) in one transaction.
func (s *Store) deleteNamed(ctx context.Context, environmentID string, t models.DeleteTarget) (*models.Deleted, error) {
	ids := make([]string, 0, len(t.MessageIDs))
	for _, id := range t.MessageIDs {
		if models.IsID(id) {
			ids = append(ids, id)
		}
	}
	out := &models.Deleted{IDs: []string{}}
	if len(ids) == 0 {
		return out, nil
	}
	f := deleteFilter(models.DeleteTarget{SubscriberID: t.SubscriberID, Channel: t.Channel})
	err := s.RetryTransaction(ctx, func(ctx context.Context) error {
		out.Deleted, out.IDs = 0, []string{}
		var found []string
		if err := s.filtered(ctx, environmentID, f).Where("id IN ?", ids).Pluck("id", &found).Error; err != nil {
			return err
		}
		if len(found) == 0 {
			return nil
		}
		res := s.conn(ctx).Exec("DELETE FROM messages WHERE environment_id = ? AND id IN ?", environmentID, found)
		out.Deleted, out.IDs = int(res.RowsAffected), found
		return res.Error
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// deleteBatch deletes at most deleteBatch of the messages f matches with an id after
// after, in the transaction ctx carries: their ids first, through the filter's index,
// then those rows by primary key (MySQL cannot DELETE through a LIMIT subquery of the
// same table). last is the batch's greatest id when it was full, after which more
// messages may match, and empty when none may. The batches go on from the last one's id,
// as a bulk change's do (changeBatch): InnoDB keeps deleted rows in the index until its
// purge has run, and a batch read from the start would pass over them.
func (s *Store) deleteBatch(ctx context.Context, environmentID string, f models.ListFilter, after string) (deleted int, last string, err error) {
	q := s.filtered(ctx, environmentID, f)
	if after != "" {
		q = q.Where("id > ?", after)
	}
	var ids []string
	if err := q.Order("id").Limit(deleteBatch).Pluck("id", &ids).Error; err != nil {
		return 0, "", err
	}
	if len(ids) == 0 {
		return 0, "", nil
	}
	res := s.conn(ctx).Exec("DELETE FROM messages WHERE environment_id = ? AND id IN ?", environmentID, ids)
	if len(ids) == deleteBatch {
		last = ids[len(ids)-1]
	}
	return int(res.RowsAffected), last, res.Error
}

// MessageDeletion is the tombstone a deleted message leaves (message_deletions), kept
// for the deletion retention: where the message was and when it went.
type MessageDeletion struct {
	ID            string `gorm:"primaryKey"`
	EnvironmentID string
	// SubscriberID is the subscriber's internal id, as messages.subscriber_id.
	SubscriberID string
	Channel      models.ChannelType
	// CreatedAt is the message's, its place in the lists.
	CreatedAt models.Time
	DeletedAt models.Stamp `gorm:"->"`
}

// TableName is message_deletions.
func (MessageDeletion) TableName() string { return "message_deletions" }

// tombstonePurgeBatch bounds the tombstones one statement of PurgeDeletions removes.
const tombstonePurgeBatch = 1000

// PurgeDeletions removes the tombstones of messages deleted longer than retention ago, by
// the database's clock (the one that stamped them), a batch at a time, and returns how
// many it removed: on Vitess shard by shard (eachShard).
func (s *Store) PurgeDeletions(ctx context.Context, retention time.Duration) (int, error) {
	var purged atomic.Int64
	before := "deleted_at < " + s.nowSQL(-retention)
	err := s.eachShard(ctx, func(ctx context.Context) error {
		for {
			var ids []string
			if err := s.conn(ctx).Model(&MessageDeletion{}).Where(before).
				Order("deleted_at").Limit(tombstonePurgeBatch).Pluck("id", &ids).Error; err != nil {
				return err
			}
			if len(ids) == 0 {
				return nil
			}
			res := s.conn(ctx).Exec("DELETE FROM message_deletions WHERE id IN ? AND "+before, ids)
			if res.Error != nil {
				return res.Error
			}
			purged.Add(res.RowsAffected)
			if len(ids) < tombstonePurgeBatch {
				return nil
			}
		}
	})
	return int(purged.Load()), err
}

// SweepDeletions purges, every interval until ctx ends, the tombstones older than
// retention, logging what fails.
func (s *Store) SweepDeletions(ctx context.Context, interval, retention time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if _, err := s.PurgeDeletions(ctx, retention); err != nil && ctx.Err() == nil && s.o.logger != nil {
			s.o.logger.Warn("purging deleted messages' tombstones failed", "error", err)
		}
	}
}

// DeletedSince reports which of ids have a tombstone of a deletion at or after since (any,
// when since is zero) and are not stored again: messages deleted since then, which an
// import of a file written then skips.
func (s *Store) DeletedSince(ctx context.Context, ids []string, since time.Time) (map[string]bool, error) {
	out := map[string]bool{}
	if len(ids) == 0 {
		return out, nil
	}
	var found []string
	q := s.conn(ctx).Model(&MessageDeletion{}).Where("id IN ?", ids).
		// The environment in the correlation keeps the subquery on the tombstone's shard
		// (Vitess merges a subquery correlated on the shard key, and refuses others).
		Where("NOT EXISTS (SELECT 1 FROM messages WHERE messages.id = message_deletions.id AND messages.environment_id = message_deletions.environment_id)")
	if !since.IsZero() {
		q = q.Where("deleted_at >= ?", s.stampArg(since))
	}
	if err := q.Pluck("id", &found).Error; err != nil {
		return nil, err
	}
	for _, id := range found {
		out[id] = true
	}
	return out, nil
}
