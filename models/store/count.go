package store

import (
	"context"
	"fmt"
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
	// State is the inbox state its messages are in (models.State, migration 00009).
	State models.State `gorm:"primaryKey;autoIncrement:false"`
	Shard int          `gorm:"primaryKey;autoIncrement:false"`
	N     int64
}

// TableName is the table the counters live in.
func (MessageCounter) TableName() string { return "message_counts" }

// countSQL reads one counter's shards, by state. The shard leads the primary key, so
// the shards are listed: for each, the key range of one (environment, subscriber,
// channel) holds at most 16 rows, one a state, whatever the number of messages. The
// subscriber's internal id is looked up in the same statement; an unknown subscriber
// matches no row, so it counts 0, never everyone.
const countSQL = `SELECT state, COALESCE(SUM(n), 0) FROM message_counts
WHERE shard IN (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)
  AND environment_id = ? AND channel = ? AND subscriber_id = %s
GROUP BY state`

const (
	anySubscriber = "''"
	oneSubscriber = "(SELECT id FROM subscribers WHERE environment_id = ? AND subscriber_id = ?)"
)

var (
	countAnySubscriber = fmt.Sprintf(countSQL, anySubscriber)
	countOneSubscriber = fmt.Sprintf(countSQL, oneSubscriber)
)

// CountStates returns how many of an environment's messages are in each inbox state,
// for one subscriber (external id) or all when nil, of one channel or all when nil:
// exact, in one statement, from the counters. Every count by read, seen, archived and
// snoozed follows from it (models.StateCounts.Count).
func (s *Store) CountStates(ctx context.Context, environmentID string, subscriberID *string, channel *models.ChannelType) (models.StateCounts, error) {
	var counts models.StateCounts
	err := s.readList(ctx, func(ctx context.Context) error {
		var err error
		counts, err = s.countStates(ctx, environmentID, subscriberID, channel)
		return err
	})
	return counts, err
}

func (s *Store) countStates(ctx context.Context, environmentID string, subscriberID *string, channel *models.ChannelType) (models.StateCounts, error) {
	var counts models.StateCounts
	ch := ""
	if channel != nil {
		ch = string(*channel)
	}
	query, args := countAnySubscriber, []any{environmentID, ch}
	if subscriberID != nil {
		query, args = countOneSubscriber, append(args, environmentID, *subscriberID)
	}
	rows, err := s.conn(ctx).Raw(query, args...).Rows()
	if err != nil {
		return counts, err
	}
	defer rows.Close()
	for rows.Next() {
		var state, n int64
		if err := rows.Scan(&state, &n); err != nil {
			return counts, err
		}
		if state >= 0 && state < models.States {
			counts[state] = int(n)
		}
	}
	return counts, rows.Err()
}

// countMessages returns how many of an environment's messages f matches, exactly, in one
// statement: from the counters when they cover f (models.ListFilter.Counted), else with
// COUNT over the filter's rows (transaction ids: at most MaxTransactionIDs of them).
func (s *Store) countMessages(ctx context.Context, environmentID string, f models.ListFilter) (int, error) {
	if !f.Counted() {
		var n int64
		err := s.filtered(ctx, environmentID, f).Count(&n).Error
		return int(n), err
	}
	counts, err := s.countStates(ctx, environmentID, f.SubscriberID, f.Channel)
	return counts.Count(f.StateFilter), err
}
