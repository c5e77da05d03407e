package store

import (
	"context"
	"messages/models"
	"messages/models/cluster"
	"strconv"
	"strings"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
	"gorm.io/gorm/logger"
)

// Batch is a set of records written together: what an import flushes or a generator
// produces. WriteBatch writes its kinds in this order, so messages follow the
// subscribers and templates they point at.
type Batch struct {
	Environments []*models.Environment
	Subscribers  []*models.Subscriber
	Templates    []*models.Template
	Messages     []*models.Message
}

// Conflict says what WriteBatch does with a record whose id the database already holds.
type Conflict int

const (
	// ConflictFail fails the write.
	ConflictFail Conflict = iota
	// ConflictSkip keeps the stored record.
	ConflictSkip
	// ConflictReplace replaces every column of the stored record but its id.
	ConflictReplace
)

// WriteBatch inserts a batch in multi-row INSERTs, with logging off: a slow statement
// would otherwise log its thousands of placeholders, and errors reach the caller anyway.
// It joins the transaction ctx carries (an import's), where a conflict
// with a concurrent writer fails that whole transaction for its owner to run again (see
// noteConflict). Without one it runs in a transaction of its own, run again after a
// conflict (a Galera node certifying a concurrent write to the same rows first): the
// batch is in memory, so writing it again is the same write.
func (s *Store) WriteBatch(ctx context.Context, b Batch, c Conflict) error {
	if !inTx(ctx) {
		return s.RetryTransaction(ctx, func(ctx context.Context) error { return s.WriteBatch(ctx, b, c) })
	}
	db := s.conn(ctx).Session(&gorm.Session{Logger: logger.Discard})
	// One kind after the other, stopping at the first error: after a deadlock the server
	// has rolled the transaction back, and a later statement would commit on its own.
	for _, write := range []func() error{
		func() error { return insertRows(db, &models.Environment{}, b.Environments, c, s.insertBatch()) },
		func() error { return insertRows(db, &models.Subscriber{}, b.Subscribers, c, s.insertBatch()) },
		func() error { return insertRows(db, &models.Template{}, b.Templates, c, s.insertBatch()) },
		func() error { return insertRows(db, &models.Message{}, b.Messages, c, s.insertBatch()) },
	} {
		if err := write(); err != nil {
			return cluster.NoteConflict(ctx, err)
		}
	}
	s.noteWrite()
	return nil
}

// insertBatch is how many rows one INSERT carries: 1,000 on MySQL (a message has 32
// columns, so 32,000 placeholders, under MySQL's 65,535), and 100 on SQLite, whose driver
// matches each placeholder to its argument by a linear scan, so a statement costs the
// square of its placeholders there.
func (s *Store) insertBatch() int {
	if s.dialect == DialectSQLite {
		return 100
	}
	return 1000
}

// insertRows inserts rows, size at a time. Replacing lists the columns explicitly:
// GORM's UpdateAll would skip created_at and stamp updated_at with the clock, which
// breaks "timestamps are kept". Columns only the database writes (a message's change
// stamps) are left to it: the replaced row is stamped as changed, not as new.
func insertRows[T any](db *gorm.DB, model any, rows []T, c Conflict, size int) error {
	if len(rows) == 0 {
		return nil
	}
	switch c {
	case ConflictSkip:
		db = db.Clauses(clause.OnConflict{DoNothing: true})
	case ConflictReplace:
		stmt := &gorm.Statement{DB: db}
		if err := stmt.Parse(model); err != nil {
			return err
		}
		var columns []string
		for _, f := range stmt.Schema.Fields {
			// Read-only fields are the database's own (a message's change stamps).
			if f.DBName != "" && !f.PrimaryKey && f.Creatable {
				columns = append(columns, f.DBName)
			}
		}
		db = db.Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "id"}}, DoUpdates: clause.AssignmentColumns(columns)})
	}
	for start := 0; start < len(rows); start += size {
		if err := db.Create(rows[start:min(start+size, len(rows))]).Error; err != nil {
			return err
		}
	}
	return nil
}

// Owners maps, per kind, the ids of a batch's records that the database already holds
// to the environment holding them.
type Owners struct {
	Subscribers, Templates, Messages map[string]string
}

