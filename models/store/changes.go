package store

import (
	"context"
	"errors"
	"fmt"
	"messages/models"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"
)

// stampArg is t as a query argument the dialect compares with its stamps.
func (s *Store) stampArg(t time.Time) any {
	if s.dialect == DialectSQLite {
		return t.UTC().Format(models.SQLiteStampLayout)
	}
	return t.UTC()
}

// changeRow is one position as the poll reads it from the messages_changed index.
type changeRow struct {
	ID        string
	ChangedAt models.Stamp
}

// LatestChange is the newest position in the whole table, a deletion's included: where a
// feed starts when it has nothing to resume. Zero when nothing was ever written.
func (s *Store) LatestChange(ctx context.Context) (models.Position, error) {
	const live = "SELECT id, changed_at FROM messages ORDER BY changed_at DESC, id DESC LIMIT 1"
	const gone = "SELECT id, deleted_at AS changed_at FROM message_deletions ORDER BY deleted_at DESC, id DESC LIMIT 1"
	var rows []changeRow
	var err error
	if s.vitess {
		// vtgate plans the union of two scatters with their own order and limit wrongly
		// (its shards answered "different number of columns"): two statements instead.
		var more []changeRow
		if err = s.conn(ctx).Raw(live).Scan(&rows).Error; err == nil {
			err = s.conn(ctx).Raw(gone).Scan(&more).Error
			rows = append(rows, more...)
		}
	} else {
		err = s.conn(ctx).Raw(`SELECT id, changed_at FROM (` + live + `) AS live
UNION ALL SELECT id, changed_at FROM (` + gone + `) AS gone`).Scan(&rows).Error
	}
	if err != nil || len(rows) == 0 {
		return models.Position{}, err
	}
	latest := models.Position{At: rows[0].ChangedAt.Time, ID: rows[0].ID}
	for _, r := range rows[1:] {
		if p := (models.Position{At: r.ChangedAt.Time, ID: r.ID}); p.After(latest) {
			latest = p
		}
	}
	return latest, nil
}

// Wrote is signalled when this process has written messages (a mark, a change of state,
// snoozes ended, a batch of rows), as the write returns: the change feed of this
// process, resting between slower polls while nothing changes, reads at once. It is a
// hint, not a delivery: a write inside a caller's transaction signals before its commit,
// and writes of other processes are not signalled at all; the feed's polls see them all.
func (s *Store) Wrote() <-chan struct{} { return s.wrote }

// noteWrite signals Wrote.
func (s *Store) noteWrite() {
	select {
	case s.wrote <- struct{}{}:
	default:
	}
}

// ChangedPosition is a position the poll read: a row's change, or a message's deletion
// (its tombstone's).
type ChangedPosition struct {
	models.Position
	Deleted bool
}

