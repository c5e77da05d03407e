package models

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// The columns the database stamps on every message row (migration 00005): inserted_at
// when the row was inserted, changed_at whenever a value in it changes, by any writer.
// The live event feed (models/changefeed) reads messages in changed_at order.

// Position is where a message's last change sits in the order the feed reads: the
// instant the database stamped the row, then the id.
type Position struct {
	At time.Time
	ID string
}

// After reports whether p comes strictly after q.
func (p Position) After(q Position) bool {
	return p.At.After(q.At) || (p.At.Equal(q.At) && p.ID > q.ID)
}

// IsZero reports whether p is no position at all.
func (p Position) IsZero() bool { return p.At.IsZero() && p.ID == "" }

// ChangeKey identifies one change of one message: the row's id and its stamp. A row seen
// twice with the same key is the same change.
type ChangeKey struct {
	ID string
	At time.Time
}

// Key is the change at p.
func (p Position) Key() ChangeKey { return ChangeKey{ID: p.ID, At: p.At} }

// Change is a message whose row changed, as lists return it (subscriber and template
// embedded), with where the change sits and whether the row is unchanged since its
// insert.
type Change struct {
	Message  *Message
	Position Position
	// Created is true while the row has not been changed since it was inserted.
	Created bool
}

// ChangeFilter narrows the changes a subscription resumes through to one environment,
// optionally one subscriber (external id) and one channel.
type ChangeFilter struct {
	EnvironmentID string
	SubscriberID  *string
	Channel       *ChannelType
}

// Matches reports whether c's message passes f.
func (f ChangeFilter) Matches(c *Change) bool {
	m := c.Message
	if m.EnvironmentID != f.EnvironmentID {
		return false
	}
	if f.Channel != nil && m.Channel != *f.Channel {
		return false
	}
	if f.SubscriberID != nil && (m.Subscriber == nil || m.Subscriber.SubscriberID != *f.SubscriberID) {
		return false
	}
	return true
}

// Stamp is a changed_at or inserted_at value as either driver returns it: a time from
// MySQL's TIMESTAMP(6), text in sqliteStampLayout from SQLite.
type Stamp struct{ time.Time }

// sqliteStampLayout is the text SQLite's triggers write: strftime('%Y-%m-%d %H:%M:%f').
const sqliteStampLayout = "2006-01-02 15:04:05.000"

// Scan reads either form.
func (s *Stamp) Scan(v any) error {
	switch x := v.(type) {
	case time.Time:
		s.Time = x.UTC()
	case string:
		return s.parse(x)
	case []byte:
		return s.parse(string(x))
	case nil:
		s.Time = time.Time{}
	default:
		return fmt.Errorf("change stamp: unsupported %T", v)
	}
	return nil
}

func (s *Stamp) parse(text string) error {
	if text == "" {
		s.Time = time.Time{}
		return nil
	}
	t, err := time.ParseInLocation(sqliteStampLayout, text, time.UTC)
	if err != nil {
		return fmt.Errorf("change stamp %q: %w", text, err)
	}
	s.Time = t
	return nil
}

// Value is never used to write (the columns are the database's own); it exists so a
// Stamp can appear in a struct GORM knows.
func (s Stamp) Value() (driver.Value, error) { return s.Time, nil }

// stampArg is t as a query argument the dialect compares with its stamps.
func (s *Store) stampArg(t time.Time) any {
	if s.dialect == DialectSQLite {
		return t.UTC().Format(sqliteStampLayout)
	}
	return t.UTC()
}

// changeRow is one position as the poll reads it from the messages_changed index.
type changeRow struct {
	ID        string
	ChangedAt Stamp
}

// LatestChange is the newest position in the whole table: where a feed starts when it
// has nothing to resume. Zero when there are no messages.
func (s *Store) LatestChange(ctx context.Context) (Position, error) {
	var rows []changeRow
	err := s.conn(ctx).Table("messages").Select("id, changed_at").
		Order("changed_at DESC, id DESC").Limit(1).Scan(&rows).Error
	if err != nil || len(rows) == 0 {
		return Position{}, err
	}
	return Position{At: rows[0].ChangedAt.Time, ID: rows[0].ID}, nil
}

