package store

import (
	"context"
	"strings"
	"sync/atomic"
	"time"

	"messages/models"
)

// stateBatch is how many messages one statement of a bulk state change writes: each
// batch is a transaction of its own, so marking a subscriber's 100,000 messages read
// holds no lock and no Galera write set for more than a batch.
const stateBatch = 500

// ChangeState applies c to the subscriber's messages t names, or to every one of theirs
// t's channel and filter match, and returns how many it changed and, for named
// messages, each as stored after it. Only messages not yet in the state c sets are
// written, so repeating a change writes nothing and emits no event. A change of named
// messages is one transaction; a change of all a subscriber's messages is written in
// batches, each its own transaction, so one that fails midway has changed a prefix and
// is completed by running it again.
func (s *Store) ChangeState(ctx context.Context, environmentID string, t models.StateTarget, c models.StateChange) (*models.StateChanged, error) {
	defer s.noteWrite()
	set, args := stateSet(c, models.NewTime(s.Now()))
	if len(t.MessageIDs) > 0 {
		return s.changeNamed(ctx, environmentID, t, set, args, c)
	}
	out := &models.StateChanged{}
	after := ""
	for {
		var changed int
		var last string
		err := s.RetryTransaction(ctx, func(ctx context.Context) error {
			var err error
			changed, last, err = s.changeBatch(ctx, environmentID, t, set, args, c, after)
			return err
		})
		out.Changed += changed
		if err != nil || last == "" {
			return out, err
		}
		after = last
	}
}