// OwnersOf looks up which of a batch's subscribers, templates and messages exist, and in
// which environment, so a writer can refuse to move another tenant's record.
func (s *Store) OwnersOf(ctx context.Context, b Batch) (Owners, error) {
	var o Owners
	var err error
	if o.Subscribers, err = s.owners(ctx, &models.Subscriber{}, idsOf(b.Subscribers, func(r *models.Subscriber) string { return r.ID })); err != nil {
		return o, err
	}
	if o.Templates, err = s.owners(ctx, &models.Template{}, idsOf(b.Templates, func(r *models.Template) string { return r.ID })); err != nil {
		return o, err
	}
	o.Messages, err = s.owners(ctx, &models.Message{}, idsOf(b.Messages, func(r *models.Message) string { return r.ID }))
	return o, err
}

func (s *Store) owners(ctx context.Context, model any, ids []string) (map[string]string, error) {
	owner := make(map[string]string, len(ids))
	if len(ids) == 0 {
		return owner, nil
	}
	var rows []struct{ ID, EnvironmentID string }
	if err := s.conn(ctx).Model(model).Select("id, environment_id").Where("id IN ?", ids).Find(&rows).Error; err != nil {
		return nil, err
	}
	for _, r := range rows {
		owner[r.ID] = r.EnvironmentID
	}
	return owner, nil
}

func idsOf[T any](rows []T, id func(T) string) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = id(r)
	}
	return out
}

// subscriberIDsPerQuery bounds the IN list of one SubscriberIDs query.
const subscriberIDsPerQuery = 500

// SubscriberIDs maps the external ids (subscriberId) an environment's subscribers have,
// among those given, to their internal ids (_id).
func (s *Store) SubscriberIDs(ctx context.Context, environmentID string, externalIDs []string) (map[string]string, error) {
	out := make(map[string]string, len(externalIDs))
	for start := 0; start < len(externalIDs); start += subscriberIDsPerQuery {
		var rows []struct{ ID, SubscriberID string }
		if err := s.conn(ctx).Model(&models.Subscriber{}).Select("id, subscriber_id").
			Where("environment_id = ? AND subscriber_id IN ?", environmentID, externalIDs[start:min(start+subscriberIDsPerQuery, len(externalIDs))]).
			Find(&rows).Error; err != nil {
			return nil, err
		}
		for _, r := range rows {
			out[r.SubscriberID] = r.ID
		}
	}
	return out, nil
}

// MessageCount counts an environment's messages exactly, with COUNT over the rows, so a
// writer can number what it adds after them; once, unlike a list's totalCount, which
// reads the counter rows instead (count.go).
func (s *Store) MessageCount(ctx context.Context, environmentID string) (int64, error) {
	var n int64
	err := s.conn(ctx).Model(&models.Message{}).Where("environment_id = ?", environmentID).Count(&n).Error
	return n, err
}

// WriteSetLimit is what a database lets one transaction write when it certifies each
// transaction whole across a cluster (a Galera node): the write set travels to every
// node at commit, bounded in rows (wsrep_max_ws_rows) and bytes (wsrep_max_ws_size).
type WriteSetLimit struct {
	// Certified is true on a Galera node; false on SQLite and a single MySQL server,
	// where one transaction may write any number of rows.
	Certified bool
	// Rows and Bytes bound one transaction's writes; 0 for no bound.
	Rows, Bytes int64
}

// WriteSetLimit asks the database how much one transaction may write.
func (s *Store) WriteSetLimit(ctx context.Context) (WriteSetLimit, error) {
	var l WriteSetLimit
	if s.dialect != DialectMySQL || s.vitess {
		return l, nil
	}
	// SHOW VARIABLES, not @@wsrep_on: MySQL without Galera has no such variable.
	rows, err := s.conn(ctx).Raw("SHOW VARIABLES WHERE Variable_name IN ('wsrep_on', 'wsrep_max_ws_rows', 'wsrep_max_ws_size')").Rows()
	if err != nil {
		return l, err
	}
	defer rows.Close()
	for rows.Next() {
		var name, value string
		if err := rows.Scan(&name, &value); err != nil {
			return l, err
		}
		n, _ := strconv.ParseInt(value, 10, 64)
		switch strings.ToLower(name) {
		case "wsrep_on":
			l.Certified = strings.EqualFold(value, "ON")
		case "wsrep_max_ws_rows":
			l.Rows = n
		case "wsrep_max_ws_size":
			l.Bytes = n
		}
	}
	return l, rows.Err()
}
