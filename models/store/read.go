package store

import (
	"context"
	"messages/models"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// embedded says which records a read attaches to each message.
type embedded struct {
	Subscribers bool
	Templates   bool
}

// rowOrder is the order readMessages returns messages in.
type rowOrder int

const (
	anyOrder    rowOrder = iota
	newestFirst          // createdAt descending, then id descending: the list order
	oldestFirst          // createdAt ascending, then id ascending: the export order
)

// readMessages returns the messages whose ids picks selects (a query on messages that
// selects id, with its own conditions, order and limit), in order, with the records e
// asks for, in one statement: the ids are found through picks' index first and the rows
// joined by primary key after (deep offsets and keyset ranges then walk narrow index
// entries, not whole rows), each with its subscriber's and its template's version. Both
// come from the record caches at that version (recordcache.go), so a page costs one
// statement while its subscribers and templates are unchanged, and one more for each
// kind of which one changed or is not cached yet.
//
// The rows are put in order here, not by the statement: an ORDER BY over the joined rows
// makes MariaDB sort them, LONGTEXT columns and all, in an on-disk temporary table (the
// in-memory engine holds no BLOB), for every page.
func (s *Store) readMessages(ctx context.Context, environmentID string, picks *gorm.DB, order rowOrder, e embedded) ([]*models.Message, error) {
	// The outer condition on the environment repeats picks' own: it keeps the statement
	// routable to one shard (docs/scaling.md) and the joined rows within the tenant.
	// On MySQL the rows are named as read by primary key, which they are: unnamed, the
	// optimizer would first estimate the environment's rows in every index of messages
	// (listindex.go).
	q := s.conn(ctx).Table("messages").Joins("JOIN (?) AS picked ON picked.id = messages.id", picks).
		Where("messages.environment_id = ?", environmentID)
	if s.dialect == DialectMySQL {
		q = q.Clauses(fromMessages("FORCE INDEX (PRIMARY)"))
	}
	if e.Subscribers {
		q = q.Joins("LEFT JOIN subscribers s ON s.id = messages.subscriber_id AND s.environment_id = messages.environment_id")
	}
	if e.Templates {
		q = q.Joins("LEFT JOIN templates t ON t.id = messages.template_id AND t.environment_id = messages.environment_id")
	}
	return s.scanMessages(ctx, environmentID, q.Clauses(joinedSelects[e.index()]), order, e)
}

// readLeadingMessages returns the rows a query on messages finds, in its order and
// within its limit, with the records e asks for, in one statement that reads them
// directly: the first rows of the filter's index, with the versions of their subscriber
// and template from a subquery each, run for the rows returned only. A first page (no
// offset, no position) reads this way, about 0.06 ms less of MariaDB's time than
// readMessages' join of picked ids (BENCHMARKS.md, Against PostGraphile), which pays for
// itself only when the ids skip rows without reading them: past an offset, or from a
// position, where MariaDB 10.11 would read a query of whole rows by the environment's
// prefix of the index and filter the position row by row instead of bounding the range
// with it, named index or not (TestMessagesAfterSeededList's plans).
func (s *Store) readLeadingMessages(ctx context.Context, environmentID string, q *gorm.DB, order rowOrder, e embedded) ([]*models.Message, error) {
	return s.scanMessages(ctx, environmentID, q.Clauses(leadingSelects[e.index()]), order, e)
}

// The select lists of readMessages and readLeadingMessages, one for each combination of
// embedded records (embedded.index), made once: the message's columns, then the
// subscriber's version and the template's when embedded. They are handed to GORM as a
// clause, not through Select, whose statement builder would look each of the list's
// names up among the record's fields for every page.
var (
	joinedSelects = selectLists(
		"s.changed_at AS subscriber_version",
		"t.changed_at AS template_version")
	leadingSelects = selectLists(
		"(SELECT s.changed_at FROM subscribers s WHERE s.id = messages.subscriber_id AND s.environment_id = messages.environment_id) AS subscriber_version",
		"(SELECT t.changed_at FROM templates t WHERE t.id = messages.template_id AND t.environment_id = messages.environment_id) AS template_version")
)

func selectLists(subscriberVersion, templateVersion string) (lists [4]clause.Select) {
	for i := range lists {
		columns := []string{messageSelect}
		if i&1 != 0 { // embedded.index: Subscribers
			columns = append(columns, subscriberVersion)
		}
		if i&2 != 0 { // Templates
			columns = append(columns, templateVersion)
		}
		lists[i] = clause.Select{Expression: clause.Expr{SQL: strings.Join(columns, ", ")}}
	}
	return lists
}

// index numbers the four combinations of e, from 0 to 3.
func (e embedded) index() int {
	n := 0
	if e.Subscribers {
		n |= 1
	}
	if e.Templates {
		n |= 2
	}
	return n
}

// scanMessages runs q, whose select list is the message's columns and then the versions
// e asks for, and returns its messages with their records attached, in order.
func (s *Store) scanMessages(ctx context.Context, environmentID string, q *gorm.DB, order rowOrder, e embedded) ([]*models.Message, error) {
	rows, err := q.Rows()
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	// Never nil: an empty page is an empty list on the wire, not null.
	msgs := []*models.Message{}
	var subscriberVersions, templateVersions []time.Time
	scan := newJoinedScan(e, s.jsonFaults)
	budget := models.BudgetFrom(ctx)
	for rows.Next() {
		m, err := scan.read(rows)
		if err != nil {
			return nil, err
		}
		// Charged row by row: a page past the request's budget stops at the row that
		// crosses it, and the rows after it are never read into memory.
		if err := budget.Charge(messageBytes(m)); err != nil {
			return nil, err
		}
		msgs = append(msgs, m)
		subscriberVersions = append(subscriberVersions, scan.subscriberVersion.Time)
		templateVersions = append(templateVersions, scan.templateVersion.Time)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if err := s.attachEmbedded(ctx, environmentID, msgs, subscriberVersions, templateVersions, e); err != nil {
		return nil, err
	}
	if order != anyOrder {
		slices.SortFunc(msgs, func(a, b *models.Message) int {
			c := a.CreatedAt.Compare(b.CreatedAt.Time)
			if c == 0 {
				c = strings.Compare(a.ID, b.ID)
			}
			if order == newestFirst {
				return -c
			}
			return c
		})
	}
	return msgs, nil
}

// attachEmbedded attaches the records e asks for to msgs, read at the versions given
// (msgs[i]'s subscriber at subscriberVersions[i], its template at templateVersions[i]),
// and charges the request's budget for what the page takes to encode.
func (s *Store) attachEmbedded(ctx context.Context, environmentID string, msgs []*models.Message, subscriberVersions, templateVersions []time.Time, e embedded) error {
	if e.Subscribers {
		if err := attach(ctx, s, s.subscribers, subscriberEmbeds, environmentID, msgs, subscriberVersions); err != nil {
			return err
		}
	}
	if e.Templates {
		if err := attach(ctx, s, s.templates, templateEmbeds, environmentID, msgs, templateVersions); err != nil {
			return err
		}
	}
	// What the page takes to encode: each message once more with its subscriber and
	// template, which are read once and written with every message.
	return chargeEmbedded(models.BudgetFrom(ctx), msgs)
}
