package jsonl

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"unicode/utf8"

	"messages/models"
)

// lineError makes a validation failure of one input line a coded error naming the line.
func lineError(line int, err error) error {
	return models.Errorf(models.EINVALID, "line %d: %v", line, err)
}

// lineErrorf is lineError with a formatted message.
func lineErrorf(line int, format string, args ...any) error {
	return lineError(line, fmt.Errorf(format, args...))
}

// record is one parsed line, with checksums of the embedded subscriber and template
// as written, which tell whether a copy already taken from the file has changed.
type record struct {
	*models.Message
	subscriberSum, templateSum uint64
}

// decodeRecord parses and validates one line.
func decodeRecord(line []byte) (record, error) {
	if !utf8.Valid(line) {
		return record{}, errors.New("not valid UTF-8")
	}
	if line[0] != '{' {
		return record{}, errors.New("not a JSON object")
	}
	var wire struct {
		models.Message
		RawSubscriber json.RawMessage `json:"subscriber"`
		RawTemplate   json.RawMessage `json:"template"`
	}
	err := json.Unmarshal(line, &wire)
	rec := record{Message: &wire.Message,
		subscriberSum: checksum(wire.RawSubscriber), templateSum: checksum(wire.RawTemplate)}
	if err == nil && len(wire.RawSubscriber) > 0 && string(wire.RawSubscriber) != "null" {
		err = json.Unmarshal(wire.RawSubscriber, &rec.Subscriber)
	}
	if err == nil && len(wire.RawTemplate) > 0 && string(wire.RawTemplate) != "null" {
		err = json.Unmarshal(wire.RawTemplate, &rec.Template)
	}
	if err != nil {
		return record{}, fmt.Errorf("not a valid message record: %v", err)
	}
	return rec, validateRecord(rec.Message)
}

// checksum fingerprints a record's wire form.
func checksum(b []byte) uint64 {
	h := fnv.New64a()
	_, _ = h.Write(b)
	return h.Sum64()
}

// Column sizes from models/migrations/mysql/00001_initial.sql: VARCHAR(n) counts characters,
// TEXT holds 65,535 bytes. SQLite would take anything; checking here keeps both alike.
const (
	idColumn   = 24
	keyColumn  = 255
	textColumn = 65535
)

// recordCheck keeps the first problem found in a record.
type recordCheck struct{ err error }

func (c *recordCheck) failIf(bad bool, format string, args ...any) {
	if c.err == nil && bad {
		c.err = fmt.Errorf(format, args...)
	}
}

func (c *recordCheck) id(field, v string) {
	c.failIf(!models.IsID(v), "%s %q is not 24 lowercase hex digits", field, v)
}

// chars checks VARCHAR(n) columns, given as field name, value, field name, value, ...
func (c *recordCheck) chars(n int, fieldValues ...string) {
	for i := 0; i < len(fieldValues); i += 2 {
		c.failIf(utf8.RuneCountInString(fieldValues[i+1]) > n, "%s is longer than %d characters", fieldValues[i], n)
	}
}

// texts checks TEXT columns, given as field name, value, field name, value, ...
func (c *recordCheck) texts(fieldValues ...string) {
	for i := 0; i < len(fieldValues); i += 2 {
		c.failIf(len(fieldValues[i+1]) > textColumn, "%s is longer than %d bytes", fieldValues[i], textColumn)
	}
}

// time checks a timestamp fits DATETIME; a missing required one reads as the zero time.
func (c *recordCheck) time(field string, t *models.Time, required bool) {
	if t == nil || (t.IsZero() && !required) {
		return
	}
	c.failIf(t.IsZero(), "%s is required", field)
	c.failIf(t.Year() < 1000 || t.Year() > 9999, "%s %s is outside the years 1000 to 9999", field, t)
}

// validateRecord checks what the database and the API rely on, and that the record's
// subscriber and template belong to its environment.
func validateRecord(m *models.Message) error {
	var c recordCheck
	c.id("_id", m.ID)
	c.id("_environmentId", m.EnvironmentID)
	c.id("_organizationId", m.OrganizationID)
	c.id("_subscriberId", m.SubscriberID)
	c.failIf(!m.Channel.Valid(), "channel %q is not one of in_app, email, sms, chat, push", m.Channel)
	c.time("createdAt", &m.CreatedAt, true)
	c.time("lastSeenDate", m.LastSeenDate, false)
	c.time("lastReadDate", m.LastReadDate, false)
	c.time("snoozedUntil", m.SnoozedUntil, false)
	c.chars(idColumn, "_templateId", m.TemplateID, "_messageTemplateId", m.MessageTemplateID,
		"_notificationId", m.NotificationID, "_feedId", m.FeedID)
	c.chars(keyColumn, "templateIdentifier", m.TemplateIdentifier, "transactionId", m.TransactionID,
		"providerId", m.ProviderID, "errorId", m.ErrorID)
	c.chars(64, "status", m.Status)
	c.texts("subject", m.Subject, "email", m.Email, "phone", m.Phone,
		"directWebhookUrl", m.DirectWebhookURL, "title", m.Title, "errorText", m.ErrorText)

	sub := m.Subscriber
	if c.failIf(sub == nil, "subscriber is required"); c.err != nil {
		return c.err
	}
	c.failIf(sub.ID != m.SubscriberID, "subscriber._id %q does not match _subscriberId %q", sub.ID, m.SubscriberID)
	c.failIf(sub.SubscriberID == "", "subscriber.subscriberId is required")
	c.chars(keyColumn, "subscriber.subscriberId", sub.SubscriberID)
	c.failIf(sub.EnvironmentID != m.EnvironmentID, "subscriber._environmentId %q is not the message's %q", sub.EnvironmentID, m.EnvironmentID)
	c.failIf(sub.OrganizationID != m.OrganizationID, "subscriber._organizationId %q is not the message's %q", sub.OrganizationID, m.OrganizationID)
	c.failIf(int64(sub.Version) != int64(int32(sub.Version)), "subscriber.__v %d is out of range", sub.Version)
	c.time("subscriber.createdAt", &sub.CreatedAt, true)
	c.time("subscriber.updatedAt", &sub.UpdatedAt, true)
	c.time("subscriber.lastOnlineAt", sub.LastOnlineAt, false)
	c.texts("subscriber.firstName", sub.FirstName, "subscriber.lastName", sub.LastName,
		"subscriber.email", sub.Email, "subscriber.phone", sub.Phone, "subscriber.avatar", sub.Avatar,
		"subscriber.locale", sub.Locale, "subscriber.timezone", sub.Timezone)

	if tpl := m.Template; tpl != nil {
		c.failIf(tpl.ID != m.TemplateID, "template._id %q does not match _templateId %q", tpl.ID, m.TemplateID)
		c.failIf(tpl.EnvironmentID != m.EnvironmentID, "template._environmentId %q is not the message's %q", tpl.EnvironmentID, m.EnvironmentID)
		c.failIf(tpl.OrganizationID != m.OrganizationID, "template._organizationId %q is not the message's %q", tpl.OrganizationID, m.OrganizationID)
		c.chars(idColumn, "template._creatorId", tpl.CreatorID,
			"template._notificationGroupId", tpl.NotificationGroupID, "template._parentId", tpl.ParentID)
		var deletedAt string
		if tpl.DeletedAt != nil {
			deletedAt = *tpl.DeletedAt
		}
		c.texts("template.name", tpl.Name, "template.description", tpl.Description,
			"template.deletedAt", deletedAt, "template.deletedBy", tpl.DeletedBy)
	}
	c.sdkValues(m)
	return c.err
}
