package models

import (
	"context"
	"strings"
	"sync"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/schema"
)

// embedded says which records a read attaches to each message.
type embedded struct {
	Subscribers bool
	Templates   bool
}

// joinedRow is one row of readMessages' statement: the message, its subscriber's columns
// (prefixed, all NULL when it has none) and its template's version (NULL when none).
type joinedRow struct {
	Message         `gorm:"embedded"`
	Sub             Subscriber `gorm:"embedded;embeddedPrefix:s__"`
	TemplateVersion Stamp
}

// readMessages returns the messages whose ids picks selects (a query on messages that
// selects id, with its own conditions, order and limit), in the order given by order
// (SQL over the messages table, "" for any), with the records e asks for, in one
// statement: the ids are found through picks' index first and the rows joined by primary
// key after (deep offsets and keyset ranges then walk narrow index entries, not whole
// rows), each with its subscriber's row and its template's version. Templates come from
// the template cache at that version, so a page costs one statement while its templates
// are unchanged and one more when one changed.
func (s *Store) readMessages(ctx context.Context, environmentID string, picks *gorm.DB, order string, e embedded) ([]*Message, error) {
	// The outer condition on the environment repeats picks' own: it keeps the statement
	// routable to one shard (docs/scaling.md) and the joined rows within the tenant.
	q := s.conn(ctx).Table("messages").Joins("JOIN (?) AS picked ON picked.id = messages.id", picks).
		Where("messages.environment_id = ?", environmentID)
	columns := []string{"messages.*"}
	if e.Subscribers {
		q = q.Joins("LEFT JOIN subscribers s ON s.id = messages.subscriber_id AND s.environment_id = messages.environment_id")
		columns = append(columns, s.subscriberColumns()...)
	}
	if e.Templates {
		q = q.Joins("LEFT JOIN templates t ON t.id = messages.template_id AND t.environment_id = messages.environment_id")
		columns = append(columns, "t.changed_at AS template_version")
	}
	if order != "" {
		q = q.Order(order)
	}
	var rows []*joinedRow
	if err := q.Select(strings.Join(columns, ", ")).Find(&rows).Error; err != nil {
		return nil, err
	}
	msgs := make([]*Message, len(rows))
	versions := make([]time.Time, len(rows))
	for i, r := range rows {
		m := &r.Message
		m.applyMark()
		m.normalize()
		if e.Subscribers && r.Sub.ID != "" {
			sub := r.Sub
			m.Subscriber = &sub
		}
		msgs[i], versions[i] = m, r.TemplateVersion.Time
	}
	if e.Templates {
		if err := s.attachTemplates(ctx, environmentID, msgs, versions); err != nil {
			return nil, err
		}
	}
	return msgs, nil
}

var (
	subscriberColumnsOnce sync.Once
	subscriberColumnList  []string
)

// subscriberColumns selects every column of subscribers s under the prefix joinedRow
// scans it by.
func (s *Store) subscriberColumns() []string {
	subscriberColumnsOnce.Do(func() {
		sch, err := schema.Parse(&Subscriber{}, &sync.Map{}, s.db.NamingStrategy)
		if err != nil {
			panic(err) // a struct GORM cannot parse is a programming error
		}
		for _, name := range sch.DBNames {
			subscriberColumnList = append(subscriberColumnList, "s."+name+" AS s__"+name)
		}
	})
	return subscriberColumnList
}