// ChangedSince returns up to limit positions of every environment at or after from, and
// strictly after after when it is set, in changed_at order: the feed's one poll query.
// It reads the messages_changed index (changed_at, id) and the tombstones' by the same
// order (message_deletions_deleted), each part bounded by limit before they are merged.
func (s *Store) ChangedSince(ctx context.Context, from time.Time, after *models.Position, limit int) ([]ChangedPosition, error) {
	live, gone := "changed_at >= ?", "deleted_at >= ?"
	args := []any{s.stampArg(from)}
	if after != nil {
		at := s.stampArg(after.At)
		live += " AND (changed_at > ? OR (changed_at = ? AND id > ?))"
		gone += " AND (deleted_at > ? OR (deleted_at = ? AND id > ?))"
		args = append(args, at, at, after.ID)
	}
	type changed struct {
		ID        string
		ChangedAt models.Stamp
		Deleted   bool
	}
	var rows []changed
	liveSQL := `SELECT id, changed_at, 0 AS deleted FROM messages WHERE ` + live + ` ORDER BY changed_at, id LIMIT ?`
	goneSQL := `SELECT id, deleted_at AS changed_at, 1 AS deleted FROM message_deletions WHERE ` + gone + ` ORDER BY deleted_at, id LIMIT ?`
	var err error
	if s.vitess {
		// Two statements merged here: vtgate plans their union wrongly (LatestChange).
		var more []changed
		if err = s.conn(ctx).Raw(liveSQL, append(slices.Clone(args), limit)...).Scan(&rows).Error; err == nil {
			err = s.conn(ctx).Raw(goneSQL, append(slices.Clone(args), limit)...).Scan(&more).Error
		}
		rows = append(rows, more...)
		slices.SortFunc(rows, func(a, b changed) int {
			if c := a.ChangedAt.Time.Compare(b.ChangedAt.Time); c != 0 {
				return c
			}
			return strings.Compare(a.ID, b.ID)
		})
		rows = rows[:min(len(rows), limit)]
	} else {
		err = s.conn(ctx).Raw(`SELECT id, changed_at, deleted FROM (`+liveSQL+`) AS live
UNION ALL SELECT id, changed_at, deleted FROM (`+goneSQL+`) AS gone
ORDER BY changed_at, id LIMIT ?`, slices.Concat(args, []any{limit}, args, []any{limit, limit})...).Scan(&rows).Error
	}
	if err != nil {
		return nil, err
	}
	out := make([]ChangedPosition, len(rows))
	for i, r := range rows {
		out[i] = ChangedPosition{Position: models.Position{At: r.ChangedAt.Time, ID: r.ID}, Deleted: r.Deleted}
	}
	return out, nil
}

// changedReadSQL reads the messages of a poll as readMessages reads a page: the columns
// joinedScan reads, with the versions of their subscribers and templates, which then
// come from the record caches (recordcache.go) instead of being read and decoded again
// on every poll while marks change messages all the time.
var changedReadSQL = `SELECT ` + messageSelect + `, s.changed_at AS subscriber_version, t.changed_at AS template_version
FROM messages
LEFT JOIN subscribers s ON s.id = messages.subscriber_id AND s.environment_id = messages.environment_id
LEFT JOIN templates t ON t.id = messages.template_id AND t.environment_id = messages.environment_id
WHERE messages.id IN ?`

