package models

import (
	"database/sql/driver"
	"fmt"
	"time"
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
	// Deleted is true when the message was deleted: Message then holds only what its
	// tombstone keeps (id, environment, subscriber, channel), and Position is when it
	// went.
	Deleted bool
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
// MySQL's TIMESTAMP(6), text in SQLiteStampLayout from SQLite.
type Stamp struct{ time.Time }

// SQLiteStampLayout is the text SQLite's triggers write: strftime('%Y-%m-%d %H:%M:%f').
const SQLiteStampLayout = "2006-01-02 15:04:05.000"

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
	t, err := time.ParseInLocation(SQLiteStampLayout, text, time.UTC)
	if err != nil {
		return fmt.Errorf("change stamp %q: %w", text, err)
	}
	s.Time = t
	return nil
}

// Value is never used to write (the columns are the database's own); it exists so a
// Stamp can appear in a struct GORM knows.
func (s Stamp) Value() (driver.Value, error) { return s.Time, nil }