// ChangedSince returns up to limit positions of every environment at or after from, and
// strictly after after when it is set, in changed_at order: the feed's one poll query.
// It reads only the messages_changed index (changed_at, id).
func (s *Store) ChangedSince(ctx context.Context, from time.Time, after *Position, limit int) ([]Position, error) {
	q := s.conn(ctx).Table("messages").Select("id, changed_at").Where("changed_at >= ?", s.stampArg(from))
	if after != nil {
		at := s.stampArg(after.At)
		q = q.Where("(changed_at > ? OR (changed_at = ? AND id > ?))", at, at, after.ID)
	}
	var rows []changeRow
	if err := q.Order("changed_at, id").Limit(limit).Scan(&rows).Error; err != nil {
		return nil, err
	}
	out := make([]Position, len(rows))
	for i, r := range rows {
		out[i] = Position{At: r.ChangedAt.Time, ID: r.ID}
	}
	return out, nil
}

// ChangedMessages loads the messages with the given ids, of any environment, as they
// are now, with their subscribers and templates, in changed_at order.
func (s *Store) ChangedMessages(ctx context.Context, ids []string) ([]*Change, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	var rows []*Message
	if err := s.conn(ctx).Where("id IN ?", ids).Order("changed_at, id").Find(&rows).Error; err != nil {
		return nil, err
	}
	return s.changes(ctx, rows)
}

// MessageChanges returns up to limit changes matching f at or after from and strictly
// after after, in changed_at order: what a subscription resuming from a cursor missed.
// It reads the (environment_id, subscriber_id, changed_at, id) or (environment_id,
// changed_at, id) index.
func (s *Store) MessageChanges(ctx context.Context, f ChangeFilter, from time.Time, after Position, limit int) ([]*Change, error) {
	q := s.conn(ctx).Model(&Message{}).Where("environment_id = ?", f.EnvironmentID)
	if f.SubscriberID != nil {
		id, err := s.subscriberInternalID(ctx, f.EnvironmentID, *f.SubscriberID)
		if errorsIsNotFound(err) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		q = q.Where("subscriber_id = ?", id)
	}
	if f.Channel != nil {
		q = q.Where("channel = ?", string(*f.Channel))
	}
	at := s.stampArg(after.At)
	q = q.Where("changed_at >= ?", s.stampArg(from)).
		Where("(changed_at > ? OR (changed_at = ? AND id > ?))", at, at, after.ID)
	var rows []*Message
	if err := q.Order("changed_at, id").Limit(limit).Find(&rows).Error; err != nil {
		return nil, err
	}
	return s.changes(ctx, rows)
}

// changes turns rows into Changes, embedding subscribers and templates per environment.
func (s *Store) changes(ctx context.Context, rows []*Message) ([]*Change, error) {
	out := make([]*Change, len(rows))
	byEnv := map[string][]*Message{}
	for i, m := range rows {
		m.normalize()
		byEnv[m.EnvironmentID] = append(byEnv[m.EnvironmentID], m)
		out[i] = &Change{
			Message:  m,
			Position: Position{At: m.ChangedAt.Time, ID: m.ID},
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
	StartedAt Stamp `gorm:"->"`
	ExpiresAt Stamp
}

// TableName is change_holds.
func (ChangeHold) TableName() string { return "change_holds" }

// HoldChanges registers a hold that lasts at most ttl by the database's clock (a writer
// that dies leaves it behind only that long), committed on its own, outside any
// transaction ctx carries. release deletes it; call it once the writer's transaction
// has ended either way.
func (s *Store) HoldChanges(ctx context.Context, ttl time.Duration) (release func(context.Context) error, err error) {
	id := NewID(s.Now())
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
	var row struct{ Hold, Now Stamp }
	err = s.conn(ctx).Raw("SELECT (SELECT MIN(started_at) FROM change_holds WHERE expires_at > " + s.nowSQL(0) + ") AS hold, " +
		s.nowSQL(0) + " AS now").Scan(&row).Error
	return row.Hold.Time, row.Now.Time, err
}

func errorsIsNotFound(err error) bool { return errors.Is(err, gorm.ErrRecordNotFound) }
