package models

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"time"
	"unicode/utf8"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

const (
	// transferBatch is how many messages one keyset page of an export, or one multi-row
	// INSERT of an import on MySQL, carries.
	transferBatch = 500
	// maxImportLine bounds one JSON Lines record; payloads reach about 1 MiB.
	maxImportLine = 8 << 20
	// maxBatchBytes flushes a batch of large records early: 500 records of 1 MiB would
	// otherwise sit in memory at once.
	maxBatchBytes = 4 << 20
	// progressEvery is how many lines an import reads between progress calls.
	progressEvery = 1000
)

// ImportStats counts what an import read: lines (blank ones included), message records,
// and the distinct subscribers, templates and environments those records carry.
type ImportStats struct{ Lines, Messages, Subscribers, Templates, Environments int }

// ImportMessages reads JSON Lines, one Message record per line in the /v1 wire shape with
// its subscriber and template embedded, and upserts environments, subscribers, templates
// and messages, keeping ids and timestamps; fields the record does not define are ignored.
// It runs in one transaction: a bad line fails the whole import with an EINVALID error
// naming the line, and nothing is written. Importing the same file again changes nothing.
// progress, when set, gets the lines read; on error the stats say how far the import got.
func (s *Store) ImportMessages(ctx context.Context, r io.Reader, progress func(lines int)) (ImportStats, error) {
	var stats ImportStats
	err := s.bulk().WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		imp := newImporter(tx, &stats, s.Now().UTC())
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 0, 64<<10), maxImportLine)
		for sc.Scan() {
			stats.Lines++
			if progress != nil && stats.Lines%progressEvery == 0 {
				progress(stats.Lines)
			}
			line := bytes.TrimSpace(sc.Bytes())
			if len(line) == 0 {
				continue
			}
			rec, err := decodeRecord(line)
			if err != nil {
				return lineError(stats.Lines, err)
			}
			if err := imp.add(stats.Lines, rec); err != nil {
				return err
			}
			if imp.bytes += len(line); len(imp.msgs.rows) >= s.insertBatch(transferBatch) || imp.bytes >= maxBatchBytes {
				if err := imp.flush(); err != nil {
					return err
				}
			}
		}
		if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
			return lineErrorf(stats.Lines+1, "longer than %d MiB", maxImportLine>>20)
		} else if err != nil {
			return fmt.Errorf("read import: %w", err)
		}
		return imp.flush()
	})
	if err != nil {
		return stats, err
	}
	if progress != nil && stats.Lines%progressEvery != 0 {
		progress(stats.Lines)
	}
	return stats, nil
}

