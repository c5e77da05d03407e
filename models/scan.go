package models

import (
	"bytes"
	"database/sql"
	"fmt"
	"strings"
	"time"

	jsonv1 "github.com/go-json-experiment/json/v1"
)

// The hot reads (every list page, cursor page and mark read-back, through readMessages)
// scan their rows here, into the records' fields directly, instead of through GORM's
// Find: Find sets each of a row's ~60 columns through reflection and decodes every JSON
// column through a reflective serializer, which was a fifth of the server's CPU per inbox
// page. The column lists below are the records' GORM columns, in one place with where
// each is read into; scan_test.go fails if a column is added to a record and not here,
// and compares what both ways read, field by field.

// column is one selected column and where a row's value of it goes.
type column[R any] struct {
	name string
	dest func(r *R) any
}

// messageColumns are the columns of messages readMessages selects, each read into its
// Message field.
var messageColumns = []column[Message]{
	{"id", func(m *Message) any { return &m.ID }},
	{"template_id", func(m *Message) any { return &m.TemplateID }},
	{"environment_id", func(m *Message) any { return &m.EnvironmentID }},
	{"message_template_id", func(m *Message) any { return &m.MessageTemplateID }},
	{"organization_id", func(m *Message) any { return &m.OrganizationID }},
	{"notification_id", func(m *Message) any { return &m.NotificationID }},
	{"subscriber_id", func(m *Message) any { return &m.SubscriberID }},
	{"template_identifier", func(m *Message) any { return &m.TemplateIdentifier }},
	{"created_at", func(m *Message) any { return &m.CreatedAt }},
	{"delivered_at", func(m *Message) any { return jsonColumn{&m.DeliveredAt} }},
	{"last_seen_date", func(m *Message) any { return optionalTime{&m.LastSeenDate} }},
	{"last_read_date", func(m *Message) any { return optionalTime{&m.LastReadDate} }},
	{"content", func(m *Message) any { return jsonColumn{&m.Content} }},
	{"transaction_id", func(m *Message) any { return &m.TransactionID }},
	{"subject", func(m *Message) any { return &m.Subject }},
	{"channel", func(m *Message) any { return &m.Channel }},
	{"read", func(m *Message) any { return &m.Read }},
	{"seen", func(m *Message) any { return &m.Seen }},
	{"snoozed_until", func(m *Message) any { return optionalTime{&m.SnoozedUntil} }},
	{"email", func(m *Message) any { return &m.Email }},
	{"phone", func(m *Message) any { return &m.Phone }},
	{"direct_webhook_url", func(m *Message) any { return &m.DirectWebhookURL }},
	{"provider_id", func(m *Message) any { return &m.ProviderID }},
	{"device_tokens", func(m *Message) any { return jsonColumn{&m.DeviceTokens} }},
	{"title", func(m *Message) any { return &m.Title }},
	{"cta", func(m *Message) any { return jsonColumn{&m.CTA} }},
	{"feed_id", func(m *Message) any { return &m.FeedID }},
	{"status", func(m *Message) any { return &m.Status }},
	{"error_id", func(m *Message) any { return &m.ErrorID }},
	{"error_text", func(m *Message) any { return &m.ErrorText }},
	{"payload", func(m *Message) any { return &m.Payload }},
	{"overrides", func(m *Message) any { return &m.Overrides }},
	{"action_status", func(m *Message) any { return &m.ActionStatus }},
	{"action_result_type", func(m *Message) any { return &m.ActionResultType }},
	{"action_result_payload", func(m *Message) any { return &m.ActionResultPayload }},
	{"inserted_at", func(m *Message) any { return &m.InsertedAt }},
	{"changed_at", func(m *Message) any { return &m.ChangedAt }},
}