// changeNamed changes the named messages (of t's channel, when it names one) in one
// transaction and reads them back.
func (s *Store) changeNamed(ctx context.Context, environmentID string, t models.StateTarget, set string, args []any, c models.StateChange) (*models.StateChanged, error) {
	ids := make([]string, 0, len(t.MessageIDs))
	for _, id := range t.MessageIDs {
		if models.IsID(id) {
			ids = append(ids, id)
		}
	}
	out := &models.StateChanged{Messages: []*models.Message{}}
	if len(ids) == 0 {
		return out, nil
	}
	err := s.RetryTransaction(ctx, func(ctx context.Context) error {
		out.Changed, out.Messages = 0, nil
		tx := s.conn(ctx)
		differs, dargs := stateDiffers(c)
		channel, cargs := "", []any{}
		if t.Channel != nil {
			channel, cargs = " AND channel = ?", []any{string(*t.Channel)}
		}
		res := tx.Exec("UPDATE messages SET "+set+" WHERE environment_id = ? AND id IN ? AND "+scopedToSubscriber+channel+" AND "+differs,
			append(append(append(args, environmentID, ids, environmentID, t.SubscriberID), cargs...), dargs...)...)
		if res.Error != nil {
			return res.Error
		}
		out.Changed = int(res.RowsAffected)
		picks := tx.Model(&models.Message{}).Select("id").
			Where("environment_id = ? AND id IN ?", environmentID, ids).
			Where(scopedToSubscriber, environmentID, t.SubscriberID)
		if t.Channel != nil {
			picks = picks.Where("channel = ?", string(*t.Channel))
		}
		read, err := s.readMessages(ctx, environmentID, picks, newestFirst, embedded{Subscribers: true, Templates: true})
		out.Messages = read
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// changeBatch changes at most stateBatch of the target's messages that need it, in the
// transaction ctx carries, of those whose id is after the id after (all when empty):
// their ids first, in id order, then those rows by primary key (MySQL cannot UPDATE
// through a LIMIT subquery of the same table). last is the batch's greatest id when it
// was full, after which more messages may need the change, and empty when none may.
//
// The batches of one change go on from the last one's id, so each reads only the rows
// after it: read from the start, the n-th batch of a subscriber's 100,000 messages would
// pass over the n*500 it had changed (73 ms a batch at 95 % read, against under 1 ms).
// A message before that id that needs the change again by the time a later batch runs
// was changed back, or written, after the change was asked for, and is left as it is.
func (s *Store) changeBatch(ctx context.Context, environmentID string, t models.StateTarget, set string, args []any, c models.StateChange, after string) (changed int, last string, err error) {
	f := models.ListFilter{Channel: t.Channel, SubscriberID: &t.SubscriberID, StateFilter: t.Filter, TemplateIDs: t.TemplateIDs}
	if t.TransactionID != "" {
		f.TransactionIDs = []string{t.TransactionID}
	}
	differs, dargs := stateDiffers(c)
	q := s.filtered(ctx, environmentID, f).Where(differs, dargs...)
	if after != "" {
		q = q.Where("id > ?", after)
	}
	var ids []string
	if err := q.Order("id").Limit(stateBatch).Pluck("id", &ids).Error; err != nil {
		return 0, "", err
	}
	if len(ids) == 0 {
		return 0, "", nil
	}
	res := s.conn(ctx).Exec("UPDATE messages SET "+set+" WHERE environment_id = ? AND id IN ? AND "+differs,
		append(append(args, environmentID, ids), dargs...)...)
	if len(ids) == stateBatch {
		last = ids[len(ids)-1]
	}
	return int(res.RowsAffected), last, res.Error
}

// stateSet is the SET list of c, with its arguments. A time is stamped only when the
// message enters the state, so it is the time of the first change, and the stamps come
// before the flags they test: MySQL assigns left to right, reading the values already
// assigned, where SQLite reads the row as it was; in this order both read the old flag.
func stateSet(c models.StateChange, now models.Time) (string, []any) {
	var set []string
	var args []any
	add := func(expr string, a ...any) { set = append(set, expr); args = append(args, a...) }
	if c.Read != nil {
		if *c.Read {
			add("last_read_date = CASE WHEN `read` THEN last_read_date ELSE ? END", now)
		}
		add("`read` = ?", *c.Read)
	}
	if c.Seen != nil {
		if *c.Seen {
			add("last_seen_date = CASE WHEN seen THEN last_seen_date ELSE ? END", now)
			// Only when the message becomes seen: one seen before the column existed keeps
			// its unknown first time rather than getting this one.
			add("first_seen_date = CASE WHEN seen THEN first_seen_date ELSE COALESCE(first_seen_date, ?) END", now)
		}
		add("seen = ?", *c.Seen)
	}
	if c.Archived != nil {
		if *c.Archived {
			add("archived_at = CASE WHEN archived THEN archived_at ELSE ? END", now)
		} else {
			add("archived_at = NULL")
		}
		add("archived = ?", *c.Archived)
	}
	switch {
	case c.SnoozedUntil != nil:
		add("snoozed_until = ?", *c.SnoozedUntil)
	case c.Unsnooze:
		add("snoozed_until = NULL")
	}
	return strings.Join(set, ", "), args
}

// stateDiffers is the condition of the messages c changes, with its arguments: those
// with a flag, or the snooze, other than the one c sets.
func stateDiffers(c models.StateChange) (string, []any) {
	var or []string
	var args []any
	flag := func(column string, want *bool) {
		if want != nil {
			if *want {
				or = append(or, "NOT "+column)
			} else {
				or = append(or, column)
			}
		}
	}
	flag("`read`", c.Read)
	flag("seen", c.Seen)
	flag("archived", c.Archived)
	switch {
	case c.SnoozedUntil != nil:
		or = append(or, "snoozed_until IS NULL OR snoozed_until <> ?")
		args = append(args, *c.SnoozedUntil)
	case c.Unsnooze:
		or = append(or, "snoozed_until IS NOT NULL")
	}
	if len(or) == 0 {
		return "1 = 0", nil
	}
	return "(" + strings.Join(or, " OR ") + ")", args
}

// WakeSnoozed ends the snoozes whose time has come, at most stateBatch at a time (per
// shard on Vitess), and returns how many it ended: until then a message counts, and
// lists, as snoozed. Each instance runs it every second (cmd/server); instances running
// it at once end the same snoozes, which is harmless. The expired snoozes are found
// across environments through messages_snoozed_until (on Vitess a statement per shard,
// eachShard, once a second per instance, as the change feed's poll: docs/scaling.md) and
// ended per environment.
func (s *Store) WakeSnoozed(ctx context.Context) (int, error) {
	now := models.NewTime(s.Now())
	var woken atomic.Int64
	err := s.eachShard(ctx, func(ctx context.Context) error {
		n, err := s.wakeSnoozed(ctx, now)
		woken.Add(int64(n))
		return err
	})
	return int(woken.Load()), err
}

// wakeSnoozed is WakeSnoozed on the rows ctx reaches: the whole database, or one shard.
func (s *Store) wakeSnoozed(ctx context.Context, now models.Time) (int, error) {
	var due []struct{ ID, EnvironmentID string }
	if err := s.conn(ctx).Model(&models.Message{}).Select("id, environment_id").
		Where("snoozed_until <= ?", now).Order("snoozed_until").Limit(stateBatch).
		Find(&due).Error; err != nil {
		return 0, err
	}
	byEnv := map[string][]string{}
	for _, d := range due {
		byEnv[d.EnvironmentID] = append(byEnv[d.EnvironmentID], d.ID)
	}
	woken := 0
	for env, ids := range byEnv {
		var n int64
		err := s.RetryTransaction(ctx, func(ctx context.Context) error {
			res := s.conn(ctx).Exec("UPDATE messages SET snoozed_until = NULL WHERE environment_id = ? AND id IN ? AND snoozed_until <= ?", env, ids, now)
			n = res.RowsAffected
			return res.Error
		})
		if err != nil {
			return woken, err
		}
		if n > 0 {
			s.noteWrite()
		}
		woken += int(n)
	}
	return woken, nil
}

// SweepSnoozes runs WakeSnoozed every interval until ctx ends, logging what fails.
func (s *Store) SweepSnoozes(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for {
			n, err := s.WakeSnoozed(ctx)
			if err != nil {
				if ctx.Err() == nil && s.o.logger != nil {
					s.o.logger.Warn("ending snoozes failed", "error", err)
				}
				break
			}
			if n < stateBatch {
				break
			}
		}
	}
}
