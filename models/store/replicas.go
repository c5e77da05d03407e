package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"messages/models"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	mysqldriver "github.com/go-sql-driver/mysql"
	"gorm.io/driver/mysql"
	"gorm.io/gorm"
)

// Read replicas serve lists, cursors and counts (ListMessages, MessagesAfter): the reads
// that are most of the traffic and tolerate a little staleness. Everything else reads and
// writes the primary: marks and the record they return, idempotency claims,
// authentication (a lagging replica would keep a revoked key working), the change feed
// (its lookback assumes the primary's commit order), migrations, /readyz and the admin
// commands. Routing is opt-in per read path (readList), not every SELECT.
//
// A page runs all its statements in one read-only transaction on one replica, so its ids,
// rows and count come from one snapshot. A replica is used only while its last check
// (every ReplicaOptions.CheckInterval) found it replicating and at most MaxLag behind; a
// replica that is down, stopped or lagging is skipped for the primary, and a read that
// fails on a replica is read again from the primary, so a replica never makes a request
// fail. After a caller writes, its lists read from the primary for ReadAfterWrite.

// Defaults of ReplicaOptions.
const (
	DefaultReplicaMaxLag        = 5 * time.Second
	DefaultReplicaCheckInterval = time.Second
)

// ReplicaOptions configure the read replicas (Store.UseReplicas).
type ReplicaOptions struct {
	// URLs are mysql:// URLs of the replicas, each of the same database as the primary.
	URLs []string
	// MaxLag is how far behind the primary a replica may be and still serve reads.
	MaxLag time.Duration
	// ReadAfterWrite is how long a caller's lists read from the primary after it wrote
	// (0: not at all). Longer than MaxLag, it lets a caller see its own writes.
	ReadAfterWrite time.Duration
	// CheckInterval is how often each replica's state and lag are checked.
	CheckInterval time.Duration
	// Pool sizes each replica's connection pool.
	Pool PoolOptions
	// Logger notes a replica changing state; nil logs nothing.
	Logger *slog.Logger
}

// Replica states, as ReplicaStatus reports them.
const (
	ReplicaUnchecked = "unchecked" // not checked yet: not used
	ReplicaReady     = "ready"     // replicating, within MaxLag: used
	ReplicaLagging   = "lagging"   // replicating, more than MaxLag behind: skipped
	ReplicaStopped   = "stopped"   // not replicating (Seconds_Behind_Master is NULL): skipped
	ReplicaDown      = "down"      // unreachable, or a read on it failed: skipped
)

// ReplicaStatus is what the last check of one replica found.
type ReplicaStatus struct {
	// Addr is the replica's host:port, as metrics label it.
	Addr  string
	State string
	// Lag is Seconds_Behind_Master when the replica is replicating, else -1.
	Lag       time.Duration
	CheckedAt time.Time
}

// ReadStats counts the list reads of a store with replicas by where they were served.
type ReadStats struct {
	// Replica is reads served by a replica.
	Replica atomic.Uint64
	// AfterWrite is reads sent to the primary because their caller wrote recently;
	// NoReplica because no replica was ready; Failed because the read failed on a replica.
	AfterWrite, NoReplica, Failed atomic.Uint64
}

// replica is one read replica: the pool reads go through, a one-connection pool of its
// own for the checks (so a busy pool cannot make a healthy replica look down), and the
// last check's result.
type replica struct {
	addr   string
	db     *gorm.DB
	check  *sql.DB
	status atomic.Pointer[ReplicaStatus]
}

// replicaSet is a store's replicas, which caller wrote when, and the read counters.
type replicaSet struct {
	replicas []*replica
	opts     ReplicaOptions
	next     atomic.Uint64 // round robin over the replicas
	stats    ReadStats
	// now times checks and writes: the wall clock even when a test fixes the store's.
	now func() time.Time

	mu     sync.Mutex
	writes map[writerKey]time.Time // when each caller last wrote on this instance

	stop context.CancelFunc
	done chan struct{}
}

// writerKey names a caller for read-your-writes: its environment, and the subscriber of a
// session ("" for an API key).
type writerKey struct{ environmentID, subscriberID string }