// subscriberColumns are the columns of subscribers readMessages selects beside a
// message, each read into its place in a subscriberRow. The subscriber's columns are all
// NULL when a message has none (the LEFT JOIN found no row), so every column is read
// through nullable.
var subscriberColumns = []column[subscriberRow]{
	{"id", func(s *subscriberRow) any { return &s.ID }},
	{"first_name", func(s *subscriberRow) any { return &s.FirstName }},
	{"last_name", func(s *subscriberRow) any { return &s.LastName }},
	{"email", func(s *subscriberRow) any { return &s.Email }},
	{"phone", func(s *subscriberRow) any { return &s.Phone }},
	{"avatar", func(s *subscriberRow) any { return &s.Avatar }},
	{"locale", func(s *subscriberRow) any { return &s.Locale }},
	{"channels", func(s *subscriberRow) any { return &s.channels }},
	{"topics", func(s *subscriberRow) any { return &s.topics }},
	{"is_online", func(s *subscriberRow) any { return &s.IsOnline }},
	{"last_online_at", func(s *subscriberRow) any { return optionalTime{&s.LastOnlineAt} }},
	{"v", func(s *subscriberRow) any { return &s.Version }},
	{"data", func(s *subscriberRow) any { return &s.Data }},
	{"timezone", func(s *subscriberRow) any { return &s.Timezone }},
	{"subscriber_id", func(s *subscriberRow) any { return &s.SubscriberID }},
	{"organization_id", func(s *subscriberRow) any { return &s.OrganizationID }},
	{"environment_id", func(s *subscriberRow) any { return &s.EnvironmentID }},
	{"deleted", func(s *subscriberRow) any { return &s.Deleted }},
	{"created_at", func(s *subscriberRow) any { return &s.CreatedAt }},
	{"updated_at", func(s *subscriberRow) any { return &s.UpdatedAt }},
}

// subscriberRow is a subscriber's columns as read, its JSON columns still undecoded: a
// page's messages mostly share one subscriber (an inbox is one subscriber's), so each
// subscriber is decoded once per page and shared by its messages.
type subscriberRow struct {
	Subscriber
	channels, topics JSON // their text, as read
}

// decode returns the subscriber with its JSON columns decoded.
func (s *subscriberRow) decode() (*Subscriber, error) {
	sub := s.Subscriber
	if err := (jsonColumn{&sub.Channels}).Scan([]byte(s.channels)); err != nil {
		return nil, fmt.Errorf("column channels: %w", err)
	}
	if err := (jsonColumn{&sub.Topics}).Scan([]byte(s.topics)); err != nil {
		return nil, fmt.Errorf("column topics: %w", err)
	}
	return &sub, nil
}

// The select lists of readMessages' statement, in the order joinedScan reads them.
var (
	messageSelect    = selectList("messages", "", messageColumns)
	subscriberSelect = selectList("s", "s__", subscriberColumns)
)

// selectList renders columns qualified by table, aliased prefix+name when there is a
// prefix (the subscriber's columns would otherwise share names with the message's).
func selectList[R any](table, prefix string, columns []column[R]) string {
	var b strings.Builder
	for i, c := range columns {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s.%s", table, quoteColumn(c.name))
		if prefix != "" {
			fmt.Fprintf(&b, " AS %s%s", prefix, c.name)
		}
	}
	return b.String()
}

// quoteColumn quotes the one column name that is a reserved word in MySQL ("read");
// both dialects accept backquotes.
func quoteColumn(name string) string {
	if name == "read" {
		return "`read`"
	}
	return name
}

// joinedScan is one row of readMessages' statement being read: the message, its
// subscriber's columns when joined (a subscriber whose id stays empty was not found) and
// its template's version when joined (zero when the template does not exist). The row is
// scanned into fields of its own, whose destinations are made once per statement, and
// copied out into a new record.
type joinedScan struct {
	msg     Message
	sub     subscriberRow
	version Stamp
	dest    []any
	// subscribers are the subscribers read so far, by id: the same row each time within
	// one statement.
	subscribers map[string]*Subscriber
}

