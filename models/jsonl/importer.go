package jsonl

import (
	"context"
	"time"

	"messages/models"
	"messages/models/store"
)

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

// importer accumulates one batch of records inside the import transaction, which ctx
// carries, or, chunked, commits each batch in a transaction of its own.
type importer struct {
	ctx   context.Context
	store *store.Store
	stats *ImportStats
	now   time.Time
	// o says which deleted messages are written again; deleted is how many of the batch
	// being written were not, added to stats once it is committed.
	o       ImportOptions
	deleted int
	// check runs every check and writes nothing: the first pass of a chunked import.
	check bool
	// chunk, when not 0, commits every batch of at most chunk messages and chunkBytes of
	// input on its own.
	chunk, chunkBytes int
	// perEnvironment, chunked, also ends a batch where the environment changes, so each
	// committed batch is one environment's: one shard's transaction on a sharded database.
	perEnvironment bool
	batchEnv       string
	lastLine       int                   // the line of the last record added to the batch
	envs           map[string]string     // environment id -> organization id
	subs           map[string]seenRecord // subscriber _id
	tpls           map[string]seenRecord // template _id
	extID          map[string]string     // environment + "\x00" + subscriberId -> subscriber _id
	msgs           pending[*models.Message]
	psubs          pending[*models.Subscriber]
	ptpls          pending[*models.Template]
	bytes          int // input size of the batch
}

func newImporter(ctx context.Context, s *store.Store, stats *ImportStats, o ImportOptions) *importer {
	return &importer{ctx: ctx, store: s, stats: stats, now: s.Now().UTC(), o: o, envs: map[string]string{},
		subs: map[string]seenRecord{}, tpls: map[string]seenRecord{}, extID: map[string]string{}}
}

// add takes one validated record, checking it against the records of earlier lines.
func (imp *importer) add(line int, rec record) error {
	m := rec.Message
	if imp.perEnvironment && m.EnvironmentID != imp.batchEnv {
		if len(imp.msgs.rows) > 0 {
			if err := imp.flush(); err != nil {
				return err
			}
		}
		imp.batchEnv = m.EnvironmentID
	}
	if m.Severity == "" && m.Template != nil {
		// A message without a severity of its own takes its workflow's.
		m.Severity = m.Template.Severity
	}
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
	imp.lastLine = line
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
	existing, err := imp.store.Environment(imp.ctx, id)
	switch {
	case models.ErrorCode(err) == models.ENOTFOUND && imp.check:
	case models.ErrorCode(err) == models.ENOTFOUND:
		env := &models.Environment{ID: id, OrganizationID: organizationID, Name: "imported", CreatedAt: imp.now}
		if err := imp.store.WriteBatch(imp.ctx, store.Batch{Environments: []*models.Environment{env}}, store.ConflictFail); err != nil {
			return err
		}
	case err != nil:
		return err
	case existing.OrganizationID != organizationID:
		return lineErrorf(line, "environment %s belongs to organization %s, not %s", id, existing.OrganizationID, organizationID)
	}
	imp.envs[id] = organizationID
	imp.stats.Environments++
	return nil
}

// full reports whether the batch is due to be written.
func (imp *importer) full() bool {
	if imp.chunk > 0 {
		return len(imp.msgs.rows) >= imp.chunk || imp.bytes >= imp.chunkBytes
	}
	return len(imp.msgs.rows) >= batchSize || imp.bytes >= maxBatchBytes
}

// flush checks the batch against what the database already holds, then upserts it:
// in the import's transaction, or chunked in one of its own, run again after a conflict.
func (imp *importer) flush() error {
	var err error
	if imp.chunk > 0 && !imp.check {
		err = imp.store.RetryTransaction(imp.ctx, imp.write)
	} else {
		err = imp.write(imp.ctx)
	}
	if err != nil {
		return err
	}
	// Only now: a transaction run again after a conflict writes the same batch again.
	if imp.chunk > 0 && !imp.check {
		imp.stats.Committed = imp.lastLine
	}
	imp.stats.Deleted += imp.deleted
	imp.deleted = 0
	imp.psubs.reset()
	imp.ptpls.reset()
	imp.msgs.reset()
	imp.bytes = 0
	return nil
}

func (imp *importer) write(ctx context.Context) error {
	batch := store.Batch{Subscribers: imp.psubs.rows, Templates: imp.ptpls.rows, Messages: imp.msgs.rows}
	owners, err := imp.store.OwnersOf(ctx, batch)
	if err != nil {
		return err
	}
	if err := checkOwners("subscriber", &imp.psubs, owners.Subscribers, func(r *models.Subscriber) (string, string) { return r.ID, r.EnvironmentID }); err != nil {
		return err
	}
	if err := imp.checkExternalIDs(ctx); err != nil {
		return err
	}
	if err := checkOwners("template", &imp.ptpls, owners.Templates, func(r *models.Template) (string, string) { return r.ID, r.EnvironmentID }); err != nil {
		return err
	}
	if err := checkOwners("message", &imp.msgs, owners.Messages, func(r *models.Message) (string, string) { return r.ID, r.EnvironmentID }); err != nil {
		return err
	}
	if imp.check {
		return nil
	}
	if batch.Messages, err = imp.notDeleted(ctx, batch.Messages); err != nil {
		return err
	}
	return imp.store.WriteBatch(ctx, batch, store.ConflictReplace)
}

// notDeleted leaves out of msgs those deleted since the file was written, unless the
// import restores them, and notes how many it left out.
func (imp *importer) notDeleted(ctx context.Context, msgs []*models.Message) ([]*models.Message, error) {
	imp.deleted = 0
	if imp.o.RestoreDeleted || len(msgs) == 0 {
		return msgs, nil
	}
	ids := make([]string, len(msgs))
	for i, m := range msgs {
		ids[i] = m.ID
	}
	gone, err := imp.store.DeletedSince(ctx, ids, imp.o.WrittenAt)
	if err != nil || len(gone) == 0 {
		return msgs, err
	}
	kept := make([]*models.Message, 0, len(msgs)-len(gone))
	for _, m := range msgs {
		if !gone[m.ID] {
			kept = append(kept, m)
		}
	}
	imp.deleted = len(msgs) - len(kept)
	return kept, nil
}

// checkOwners refuses rows whose id the database already holds in another environment:
// an upsert would otherwise move another tenant's record.
func checkOwners[T any](what string, p *pending[T], owner map[string]string, key func(T) (id, environmentID string)) error {
	for i, r := range p.rows {
		if id, env := key(r); owner[id] != "" && owner[id] != env {
			return lineErrorf(p.lines[i], "%s %s already exists in another environment", what, id)
		}
	}
	return nil
}

// checkExternalIDs refuses a subscriber whose subscriberId another subscriber of the same
// environment already has: the pair is unique, and upserting would break that.
func (imp *importer) checkExternalIDs(ctx context.Context) error {
	byEnv := map[string][]string{}
	for _, r := range imp.psubs.rows {
		byEnv[r.EnvironmentID] = append(byEnv[r.EnvironmentID], r.SubscriberID)
	}
	for env, extIDs := range byEnv {
		stored, err := imp.store.SubscriberIDs(ctx, env, extIDs)
		if err != nil {
			return err
		}
		for _, ext := range extIDs {
			if storedID, ok := stored[ext]; ok {
				if id := imp.extID[env+"\x00"+ext]; id != storedID {
					return lineErrorf(imp.subs[id].line, "subscriberId %q already belongs to subscriber %s", ext, storedID)
				}
			}
		}
	}
	return nil
}
