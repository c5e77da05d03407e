package store

import (
	"context"
	"messages/models"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
)

// The records a page embeds, templates (a few KB of workflow steps each) and subscribers,
// are held decoded per instance by id and version. A page's own statement reads each
// message's template and subscriber version (templates.changed_at, migration 00007;
// subscribers.changed_at, 00008) with the message, so a cached record is used only while
// it is exactly the row's current version: no TTL, no staleness, and any writer's change
// (an import, plain SQL) shows on the next page. A cached record is shared by every
// reader: nothing may modify it.

// Cache sizes bound the records one instance keeps decoded.
const (
	templateCacheSize   = 2_000  // a few KB each
	subscriberCacheSize = 10_000 // under 1 KB each
)

// versionKey is one version of one record.
type versionKey struct {
	environmentID string
	id            string
	version       time.Time
}

// recordCache holds decoded records of one kind by id and version.
type recordCache[R any] struct {
	entries *lru.Cache[versionKey, *R]
	// load reads records by id from the database, with their versions.
	load func(ctx context.Context, s *Store, environmentID string, ids []string) ([]*R, error)
	// key is a record's id and version, as load read it.
	key func(r *R) (id string, version time.Time)
}

// embeds says where a page's messages hold one kind of embedded record.
type embeds[R any] struct {
	id  func(m *models.Message) string
	set func(m *models.Message, r *R)
}

var (
	templateEmbeds   = embeds[models.Template]{func(m *models.Message) string { return m.TemplateID }, func(m *models.Message, t *models.Template) { m.Template = t }}
	subscriberEmbeds = embeds[models.Subscriber]{func(m *models.Message) string { return m.SubscriberID }, func(m *models.Message, s *models.Subscriber) { m.Subscriber = s }}
)

func newTemplateCache() recordCache[models.Template] {
	return recordCache[models.Template]{
		entries: newLRU[versionKey, *models.Template](templateCacheSize),
		load: func(ctx context.Context, s *Store, environmentID string, ids []string) ([]*models.Template, error) {
			var rows []*models.Template
			err := s.conn(ctx).Where("environment_id = ? AND id IN ?", environmentID, ids).Find(&rows).Error
			for _, t := range rows {
				t.Normalize()
			}
			return rows, err
		},
		key: func(t *models.Template) (string, time.Time) { return t.ID, t.ChangedAt.Time },
	}
}

func newSubscriberCache() recordCache[models.Subscriber] {
	return recordCache[models.Subscriber]{
		entries: newLRU[versionKey, *models.Subscriber](subscriberCacheSize),
		load: func(ctx context.Context, s *Store, environmentID string, ids []string) ([]*models.Subscriber, error) {
			var rows []*models.Subscriber
			err := s.conn(ctx).Where("environment_id = ? AND id IN ?", environmentID, ids).Find(&rows).Error
			return rows, err
		},
		key: func(sub *models.Subscriber) (string, time.Time) { return sub.ID, sub.ChangedAt.Time },
	}
}

// attach resolves the records of messages whose versions a page read, from the cache
// where it holds that version and from the database (one statement) for the rest, and
// attaches them. versions[i] is the version read for msgs[i], zero where the message's
// record does not exist.
func attach[R any](ctx context.Context, s *Store, c recordCache[R], e embeds[R], environmentID string, msgs []*models.Message, versions []time.Time) error {
	var missed []*models.Message
	var ids []string
	seen := make(map[string]bool)
	for i, m := range msgs {
		if versions[i].IsZero() {
			e.set(m, nil)
			continue
		}
		if r, ok := c.entries.Get(versionKey{environmentID, e.id(m), versions[i]}); ok {
			e.set(m, r)
			continue
		}
		missed = append(missed, m)
		if id := e.id(m); !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	byID, err := c.read(ctx, s, environmentID, ids)
	if err != nil {
		return err
	}
	for _, m := range missed {
		// The row may have changed again since the page read its version; the newer one
		// is what the database holds now, and is what the page gets.
		e.set(m, byID[e.id(m)])
	}
	return nil
}

// read loads records by id, caches them under the version read, and returns them by id.
func (c recordCache[R]) read(ctx context.Context, s *Store, environmentID string, ids []string) (map[string]*R, error) {
	rows, err := c.load(ctx, s, environmentID, ids)
	if err != nil {
		return nil, err
	}
	byID := make(map[string]*R, len(rows))
	for _, r := range rows {
		id, version := c.key(r)
		byID[id] = r
		if !inTx(ctx) {
			// A row read inside a transaction may be that transaction's uncommitted change.
			c.entries.Add(versionKey{environmentID, id, version}, r)
		}
	}
	return byID, nil
}
