package models

import (
	"context"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
)

// templateCacheSize bounds the templates one instance keeps decoded (a few KB each).
const templateCacheSize = 2_000

// templateCache holds decoded templates by id and version. A page's own statement reads
// each message's template version (templates.changed_at, migration 00007) with the
// message, so a cached template is used only while it is exactly the row's current
// version: no TTL, no staleness, and any writer's change (an import, plain SQL) shows on
// the next page. The cached *Template is shared by every reader: nothing may modify it.
type templateCache struct {
	entries *lru.Cache[templateKey, *Template]
}

// templateKey is one version of one template.
type templateKey struct {
	environmentID string
	id            string
	version       time.Time
}

func newTemplateCache() templateCache {
	return templateCache{entries: newLRU[templateKey, *Template](templateCacheSize)}
}

// templateVersions resolves the templates of messages whose versions a page read, from
// the cache where it holds that version and from the database (one statement) for the
// rest, and attaches them. versions[i] is the version read for msgs[i], zero where the
// message's template does not exist.
func (s *Store) attachTemplates(ctx context.Context, environmentID string, msgs []*Message, versions []time.Time) error {
	var missing []string
	seen := make(map[string]bool)
	for i, m := range msgs {
		if versions[i].IsZero() {
			m.Template = nil
			continue
		}
		if t, ok := s.templates.entries.Get(templateKey{environmentID, m.TemplateID, versions[i]}); ok {
			m.Template = t
			continue
		}
		if !seen[m.TemplateID] {
			seen[m.TemplateID] = true
			missing = append(missing, m.TemplateID)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	fetched, err := s.loadTemplates(ctx, environmentID, missing)
	if err != nil {
		return err
	}
	for i, m := range msgs {
		if m.Template == nil && !versions[i].IsZero() {
			// The row may have changed again since the page read its version; the newer
			// one is what the database holds now, and is what the page gets.
			m.Template = fetched[m.TemplateID]
		}
	}
	return nil
}

// loadTemplates reads templates by id, caches them under the version read, and returns
// them by id.
func (s *Store) loadTemplates(ctx context.Context, environmentID string, ids []string) (map[string]*Template, error) {
	var rows []*Template
	if err := s.conn(ctx).Where("environment_id = ? AND id IN ?", environmentID, ids).Find(&rows).Error; err != nil {
		return nil, err
	}
	byID := make(map[string]*Template, len(rows))
	for _, t := range rows {
		t.normalize()
		byID[t.ID] = t
		if !inTx(ctx) {
			// A row read inside a transaction may be that transaction's uncommitted change.
			s.templates.entries.Add(templateKey{environmentID, t.ID, t.ChangedAt.Time}, t)
		}
	}
	return byID, nil
}