// ChangedMessages loads the messages with the given ids, of any environment, as they
// are now, with their subscribers and templates, in changed_at order.
func (s *Store) ChangedMessages(ctx context.Context, ids []string) ([]*models.Change, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err := s.conn(ctx).Raw(changedReadSQL, ids).Rows()
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	type read struct {
		msg                                *models.Message
		subscriberVersion, templateVersion time.Time
	}
	var got []read
	scan := newJoinedScan(embedded{Subscribers: true, Templates: true}, s.jsonFaults)
	for rows.Next() {
		m, err := scan.read(rows)
		if err != nil {
			return nil, err
		}
		got = append(got, read{m, scan.subscriberVersion.Time, scan.templateVersion.Time})
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	// In order here, not by the statement: see readMessages.
	slices.SortFunc(got, func(a, b read) int {
		if c := a.msg.ChangedAt.Compare(b.msg.ChangedAt.Time); c != 0 {
			return c
		}
		return strings.Compare(a.msg.ID, b.msg.ID)
	})
	type environment struct {
		msgs                                 []*models.Message
		subscriberVersions, templateVersions []time.Time
	}
	byEnv := map[string]*environment{}
	out := make([]*models.Change, len(got))
	for i, r := range got {
		e := byEnv[r.msg.EnvironmentID]
		if e == nil {
			e = &environment{}
			byEnv[r.msg.EnvironmentID] = e
		}
		e.msgs = append(e.msgs, r.msg)
		e.subscriberVersions = append(e.subscriberVersions, r.subscriberVersion)
		e.templateVersions = append(e.templateVersions, r.templateVersion)
		out[i] = &models.Change{
			Message:  r.msg,
			Position: models.Position{At: r.msg.ChangedAt.Time, ID: r.msg.ID},
			Created:  r.msg.InsertedAt.Time.Equal(r.msg.ChangedAt.Time),
		}
	}
	for env, e := range byEnv {
		err := s.attachEmbedded(ctx, env, e.msgs, e.subscriberVersions, e.templateVersions, embedded{Subscribers: true, Templates: true})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// MessageChanges returns up to limit changes matching f at or after from and strictly
// after after, in changed_at order, deletions included: what a subscription resuming
// from a cursor missed. It reads the (environment_id, subscriber_id, changed_at, id) or
// (environment_id, changed_at, id) index, and the tombstones' of the same shape.
func (s *Store) MessageChanges(ctx context.Context, f models.ChangeFilter, from time.Time, after models.Position, limit int) ([]*models.Change, error) {
	q := s.conn(ctx).Model(&models.Message{}).Where("environment_id = ?", f.EnvironmentID)
	gone := s.conn(ctx).Model(&MessageDeletion{}).Where("environment_id = ?", f.EnvironmentID)
	if f.SubscriberID != nil {
		id, err := s.subscriberInternalID(ctx, f.EnvironmentID, *f.SubscriberID)
		if errorsIsNotFound(err) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		q = q.Where("subscriber_id = ?", id)
		gone = gone.Where("subscriber_id = ?", id)
	}
	if f.Channel != nil {
		q = q.Where("channel = ?", string(*f.Channel))
		gone = gone.Where("channel = ?", string(*f.Channel))
	}
	at := s.stampArg(after.At)
	q = q.Where("changed_at >= ?", s.stampArg(from)).
		Where("(changed_at > ? OR (changed_at = ? AND id > ?))", at, at, after.ID)
	gone = gone.Where("deleted_at >= ?", s.stampArg(from)).
		Where("(deleted_at > ? OR (deleted_at = ? AND id > ?))", at, at, after.ID)
	var rows []*models.Message
	if err := q.Order("changed_at, id").Limit(limit).Find(&rows).Error; err != nil {
		return nil, err
	}
	var tombs []*MessageDeletion
	if err := gone.Order("deleted_at, id").Limit(limit).Find(&tombs).Error; err != nil {
		return nil, err
	}
	changed, err := s.changes(ctx, rows)
	if err != nil {
		return nil, err
	}
	deleted, err := s.deletions(ctx, tombs)
	if err != nil {
		return nil, err
	}
	out := append(changed, deleted...)
	slices.SortFunc(out, func(a, b *models.Change) int {
		if c := a.Position.At.Compare(b.Position.At); c != 0 {
			return c
		}
		return strings.Compare(a.Position.ID, b.Position.ID)
	})
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// DeletedMessages loads the deletions of the messages with the given ids, of any
// environment, from their tombstones, in deleted_at order.
func (s *Store) DeletedMessages(ctx context.Context, ids []string) ([]*models.Change, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	var tombs []*MessageDeletion
	// The columns by name: a scatter ordered by vtgate needs them known, and vtgate knows a
	// table's columns only once its schema tracking has seen the table.
	if err := s.conn(ctx).Select("id, environment_id, subscriber_id, channel, created_at, deleted_at").
		Where("id IN ?", ids).Order("deleted_at, id").Find(&tombs).Error; err != nil {
		return nil, err
	}
	return s.deletions(ctx, tombs)
}

// deletions turns tombstones into Changes: each message as far as its tombstone knows it
// (id, environment, channel, createdAt, subscriber, embedded when it still exists),
// Deleted.
func (s *Store) deletions(ctx context.Context, tombs []*MessageDeletion) ([]*models.Change, error) {
	out := make([]*models.Change, len(tombs))
	byEnv := map[string][]*models.Message{}
	for i, t := range tombs {
		m := &models.Message{ID: t.ID, EnvironmentID: t.EnvironmentID, SubscriberID: t.SubscriberID, Channel: t.Channel,
			CreatedAt: t.CreatedAt, ChangedAt: t.DeletedAt}
		m.Normalize()
		byEnv[m.EnvironmentID] = append(byEnv[m.EnvironmentID], m)
		out[i] = &models.Change{Message: m, Position: models.Position{At: t.DeletedAt.Time, ID: t.ID}, Deleted: true}
	}
	for env, msgs := range byEnv {
		if err := s.embed(ctx, env, msgs, true, false); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// changes turns rows into Changes, embedding subscribers and templates per environment.
func (s *Store) changes(ctx context.Context, rows []*models.Message) ([]*models.Change, error) {
	out := make([]*models.Change, len(rows))
	byEnv := map[string][]*models.Message{}
	for i, m := range rows {
		m.Normalize()
		byEnv[m.EnvironmentID] = append(byEnv[m.EnvironmentID], m)
		out[i] = &models.Change{
			Message:  m,
			Position: models.Position{At: m.ChangedAt.Time, ID: m.ID},
			Created:  m.InsertedAt.Time.Equal(m.ChangedAt.Time),
		}
	}
	for env, msgs := range byEnv {
		if err := s.embed(ctx, env, msgs, true, true); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ChangeHold is a writer's promise, kept in change_holds, that it is about to write
// messages in a transaction longer than the feed's lookback window: while it is held,
// feeds do not move past its start, so rows it commits late are still seen.
type ChangeHold struct {
	ID        string
	StartedAt models.Stamp `gorm:"->"`
	ExpiresAt models.Stamp
}

// TableName is change_holds.
func (ChangeHold) TableName() string { return "change_holds" }

// HoldChanges registers a hold that lasts at most ttl by the database's clock (a writer
// that dies leaves it behind only that long), committed on its own, outside any
// transaction ctx carries. release deletes it; call it once the writer's transaction
// has ended either way.
func (s *Store) HoldChanges(ctx context.Context, ttl time.Duration) (release func(context.Context) error, err error) {
	id := models.NewID(s.Now())
	db := s.db.WithContext(ctx)
	// Holds of writers that died before releasing them: each new writer clears them.
	if err := db.Exec("DELETE FROM change_holds WHERE expires_at <= " + s.nowSQL(0)).Error; err != nil {
		return nil, err
	}
	if err := db.Exec("INSERT INTO change_holds (id, expires_at) VALUES (?, "+s.nowSQL(ttl)+")", id).Error; err != nil {
		return nil, err
	}
	return func(ctx context.Context) error {
		return s.db.WithContext(ctx).Exec("DELETE FROM change_holds WHERE id = ?", id).Error
	}, nil
}

// nowSQL is the database's clock plus ahead, as SQL: the clock that stamps the rows.
func (s *Store) nowSQL(ahead time.Duration) string {
	us := ahead.Microseconds()
	if s.dialect == DialectSQLite {
		return fmt.Sprintf("strftime('%%Y-%%m-%%d %%H:%%M:%%f', 'now', '%+.6f seconds')", float64(us)/1e6)
	}
	return fmt.Sprintf("CURRENT_TIMESTAMP(6) + INTERVAL %d MICROSECOND", us)
}

// OldestHold is the start of the oldest hold not yet expired, or zero, and the
// database's clock when it was read: one small query that the feed runs every few polls.
func (s *Store) OldestHold(ctx context.Context) (hold, now time.Time, err error) {
	// The clock is named clock, not now: vtgate's parser takes now as a keyword.
	var row struct{ Hold, Clock models.Stamp }
	err = s.conn(ctx).Raw("SELECT (SELECT MIN(started_at) FROM change_holds WHERE expires_at > " + s.nowSQL(0) + ") AS hold, " +
		s.nowSQL(0) + " AS clock").Scan(&row).Error
	return row.Hold.Time, row.Clock.Time, err
}

func errorsIsNotFound(err error) bool { return errors.Is(err, gorm.ErrRecordNotFound) }
