package store

import (
	"context"
	"messages/models"
)

// MessageCounter is one row of message_counts: how many messages of an environment one
// shard has counted, for one subscriber (internal id) and one channel, the empty string
// meaning any. Triggers on messages keep the rows in the writing transaction (migration
// 00006), so a count is exact the moment a write commits, whoever wrote it.
type MessageCounter struct {
	EnvironmentID string `gorm:"primaryKey"`
	SubscriberID  string `gorm:"primaryKey"`
	Channel       string `gorm:"primaryKey"`
	Shard         int    `gorm:"primaryKey;autoIncrement:false"`
	N             int64
}

// TableName is the table the counters live in.
func (MessageCounter) TableName() string { return "message_counts" }

// countSQL sums the shards of one counter: at most 16 rows (one per shard on MySQL, one
// on SQLite), however many messages there are. The shard leads the primary key, so the
// shards are listed: 16 point lookups, where a range over the shard would scan the table.
// The subscriber's internal id is looked up in the same statement; an unknown subscriber
// matches no row, so it counts 0, never everyone.
const countSQL = `SELECT COALESCE(SUM(n), 0) FROM message_counts
WHERE shard IN (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)
  AND environment_id = ? AND channel = ? AND subscriber_id = `

const (
	anySubscriber = "''"
	oneSubscriber = "(SELECT id FROM subscribers WHERE environment_id = ? AND subscriber_id = ?)"
)

// countMessages returns how many of an environment's messages f matches, exactly, in one
// statement. Transaction ids have no counters: those messages are counted with COUNT,
// which stays small as a filter holds at most MaxTransactionIDs ids.
func (s *Store) countMessages(ctx context.Context, environmentID string, f models.ListFilter) (int, error) {
	var n int64
	if len(f.TransactionIDs) > 0 {
		q := s.conn(ctx).Model(&models.Message{}).Where("environment_id = ? AND transaction_id IN ?", environmentID, f.TransactionIDs)
		if f.SubscriberID != nil {
			q = q.Where("subscriber_id = "+oneSubscriber, environmentID, *f.SubscriberID)
		}
		if f.Channel != nil {
			q = q.Where("channel = ?", string(*f.Channel))
		}
		err := q.Count(&n).Error
		return int(n), err
	}
	channel := ""
	if f.Channel != nil {
		channel = string(*f.Channel)
	}
	query, args := countSQL+anySubscriber, []any{environmentID, channel}
	if f.SubscriberID != nil {
		query, args = countSQL+oneSubscriber, append(args, environmentID, *f.SubscriberID)
	}
	err := s.conn(ctx).Raw(query, args...).Scan(&n).Error
	return int(n), err
}