// UseReplicas opens the replicas and starts checking them in the background until Close.
// A replica that cannot be reached now is not an error: it is skipped until a check finds
// it ready. A malformed URL, or replicas on SQLite, is.
func (s *Store) UseReplicas(opts ReplicaOptions) error {
	if len(opts.URLs) == 0 {
		return nil
	}
	if s.dialect != DialectMySQL {
		return errors.New("DATABASE_READ_URLS needs a MySQL primary: SQLite has no replicas")
	}
	if opts.MaxLag <= 0 {
		opts.MaxLag = DefaultReplicaMaxLag
	}
	if opts.CheckInterval <= 0 {
		opts.CheckInterval = DefaultReplicaCheckInterval
	}
	rs := &replicaSet{opts: opts, now: time.Now, writes: map[writerKey]time.Time{}, done: make(chan struct{})}
	for _, u := range opts.URLs {
		r, err := s.openReplica(u, opts.Pool)
		if err != nil {
			rs.close()
			return err
		}
		rs.replicas = append(rs.replicas, r)
	}
	if err := s.db.Callback().Create().After("gorm:create").Register("messages:note_write", rs.noteWrite); err != nil {
		rs.close()
		return err
	}
	for _, register := range []func(string, func(*gorm.DB)) error{
		s.db.Callback().Update().After("gorm:update").Register,
		s.db.Callback().Delete().After("gorm:delete").Register,
		s.db.Callback().Raw().After("gorm:raw").Register,
	} {
		if err := register("messages:note_write", rs.noteWrite); err != nil {
			rs.close()
			return err
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	rs.stop = cancel
	go rs.run(ctx)
	s.replicas = rs
	return nil
}

// openReplica opens one replica's pools without connecting. Its connections time out
// sooner than the primary's: a replica that does not answer is skipped, not waited for.
func (s *Store) openReplica(replicaURL string, pool PoolOptions) (*replica, error) {
	if err := CheckReplicaURL(replicaURL); err != nil {
		return nil, err
	}
	dsn, err := MySQLDSN(replicaURL)
	if err != nil {
		return nil, fmt.Errorf("DATABASE_READ_URLS: %w", err)
	}
	cfg, err := mysqldriver.ParseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("DATABASE_READ_URLS: %w", err)
	}
	cfg.Timeout = time.Second
	u, _ := url.Parse(replicaURL)
	conf := s.gormConfig()
	conf.DisableAutomaticPing = true
	// Without the version query GORM's MySQL dialector sends at open, which would make a
	// replica that is down at start fail the start.
	db, err := gorm.Open(mysql.New(mysql.Config{DSN: cfg.FormatDSN(), SkipInitializeWithVersion: true}), conf)
	if err != nil {
		return nil, fmt.Errorf("DATABASE_READ_URLS %s: %w", RedactURL(replicaURL), err)
	}
	sqlDB, err := db.DB()
	if err != nil {
		return nil, err
	}
	sqlDB.SetMaxOpenConns(pool.MaxOpenConns)
	sqlDB.SetMaxIdleConns(pool.MaxIdleConns)
	sqlDB.SetConnMaxLifetime(pool.ConnMaxLifetime)
	sqlDB.SetConnMaxIdleTime(pool.ConnMaxIdleTime)
	if err := errors.Join(s.countStatements(db), s.containJSON(db)); err != nil {
		_ = sqlDB.Close()
		return nil, err
	}
	check, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		_ = sqlDB.Close()
		return nil, err
	}
	check.SetMaxOpenConns(1)
	r := &replica{addr: u.Host, db: db, check: check}
	r.status.Store(&ReplicaStatus{Addr: r.addr, State: ReplicaUnchecked, Lag: -1})
	return r, nil
}

// ParseReadURLs splits DATABASE_READ_URLS, mysql:// URLs separated by commas, and checks
// each. A piece that does not start a URL belongs to the one before (a host list, which
// CheckReplicaURL then refuses by name rather than as a malformed URL).
func ParseReadURLs(list string) ([]string, error) {
	var urls []string
	for _, piece := range strings.Split(list, ",") {
		piece = strings.TrimSpace(piece)
		switch {
		case piece == "":
		case strings.Contains(piece, "://") || len(urls) == 0:
			urls = append(urls, piece)
		default:
			urls[len(urls)-1] += "," + piece
		}
	}
	seen := map[string]bool{}
	for _, u := range urls {
		if err := CheckReplicaURL(u); err != nil {
			return nil, err
		}
		parsed, _ := url.Parse(u)
		if seen[parsed.Host] {
			return nil, fmt.Errorf("DATABASE_READ_URLS names %s twice", parsed.Host)
		}
		seen[parsed.Host] = true
	}
	return urls, nil
}

// CheckReplicaURL says what is wrong with a replica's URL without connecting: it must be
// mysql://user:password@host:3306/database, one host.
func CheckReplicaURL(replicaURL string) error {
	if !strings.HasPrefix(replicaURL, "mysql://") {
		return fmt.Errorf("DATABASE_READ_URLS: %q is not a mysql:// URL", RedactURL(replicaURL))
	}
	if err := CheckDatabaseURL(replicaURL); err != nil {
		return fmt.Errorf("DATABASE_READ_URLS: %w", err)
	}
	if u, _ := url.Parse(replicaURL); strings.Contains(u.Host, ",") {
		return fmt.Errorf("DATABASE_READ_URLS: %s names several hosts: give each replica its own URL, separated by commas", RedactURL(replicaURL))
	}
	return nil
}

// Replicas returns what the last check of each replica found, in DATABASE_READ_URLS
// order; nil without replicas.
func (s *Store) Replicas() []ReplicaStatus {
	if s.replicas == nil {
		return nil
	}
	out := make([]ReplicaStatus, len(s.replicas.replicas))
	for i, r := range s.replicas.replicas {
		out[i] = *r.status.Load()
	}
	return out
}