// ExportMessages writes every message of an environment as JSON Lines in the shape
// ImportMessages reads, oldest first (createdAt, then _id), and returns how many it wrote.
// It pages by keyset, so memory stays flat however many messages there are.
func (s *Store) ExportMessages(ctx context.Context, environmentID string, w io.Writer, progress func(n int)) (int, error) {
	if !IsID(environmentID) {
		return 0, errNotFound("environment")
	}
	var envs int64
	if err := s.db.WithContext(ctx).Model(&Environment{}).Where("id = ?", environmentID).Count(&envs).Error; err != nil {
		return 0, err
	}
	if envs == 0 {
		return 0, errNotFound("environment")
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	total := 0
	var after *exportKey
	for {
		keys, err := s.exportKeys(ctx, environmentID, after)
		if err != nil {
			return total, err
		}
		ids := make([]string, len(keys))
		for i, k := range keys {
			ids[i] = k.ID
		}
		msgs, err := s.messagesByID(ctx, environmentID, ids)
		if err != nil {
			return total, err
		}
		if err := s.embed(ctx, environmentID, msgs, true, true); err != nil {
			return total, err
		}
		for _, m := range msgs {
			if err := enc.Encode(m); err != nil {
				return total, err
			}
			total++
		}
		if progress != nil && len(msgs) > 0 {
			progress(total)
		}
		if len(keys) < transferBatch {
			return total, bw.Flush()
		}
		after = &keys[len(keys)-1]
	}
}

// exportKey is the keyset position of one message in export order.
type exportKey struct {
	ID        string
	CreatedAt Time
}

// exportKeys returns the next page of message keys after the given one. It reads only
// the (environment_id, created_at, id) index; the rows are then loaded by primary key.
func (s *Store) exportKeys(ctx context.Context, environmentID string, after *exportKey) ([]exportKey, error) {
	q := s.db.WithContext(ctx).Model(&Message{}).Select("id, created_at").Where("environment_id = ?", environmentID)
	if after != nil {
		q = q.Where("(created_at > ? OR (created_at = ? AND id > ?))", after.CreatedAt, after.CreatedAt, after.ID)
	}
	var keys []exportKey
	err := q.Order("created_at, id").Limit(transferBatch).Find(&keys).Error
	return keys, err
}

// insertBatch is how many rows one multi-row INSERT carries: the size wanted on MySQL, and
// 100 on SQLite, whose driver matches each placeholder to its argument by a linear scan,
// so a statement costs the square of its placeholders there.
func (s *Store) insertBatch(mysql int) int {
	if s.dialect == DialectSQLite {
		return 100
	}
	return mysql
}

// lineError makes a validation failure of one input line a coded error naming the line.
func lineError(line int, err error) error { return Errorf(EINVALID, "line %d: %v", line, err) }

// lineErrorf is lineError with a formatted message.
func lineErrorf(line int, format string, args ...any) error {
	return lineError(line, fmt.Errorf(format, args...))
}

// importRecord is one parsed line, with checksums of the embedded subscriber and template
// as written, which tell whether a copy already taken from the file has changed.
type importRecord struct {
	*Message
	subscriberSum, templateSum uint64
}

// decodeRecord parses and validates one line.
func decodeRecord(line []byte) (importRecord, error) {
	if !utf8.Valid(line) {
		return importRecord{}, errors.New("not valid UTF-8")
	}
	if line[0] != '{' {
		return importRecord{}, errors.New("not a JSON object")
	}
	var wire struct {
		Message
		RawSubscriber json.RawMessage `json:"subscriber"`
		RawTemplate   json.RawMessage `json:"template"`
	}
	err := json.Unmarshal(line, &wire)
	rec := importRecord{Message: &wire.Message,
		subscriberSum: checksum(wire.RawSubscriber), templateSum: checksum(wire.RawTemplate)}
	if err == nil && len(wire.RawSubscriber) > 0 && string(wire.RawSubscriber) != "null" {
		err = json.Unmarshal(wire.RawSubscriber, &rec.Subscriber)
	}
	if err == nil && len(wire.RawTemplate) > 0 && string(wire.RawTemplate) != "null" {
		err = json.Unmarshal(wire.RawTemplate, &rec.Template)
	}
	if err != nil {
		return importRecord{}, fmt.Errorf("not a valid message record: %v", err)
	}
	return rec, validateRecord(rec.Message)
}

// pending holds the rows of one batch, each once by id (the last version wins, because
// SQLite refuses to upsert the same row twice in one statement), with the first line
// that carried it.
type pending[T any] struct {
	rows  []T
	lines []int
	index map[string]int
}

func (p *pending[T]) put(id string, line int, row T) {
	if i, ok := p.index[id]; ok {
		p.rows[i] = row
		return
	}
	if p.index == nil {
		p.index = make(map[string]int)
	}
	p.index[id] = len(p.rows)
	p.rows = append(p.rows, row)
	p.lines = append(p.lines, line)
}

func (p *pending[T]) reset() { p.rows, p.lines, p.index = p.rows[:0], p.lines[:0], nil }

// seenRecord remembers a subscriber or template already taken from the file: where it
// first appeared, whose it is, and a checksum so unchanged copies are not written again.
type seenRecord struct {
	line               int
	environment, extID string
	sum                uint64
}

// importer accumulates one batch of records inside the import transaction.
type importer struct {
	tx    *gorm.DB
	stats *ImportStats
	now   time.Time
	envs  map[string]string     // environment id -> organization id
	subs  map[string]seenRecord // subscriber _id
	tpls  map[string]seenRecord // template _id
	extID map[string]string     // environment + "\x00" + subscriberId -> subscriber _id
	msgs  pending[*Message]
	psubs pending[*Subscriber]
	ptpls pending[*Template]
	bytes int // input size of the batch
}

func newImporter(tx *gorm.DB, stats *ImportStats, now time.Time) *importer {
	return &importer{tx: tx, stats: stats, now: now, envs: map[string]string{},
		subs: map[string]seenRecord{}, tpls: map[string]seenRecord{}, extID: map[string]string{}}
}

// add takes one validated record, checking it against the records of earlier lines.
func (imp *importer) add(line int, rec importRecord) error {
	m := rec.Message
	if err := imp.environment(line, m.EnvironmentID, m.OrganizationID); err != nil {
		return err
	}
	sub := m.Subscriber
	key := sub.EnvironmentID + "\x00" + sub.SubscriberID
	if id, ok := imp.extID[key]; ok && id != sub.ID {
		return lineErrorf(line, "subscriberId %q belongs to subscriber %s on line %d", sub.SubscriberID, id, imp.subs[id].line)
	}
	seen, ok := imp.subs[sub.ID]
	if ok && (seen.environment != sub.EnvironmentID || seen.extID != sub.SubscriberID) {
		return lineErrorf(line, "subscriber %s has subscriberId %q in environment %s on line %d", sub.ID, seen.extID, seen.environment, seen.line)
	}
	if sum := rec.subscriberSum; !ok || sum != seen.sum {
		if !ok {
			imp.stats.Subscribers++
			imp.extID[key] = sub.ID
			seen = seenRecord{line: line, environment: sub.EnvironmentID, extID: sub.SubscriberID}
		}
		seen.sum = sum
		imp.subs[sub.ID] = seen
		imp.psubs.put(sub.ID, line, sub)
	}
	if tpl := m.Template; tpl != nil {
		seen, ok := imp.tpls[tpl.ID]
		if ok && seen.environment != tpl.EnvironmentID {
			return lineErrorf(line, "template %s is in environment %s on line %d", tpl.ID, seen.environment, seen.line)
		}
		if sum := rec.templateSum; !ok || sum != seen.sum {
			if !ok {
				imp.stats.Templates++
				seen = seenRecord{line: line, environment: tpl.EnvironmentID}
			}
			seen.sum = sum
			imp.tpls[tpl.ID] = seen
			imp.ptpls.put(tpl.ID, line, tpl)
		}
	}
	imp.stats.Messages++
	imp.msgs.put(m.ID, line, m)
	return nil
}

// environment creates an environment the first time the file names it, and refuses an
// organization other than the one the environment already belongs to.
func (imp *importer) environment(line int, id, organizationID string) error {
	if org, ok := imp.envs[id]; ok {
		if org != organizationID {
			return lineErrorf(line, "_organizationId %q differs from %q, the organization of environment %s", organizationID, org, id)
		}
		return nil
	}
	var existing []Environment
	if err := imp.tx.Where("id = ?", id).Limit(1).Find(&existing).Error; err != nil {
		return err
	}
	if len(existing) > 0 && existing[0].OrganizationID != organizationID {
		return lineErrorf(line, "environment %s belongs to organization %s, not %s", id, existing[0].OrganizationID, organizationID)
	}
	if len(existing) == 0 {
		env := Environment{ID: id, OrganizationID: organizationID, Name: "imported", CreatedAt: imp.now}
		if err := imp.tx.Create(&env).Error; err != nil {
			return err
		}
	}
	imp.envs[id] = organizationID
	imp.stats.Environments++
	return nil
}

// flush checks the batch against what the database already holds, then upserts it.
func (imp *importer) flush() error {
	if err := checkOwners(imp.tx, "subscribers", "subscriber", &imp.psubs, func(r *Subscriber) (string, string) { return r.ID, r.EnvironmentID }); err != nil {
		return err
	}
	if err := imp.checkExternalIDs(); err != nil {
		return err
	}
	if err := checkOwners(imp.tx, "templates", "template", &imp.ptpls, func(r *Template) (string, string) { return r.ID, r.EnvironmentID }); err != nil {
		return err
	}
	if err := checkOwners(imp.tx, "messages", "message", &imp.msgs, func(r *Message) (string, string) { return r.ID, r.EnvironmentID }); err != nil {
		return err
	}
	if err := upsert(imp.tx, &Subscriber{}, imp.psubs.rows); err != nil {
		return err
	}
	if err := upsert(imp.tx, &Template{}, imp.ptpls.rows); err != nil {
		return err
	}
	if err := upsert(imp.tx, &Message{}, imp.msgs.rows); err != nil {
		return err
	}
	imp.psubs.reset()
	imp.ptpls.reset()
	imp.msgs.reset()
	imp.bytes = 0
	return nil
}

// checkOwners refuses rows whose id the database already holds in another environment:
// an upsert would otherwise move another tenant's record.
func checkOwners[T any](tx *gorm.DB, table, what string, p *pending[T], key func(T) (id, environmentID string)) error {
	if len(p.rows) == 0 {
		return nil
	}
	ids := make([]string, len(p.rows))
	for i, r := range p.rows {
		ids[i], _ = key(r)
	}
	var owners []struct{ ID, EnvironmentID string }
	if err := tx.Table(table).Select("id, environment_id").Where("id IN ?", ids).Find(&owners).Error; err != nil {
		return err
	}
	owner := make(map[string]string, len(owners))
	for _, o := range owners {
		owner[o.ID] = o.EnvironmentID
	}
	for i, r := range p.rows {
		if id, env := key(r); owner[id] != "" && owner[id] != env {
			return lineErrorf(p.lines[i], "%s %s already exists in another environment", what, id)
		}
	}
	return nil
}

// checkExternalIDs refuses a subscriber whose subscriberId another subscriber of the same
// environment already has: the pair is unique, and upserting would break that.
func (imp *importer) checkExternalIDs() error {
	byEnv := map[string][]string{}
	for _, r := range imp.psubs.rows {
		byEnv[r.EnvironmentID] = append(byEnv[r.EnvironmentID], r.SubscriberID)
	}
	for env, extIDs := range byEnv {
		var rows []struct{ ID, SubscriberID string }
		if err := imp.tx.Model(&Subscriber{}).Select("id, subscriber_id").
			Where("environment_id = ? AND subscriber_id IN ?", env, extIDs).Find(&rows).Error; err != nil {
			return err
		}
		for _, row := range rows {
			if id := imp.extID[env+"\x00"+row.SubscriberID]; id != row.ID {
				return lineErrorf(imp.subs[id].line, "subscriberId %q already belongs to subscriber %s", row.SubscriberID, row.ID)
			}
		}
	}
	return nil
}

// upsert inserts rows in one statement, replacing every column but the id of rows that
// exist. GORM's UpdateAll would skip created_at and stamp updated_at with the clock,
// which breaks "timestamps are kept", so the columns are listed explicitly.
func upsert[T any](tx *gorm.DB, model any, rows []T) error {
	if len(rows) == 0 {
		return nil
	}
	stmt := &gorm.Statement{DB: tx}
	if err := stmt.Parse(model); err != nil {
		return err
	}
	var columns []string
	for _, f := range stmt.Schema.Fields {
		if f.DBName != "" && !f.PrimaryKey {
			columns = append(columns, f.DBName)
		}
	}
	return tx.Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "id"}},
		DoUpdates: clause.AssignmentColumns(columns),
	}).Create(rows).Error
}

// checksum fingerprints a record's wire form.
func checksum(b []byte) uint64 {
	h := fnv.New64a()
	_, _ = h.Write(b)
	return h.Sum64()
}

// Column sizes from migrations/mysql/00001_initial.sql: VARCHAR(n) counts characters,
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
	c.failIf(!IsID(v), "%s %q is not 24 lowercase hex digits", field, v)
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
func (c *recordCheck) time(field string, t *Time, required bool) {
	if t == nil || (t.IsZero() && !required) {
		return
	}
	c.failIf(t.IsZero(), "%s is required", field)
	c.failIf(t.Year() < 1000 || t.Year() > 9999, "%s %s is outside the years 1000 to 9999", field, t)
}

// validateRecord checks what the database and the API rely on, and that the record's
// subscriber and template belong to its environment.
func validateRecord(m *Message) error {
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
