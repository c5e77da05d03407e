package store

import (
	"bytes"
	"database/sql"
	"fmt"
	"messages/models"
	"strings"

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
var messageColumns = []column[models.Message]{
	{"id", func(m *models.Message) any { return &m.ID }},
	{"template_id", func(m *models.Message) any { return &m.TemplateID }},
	{"environment_id", func(m *models.Message) any { return &m.EnvironmentID }},
	{"message_template_id", func(m *models.Message) any { return &m.MessageTemplateID }},
	{"organization_id", func(m *models.Message) any { return &m.OrganizationID }},
	{"notification_id", func(m *models.Message) any { return &m.NotificationID }},
	{"subscriber_id", func(m *models.Message) any { return &m.SubscriberID }},
	{"template_identifier", func(m *models.Message) any { return &m.TemplateIdentifier }},
	{"created_at", func(m *models.Message) any { return &m.CreatedAt }},
	{"delivered_at", func(m *models.Message) any { return jsonColumn{&m.DeliveredAt} }},
	{"last_seen_date", func(m *models.Message) any { return optionalTime{&m.LastSeenDate} }},
	{"last_read_date", func(m *models.Message) any { return optionalTime{&m.LastReadDate} }},
	{"first_seen_date", func(m *models.Message) any { return optionalTime{&m.FirstSeenDate} }},
	{"content", func(m *models.Message) any { return jsonColumn{&m.Content} }},
	{"transaction_id", func(m *models.Message) any { return &m.TransactionID }},
	{"subject", func(m *models.Message) any { return &m.Subject }},
	{"channel", func(m *models.Message) any { return &m.Channel }},
	{"read", func(m *models.Message) any { return &m.Read }},
	{"seen", func(m *models.Message) any { return &m.Seen }},
	{"archived", func(m *models.Message) any { return &m.Archived }},
	{"archived_at", func(m *models.Message) any { return optionalTime{&m.ArchivedAt} }},
	{"snoozed_until", func(m *models.Message) any { return optionalTime{&m.SnoozedUntil} }},
	{"email", func(m *models.Message) any { return &m.Email }},
	{"phone", func(m *models.Message) any { return &m.Phone }},
	{"direct_webhook_url", func(m *models.Message) any { return &m.DirectWebhookURL }},
	{"provider_id", func(m *models.Message) any { return &m.ProviderID }},
	{"device_tokens", func(m *models.Message) any { return jsonColumn{&m.DeviceTokens} }},
	{"title", func(m *models.Message) any { return &m.Title }},
	{"cta", func(m *models.Message) any { return jsonColumn{&m.CTA} }},
	{"feed_id", func(m *models.Message) any { return &m.FeedID }},
	{"status", func(m *models.Message) any { return &m.Status }},
	{"error_id", func(m *models.Message) any { return &m.ErrorID }},
	{"error_text", func(m *models.Message) any { return &m.ErrorText }},
	{"payload", func(m *models.Message) any { return &m.Payload }},
	{"overrides", func(m *models.Message) any { return &m.Overrides }},
	{"action_status", func(m *models.Message) any { return &m.ActionStatus }},
	{"action_result_type", func(m *models.Message) any { return &m.ActionResultType }},
	{"action_result_payload", func(m *models.Message) any { return &m.ActionResultPayload }},
	{"inserted_at", func(m *models.Message) any { return &m.InsertedAt }},
	{"changed_at", func(m *models.Message) any { return &m.ChangedAt }},
}

// messageSelect is the message's part of readMessages' select list, in the order
// joinedScan reads it.
var messageSelect = selectList("messages", messageColumns)

// selectList renders columns qualified by table.
func selectList[R any](table string, columns []column[R]) string {
	var b strings.Builder
	for i, c := range columns {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s.%s", table, quoteColumn(c.name))
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

// joinedScan is one row of readMessages' statement being read: the message, and the
// versions of its subscriber and its template when joined (zero when the record does not
// exist). The row is scanned into fields of its own, whose destinations are made once per
// statement, and the message copied out into a new record.
type joinedScan struct {
	msg                                models.Message
	subscriberVersion, templateVersion models.Stamp
	dest                               []any
}

// newJoinedScan prepares the destinations of one row of the shape e selects.
func newJoinedScan(e embedded) *joinedScan {
	r := &joinedScan{}
	for _, c := range messageColumns {
		r.dest = append(r.dest, c.dest(&r.msg))
	}
	if e.Subscribers {
		r.dest = append(r.dest, &r.subscriberVersion)
	}
	if e.Templates {
		r.dest = append(r.dest, &r.templateVersion)
	}
	return r
}

// read scans the current row of rows and returns its message; the versions stay in r
// until the next row.
func (r *joinedScan) read(rows *sql.Rows) (*models.Message, error) {
	// Zero for this row: a NULL leaves a destination as it was, and the record handed out
	// keeps the slices its JSON columns were decoded into.
	r.msg, r.subscriberVersion, r.templateVersion = models.Message{}, models.Stamp{}, models.Stamp{}
	if err := rows.Scan(r.dest...); err != nil {
		return nil, err
	}
	m := new(models.Message)
	*m = r.msg
	m.ApplyMark()
	m.Normalize()
	return m, nil
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
type optionalTime struct{ t **models.Time }

// Scan sets the time, or nil for NULL.
func (o optionalTime) Scan(src any) error {
	if src == nil {
		*o.t = nil
		return nil
	}
	var t models.Time
	if err := t.Scan(src); err != nil {
		return err
	}
	*o.t = &t
	return nil
}