// ReplicaPools returns each replica's connection pool by its host:port, for metrics; nil
// without replicas.
func (s *Store) ReplicaPools() map[string]*sql.DB {
	if s.replicas == nil {
		return nil
	}
	pools := make(map[string]*sql.DB, len(s.replicas.replicas))
	for _, r := range s.replicas.replicas {
		if sqlDB, err := r.db.DB(); err == nil {
			pools[r.addr] = sqlDB
		}
	}
	return pools
}

// ReplicaReads counts list reads by where they were served; nil without replicas.
func (s *Store) ReplicaReads() *ReadStats {
	if s.replicas == nil {
		return nil
	}
	return &s.replicas.stats
}

// readList runs read, a list's statements, on a replica: in one read-only transaction
// the context read receives carries (see conn), so every statement of the page sees one
// snapshot of one replica. It runs read on the primary instead, as it would without
// replicas, when ctx already carries a transaction (the reads must see it), when the
// caller wrote within ReadAfterWrite, when no replica is ready, and when read fails on
// the replica or does not finish within half of ctx's remaining time (the replica is
// then skipped until its next check finds it ready).
func (s *Store) readList(ctx context.Context, read func(ctx context.Context) error) error {
	rs := s.replicas
	if rs == nil || inTx(ctx) {
		return read(ctx)
	}
	if rs.wroteRecently(ctx) {
		rs.stats.AfterWrite.Add(1)
		return read(ctx)
	}
	r := rs.pick()
	if r == nil {
		rs.stats.NoReplica.Add(1)
		return read(ctx)
	}
	// A replica that stopped answering without closing its connections (a host gone
	// silent) gets half the time left, so the primary still has the other half.
	rctx, cancel := ctx, context.CancelFunc(func() {})
	if deadline, ok := ctx.Deadline(); ok {
		rctx, cancel = context.WithDeadline(ctx, time.Now().Add(time.Until(deadline)/2))
	}
	err := r.db.WithContext(rctx).Transaction(func(tx *gorm.DB) error {
		return read(WithTx(rctx, tx))
	}, &sql.TxOptions{ReadOnly: true})
	cancel()
	if err == nil {
		rs.stats.Replica.Add(1)
		return nil
	}
	if ctx.Err() != nil {
		return err
	}
	// Whatever failed, the primary answers: a statement the primary refuses too is
	// reported from there, and a replica that broke is no longer picked.
	if models.IsUnavailable(err) {
		rs.set(r, &ReplicaStatus{Addr: r.addr, State: ReplicaDown, Lag: -1, CheckedAt: rs.now()}, err)
	}
	rs.stats.Failed.Add(1)
	return read(ctx)
}

// pick returns the next ready replica in turn, or nil when none is.
func (rs *replicaSet) pick() *replica {
	n := uint64(len(rs.replicas))
	start := rs.next.Add(1)
	for i := range n {
		r := rs.replicas[(start+i)%n]
		if r.status.Load().State == ReplicaReady {
			return r
		}
	}
	return nil
}

// noteWrite is a callback after every writing statement on the primary: it remembers when
// the statement's caller, if any, last wrote. The time is the statement's, not its
// commit's; the window is seconds, a write transaction milliseconds.
func (rs *replicaSet) noteWrite(db *gorm.DB) {
	if db.Error != nil || db.Statement.Context == nil {
		return
	}
	rs.noteCallerWrite(db.Statement.Context)
}

// noteCallerWrite remembers that ctx's caller, if any, wrote now: noteWrite for a
// statement GORM ran, and the batched mark (markbatch.go) for its own.
func (rs *replicaSet) noteCallerWrite(ctx context.Context) {
	c, err := models.CallerFrom(ctx)
	if err != nil {
		return
	}
	rs.mu.Lock()
	rs.writes[writerKey{c.EnvironmentID, c.SubscriberID}] = rs.now()
	rs.mu.Unlock()
}

// wroteRecently reports whether ctx's caller wrote within ReadAfterWrite.
func (rs *replicaSet) wroteRecently(ctx context.Context) bool {
	c, err := models.CallerFrom(ctx)
	if err != nil || rs.opts.ReadAfterWrite <= 0 {
		return false
	}
	rs.mu.Lock()
	at, found := rs.writes[writerKey{c.EnvironmentID, c.SubscriberID}]
	rs.mu.Unlock()
	return found && rs.now().Sub(at) < rs.opts.ReadAfterWrite
}

// forgetWrites drops the writes older than the window, so the map holds only the callers
// that wrote recently.
func (rs *replicaSet) forgetWrites() {
	cutoff := rs.now().Add(-rs.opts.ReadAfterWrite)
	rs.mu.Lock()
	defer rs.mu.Unlock()
	for k, at := range rs.writes {
		if at.Before(cutoff) {
			delete(rs.writes, k)
		}
	}
}

// close stops the checks and releases every replica's pools.
func (rs *replicaSet) close() error {
	if rs.stop != nil {
		rs.stop()
		<-rs.done
	}
	var errs []error
	for _, r := range rs.replicas {
		if sqlDB, err := r.db.DB(); err == nil {
			errs = append(errs, sqlDB.Close())
		}
		errs = append(errs, r.check.Close())
	}
	return errors.Join(errs...)
}