// newJoinedScan prepares the destinations of one row of the shape e selects.
func newJoinedScan(e embedded) *joinedScan {
	r := &joinedScan{subscribers: make(map[string]*Subscriber)}
	for _, c := range messageColumns {
		r.dest = append(r.dest, c.dest(&r.msg))
	}
	if e.Subscribers {
		for _, c := range subscriberColumns {
			r.dest = append(r.dest, nullable{c.dest(&r.sub)})
		}
	}
	if e.Templates {
		r.dest = append(r.dest, &r.version)
	}
	return r
}

// read scans the current row of rows and returns its message, its subscriber attached.
func (r *joinedScan) read(rows *sql.Rows, e embedded) (*Message, time.Time, error) {
	// Zero for the next row whatever happens: a NULL leaves a destination as it was, and
	// the record handed out keeps the slices its JSON columns were decoded into.
	defer func() { r.msg, r.sub, r.version = Message{}, subscriberRow{}, Stamp{} }()
	if err := rows.Scan(r.dest...); err != nil {
		return nil, time.Time{}, err
	}
	m, version := new(Message), r.version.Time
	*m = r.msg
	m.applyMark()
	m.normalize()
	if e.Subscribers && r.sub.ID != "" {
		sub, ok := r.subscribers[r.sub.ID]
		if !ok {
			var err error
			if sub, err = r.sub.decode(); err != nil {
				return nil, time.Time{}, err
			}
			r.subscribers[r.sub.ID] = sub
		}
		m.Subscriber = sub
	}
	return m, version, nil
}

// jsonColumn reads a JSON text column into the value v points to, as the jsontext
// serializer stored it; NULL and empty text leave the zero value.
type jsonColumn struct{ v any }

// Scan decodes src.
func (c jsonColumn) Scan(src any) error {
	var b []byte
	switch s := src.(type) {
	case nil:
		return nil
	case []byte:
		b = s
	case string:
		b = []byte(s)
	default:
		return fmt.Errorf("JSON column: cannot read %T", src)
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil
	}
	// encoding/json's semantics, from its v2 implementation (jsonv1): these columns are
	// decoded for every message of every page, where it takes less than half the time.
	return jsonv1.Unmarshal(b, c.v)
}

// optionalTime reads a nullable timestamp into an optional Time.
type optionalTime struct{ t **Time }

// Scan sets the time, or nil for NULL.
func (o optionalTime) Scan(src any) error {
	if src == nil {
		*o.t = nil
		return nil
	}
	var t Time
	if err := t.Scan(src); err != nil {
		return err
	}
	*o.t = &t
	return nil
}

// nullable reads a column of a LEFT JOIN's missing row (NULL) as the zero value, and
// any other value as dest would.
type nullable struct{ dest any }

// Scan leaves the destination alone for NULL.
func (n nullable) Scan(src any) error {
	if src == nil {
		return nil
	}
	if s, ok := n.dest.(sql.Scanner); ok {
		return s.Scan(src)
	}
	return convertColumn(n.dest, src)
}

// convertColumn stores a driver value in one of the plain destinations the column lists
// use, as database/sql's own Scan would.
func convertColumn(dest, src any) error {
	switch d := dest.(type) {
	case *string:
		switch s := src.(type) {
		case string:
			*d = s
			return nil
		case []byte:
			*d = string(s)
			return nil
		}
	case *bool:
		b, err := driverBool(src)
		*d = b
		return err
	case **bool:
		b, err := driverBool(src)
		*d = &b
		return err
	case *int:
		switch s := src.(type) {
		case int64:
			*d = int(s)
			return nil
		case []byte:
			_, err := fmt.Sscan(string(s), d)
			return err
		case string:
			_, err := fmt.Sscan(s, d)
			return err
		}
	}
	return fmt.Errorf("cannot read %T into %T", src, dest)
}

// driverBool reads a boolean column as either driver returns it.
func driverBool(src any) (bool, error) {
	switch s := src.(type) {
	case bool:
		return s, nil
	case int64:
		return s != 0, nil
	case []byte:
		return string(s) != "0" && len(s) > 0, nil
	case string:
		return s != "0" && s != "", nil
	}
	return false, fmt.Errorf("cannot read %T as a boolean", src)
}
