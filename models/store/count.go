package store

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

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
// channel) holds at most 64 rows, one a state, whatever the number of messages. The
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
	switch {
	case !f.Counted():
		var n int64
		err := s.filtered(ctx, environmentID, f).Count(&n).Error
		return int(n), err
	case byWorkflow(f):
		out := make([]int, 1)
		err := s.countWorkflows(ctx, environmentID, *f.SubscriberID, f.Channel, []models.ListFilter{f}, []int{0}, out)
		return out[0], err
	}
	counts, err := s.countStates(ctx, environmentID, f.SubscriberID, f.Channel)
	return counts.Count(f.StateFilter), err
}

// byWorkflow reports whether a filter the counters answer needs the counters by workflow
// and month (message_workflow_counts), not only those by state.
func byWorkflow(f models.ListFilter) bool {
	return len(f.TemplateIDs) > 0 || f.CreatedFrom != nil || f.CreatedTo != nil
}

// CountEach answers, for each of filters, how many of an environment's messages of one
// subscriber (external id; nil: all) and one channel (nil: all) it matches, exactly, in
// one statement whatever the number of filters when a subscriber is named: from the
// counters by state when no filter names workflows or a creation range, else from the
// counters by workflow and month (countWorkflows), which answer the filters of states
// alone too. Filters the counters do not answer (transaction ids; workflows or creation
// ranges across subscribers) are counted together from one pass over the rows they may
// match, each filter a conditional COUNT of it (countRows), in one more statement. The
// filters' own subscriber and channel are ignored.
func (s *Store) CountEach(ctx context.Context, environmentID string, subscriberID *string, channel *models.ChannelType, filters []models.ListFilter) ([]int, error) {
	out := make([]int, len(filters))
	err := s.readList(ctx, func(ctx context.Context) error {
		var counted, scanned []int
		workflows := false
		for i, f := range filters {
			f.SubscriberID = subscriberID
			if !f.Counted() {
				scanned = append(scanned, i)
				continue
			}
			counted = append(counted, i)
			workflows = workflows || byWorkflow(f)
		}
		switch {
		case workflows:
			if err := s.countWorkflows(ctx, environmentID, *subscriberID, channel, filters, counted, out); err != nil {
				return err
			}
		case len(counted) > 0:
			counts, err := s.countStates(ctx, environmentID, subscriberID, channel)
			if err != nil {
				return err
			}
			for _, i := range counted {
				out[i] = counts.Count(filters[i].StateFilter)
			}
		}
		for len(scanned) > 0 {
			n := countChunk(filters, scanned)
			if err := s.countRows(ctx, environmentID, subscriberID, channel, filters, scanned[:n], out); err != nil {
				return err
			}
			scanned = scanned[n:]
		}
		return nil
	})
	return out, err
}

// maxCountArgs bounds the values bound to one statement of CountEach (MariaDB takes
// 65,535, SQLite 32,766): filters naming many workflows are split over statements.
const maxCountArgs = 8000

// countChunk is how many of the filters at which (at least one) one statement counts.
func countChunk(filters []models.ListFilter, which []int) int {
	args := 0
	for n, i := range which {
		f := filters[i]
		args += len(f.TemplateIDs) + len(f.TransactionIDs) + 6
		if args > maxCountArgs && n > 0 {
			return n
		}
	}
	return len(which)
}

// countRows counts filters[which] in one statement, into out:
//
//	SELECT COUNT(CASE WHEN <filter 1> THEN 1 END), COUNT(CASE WHEN <filter 2> THEN 1 END), ...
//	FROM messages WHERE environment_id = ? AND subscriber_id = (...) AND channel = ? AND <bounds>
//
// The rows are read once, through the (environment, subscriber, channel, created_at)
// index, narrowed to what any of the filters may match: the widest creation range when
// every filter has a bound on that side, the union of the workflows when every filter
// names some.
func (s *Store) countRows(ctx context.Context, environmentID string, subscriberID *string, channel *models.ChannelType, filters []models.ListFilter, which []int, out []int) error {
	var sel strings.Builder
	var selArgs []any
	var from, to *models.Time
	allFrom, allTo, allTemplates := true, true, true
	templates := map[string]struct{}{}
	for n, i := range which {
		f := filters[i]
		var conds []string
		if len(f.TemplateIDs) > 0 {
			conds = append(conds, "template_id IN ("+placeholders(len(f.TemplateIDs))+")")
			for _, id := range f.TemplateIDs {
				selArgs = append(selArgs, id)
				templates[id] = struct{}{}
			}
		} else {
			allTemplates = false
		}
		if len(f.TransactionIDs) > 0 {
			conds = append(conds, "transaction_id IN ("+placeholders(len(f.TransactionIDs))+")")
			for _, id := range f.TransactionIDs {
				selArgs = append(selArgs, id)
			}
		}
		if f.CreatedFrom != nil {
			conds = append(conds, "created_at >= ?")
			selArgs = append(selArgs, *f.CreatedFrom)
			if from == nil || f.CreatedFrom.Before(from.Time) {
				from = f.CreatedFrom
			}
		} else {
			allFrom = false
		}
		if f.CreatedTo != nil {
			conds = append(conds, "created_at <= ?")
			selArgs = append(selArgs, *f.CreatedTo)
			if to == nil || f.CreatedTo.After(to.Time) {
				to = f.CreatedTo
			}
		} else {
			allTo = false
		}
		for _, c := range stateConditions(f.StateFilter) {
			conds = append(conds, c.sql)
			selArgs = append(selArgs, c.args...)
		}
		if n > 0 {
			sel.WriteString(", ")
		}
		if len(conds) == 0 {
			sel.WriteString("COUNT(*)")
			continue
		}
		sel.WriteString("COUNT(CASE WHEN " + strings.Join(conds, " AND ") + " THEN 1 END)")
	}
	where := []string{"environment_id = ?"}
	whereArgs := []any{environmentID}
	if subscriberID != nil {
		where = append(where, scopedToSubscriber)
		whereArgs = append(whereArgs, environmentID, *subscriberID)
	}
	if channel != nil {
		where = append(where, "channel = ?")
		whereArgs = append(whereArgs, string(*channel))
	}
	if allFrom && from != nil {
		where = append(where, "created_at >= ?")
		whereArgs = append(whereArgs, *from)
	}
	if allTo && to != nil {
		where = append(where, "created_at <= ?")
		whereArgs = append(whereArgs, *to)
	}
	if allTemplates && len(templates) > 0 {
		ids := slices.Sorted(maps.Keys(templates))
		where = append(where, "template_id IN ("+placeholders(len(ids))+")")
		for _, id := range ids {
			whereArgs = append(whereArgs, id)
		}
	}
	query := "SELECT " + sel.String() + " FROM messages WHERE " + strings.Join(where, " AND ")
	counts := make([]int64, len(which))
	dest := make([]any, len(which))
	for i := range counts {
		dest[i] = &counts[i]
	}
	if err := s.conn(ctx).Raw(query, append(selArgs, whereArgs...)...).Row().Scan(dest...); err != nil {
		return err
	}
	for n, i := range which {
		out[i] = int(counts[n])
	}
	return nil
}

// placeholders is n comma-separated "?".
func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}
