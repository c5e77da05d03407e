package store

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cespare/xxhash/v2"

	mysqldriver "github.com/go-sql-driver/mysql"
	"gorm.io/gorm"

	"messages/models/migrate"
)

// On Vitess a statement that names no environment (the change feed's poll, its reads of
// rows by id) is a scatter over every shard of the keyspace, and vtgate answers a
// scatter only once every shard has: with one shard down it fails, with one hung it
// waits. The feed polls each shard on its own instead (changefeed), through vtgate with
// the shard as the connection's target ("messages/-80", as USE names one), so the other
// shards' tenants get their events while one shard is out.

// shardKey carries, in a context, the handle of the shard the store's calls run on.
type shardKey struct{}

// shardPool is the size of each shard's own pool: the feed polls a shard from one
// goroutine at a time, and the background sweeps (eachShard) take one each; a hung shard
// holds these, never the store's pool.
const shardPool = 4

// shardHandles are the handles of single shards, by target, opened on first use: the
// store's own handle (its callbacks, its logger) over a pool of the shard's.
type shardHandles struct {
	mu    sync.Mutex
	db    map[string]*gorm.DB
	pools []*sql.DB
}

func (h *shardHandles) close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	var errs []error
	for _, pool := range h.pools {
		errs = append(errs, pool.Close())
	}
	h.db, h.pools = nil, nil
	return errors.Join(errs...)
}

// FeedShards names the shards the change feed polls one by one: on Vitess each shard of
// the keyspace holding messages ("messages/-80"), as vtgate lists them; elsewhere none,
// the whole database being one.
func (s *Store) FeedShards(ctx context.Context) ([]string, error) {
	if !s.vitess {
		return nil, nil
	}
	v, err := migrate.LoadVSchema()
	if err != nil {
		return nil, err
	}
	keyspace := v.KeyspaceOf("messages")
	var listed []string
	if err := s.db.WithContext(ctx).Raw("SHOW VITESS_SHARDS").Scan(&listed).Error; err != nil {
		return nil, fmt.Errorf("list Vitess's shards: %w", err)
	}
	var shards []string
	for _, name := range listed {
		if ks, _, _ := strings.Cut(name, "/"); ks == keyspace {
			shards = append(shards, name)
		}
	}
	if len(shards) == 0 {
		return nil, fmt.Errorf("vtgate lists no shard of keyspace %s", keyspace)
	}
	slices.Sort(shards)
	return shards, nil
}

// OnShard returns ctx whose store calls run on one shard of FeedShards, through vtgate,
// on that shard's own small pool. Only for statements every row of which lives on that
// shard: the feed's, which read rows by position or id and then their environments'.
func (s *Store) OnShard(ctx context.Context, shard string) (context.Context, error) {
	if !s.vitess {
		return nil, errors.New("OnShard: only Vitess has shards")
	}
	s.shards.mu.Lock()
	defer s.shards.mu.Unlock()
	db := s.shards.db[shard]
	if db == nil {
		pool, err := s.openShard(shard)
		if err != nil {
			return nil, err
		}
		// A session of its own (a context makes GORM copy the statement, which would
		// otherwise be the store's) whose connections are the shard's.
		db = s.db.Session(&gorm.Session{NewDB: true, Context: context.Background()})
		db.Config.ConnPool, db.Statement.ConnPool = pool, pool
		if s.shards.db == nil {
			s.shards.db = map[string]*gorm.DB{}
		}
		s.shards.db[shard] = db
		s.shards.pools = append(s.shards.pools, pool)
	}
	return context.WithValue(ctx, shardKey{}, db), nil
}

// openShard opens, without connecting, a pool of connections whose target is shard.
func (s *Store) openShard(shard string) (*sql.DB, error) {
	cfg, err := mysqldriver.ParseDSN(s.vtgateDSN)
	if err != nil {
		return nil, err
	}
	cfg.DBName = shard
	connector, err := mysqldriver.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	pool := sql.OpenDB(connector)
	pool.SetMaxOpenConns(shardPool)
	pool.SetMaxIdleConns(shardPool)
	pool.SetConnMaxLifetime(DefaultPool.ConnMaxLifetime)
	return pool, nil
}

// A shard that stops answering (a stalled disk, a partition) holds every connection its
// tenants' requests take until their deadline, and the store's pool is shared by every
// shard: the other shards' tenants would wait behind them. EnterShard is the bulkhead: a
// request takes one of its environment's shard's slots before it reads, and no shard has
// more slots than three quarters of the pool, so a hung shard's requests wait for their
// own slots while the others keep the rest of the pool.

// shardSlots are the shards' slots and the key ranges that place environments on them.
type shardSlots struct {
	mu     sync.Mutex
	ranges []keyRange // as vtgate listed them when last read
	read   time.Time  // when; zero: never
	failed time.Time  // when vtgate last could not list them
	slots  map[string]chan struct{}
}

// keyRange is one shard's range of keyspace ids: from start (included) to end
// (excluded), hex prefixes as a shard's name has them; empty is unbounded.
type keyRange struct {
	shard      string
	start, end []byte
}

// shardsReadEvery is how often the shard list is read again (a resharding adds shards).
const shardsReadEvery = time.Minute

// EnterShard takes a slot of the shard holding environmentID's rows, waiting for one
// while ctx lasts, and returns its release. Elsewhere than on Vitess, or while vtgate
// cannot list its shards, it takes nothing.
func (s *Store) EnterShard(ctx context.Context, environmentID string) (release func(), err error) {
	if !s.vitess {
		return func() {}, nil
	}
	slot := s.shardSlot(ctx, environmentID)
	if slot == nil {
		return func() {}, nil
	}
	select {
	case slot <- struct{}{}:
		return func() { <-slot }, nil
	default:
	}
	select {
	case slot <- struct{}{}:
		return func() { <-slot }, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("every slot of the environment's shard is taken by requests that wait for it: %w", context.Cause(ctx))
	}
}

// readShards reads the shard list again when it is older than shardsReadEvery (a
// second after vtgate could not list them); the caller holds sl.mu.
func (s *Store) readShards(ctx context.Context) {
	sl := &s.slots
	if time.Since(sl.read) < shardsReadEvery || time.Since(sl.failed) < time.Second {
		return
	}
	names, err := s.FeedShards(ctx)
	if err != nil {
		sl.failed = time.Now()
		return
	}
	sl.ranges, sl.read = keyRanges(names), time.Now()
}

// shardSlot returns the slots of environmentID's shard, nil when unknown.
func (s *Store) shardSlot(ctx context.Context, environmentID string) chan struct{} {
	sl := &s.slots
	sl.mu.Lock()
	defer sl.mu.Unlock()
	s.readShards(ctx)
	shard := shardOf(sl.ranges, environmentID)
	if shard == "" {
		return nil
	}
	slot := sl.slots[shard]
	if slot == nil {
		if sl.slots == nil {
			sl.slots = map[string]chan struct{}{}
		}
		sqlDB, err := s.db.DB()
		if err != nil {
			return nil
		}
		slot = make(chan struct{}, max(1, sqlDB.Stats().MaxOpenConnections*3/4))
		sl.slots[shard] = slot
	}
	return slot
}

// keyRanges reads shard names ("messages/-80", "messages/80-") as key ranges.
func keyRanges(names []string) []keyRange {
	var out []keyRange
	for _, name := range names {
		_, r, _ := strings.Cut(name, "/")
		start, end, ok := strings.Cut(r, "-")
		if !ok {
			continue
		}
		s, err1 := hex.DecodeString(start)
		e, err2 := hex.DecodeString(end)
		if err1 != nil || err2 != nil {
			continue
		}
		out = append(out, keyRange{shard: name, start: s, end: e})
	}
	return out
}

// shardOf returns the shard whose range holds environmentID's keyspace id: the xxhash
// vindex of vschema.json, which is XXH64 of the id's bytes, little-endian, as Vitess
// computes it.
func shardOf(ranges []keyRange, environmentID string) string {
	id := binary.LittleEndian.AppendUint64(nil, xxhash.Sum64String(environmentID))
	for _, r := range ranges {
		if (len(r.start) == 0 || bytes.Compare(id, r.start) >= 0) && (len(r.end) == 0 || bytes.Compare(id, r.end) < 0) {
			return r.shard
		}
	}
	return ""
}

// The background sweeps (ending snoozes, claiming bulk-change jobs, purging expired
// idempotency keys and old tombstones) look for rows of every environment. On Vitess
// each is a statement per shard (eachShard) rather than one scatter, which vtgate answers
// only once every shard has: a shard down or hung then holds up only its own tenants'.

// sweepShardTimeout bounds one shard's part of a sweep on Vitess: what it did not reach
// is done at the next.
const sweepShardTimeout = 3 * time.Second

// eachShard runs fn on every shard of the sharded keyspace at once on Vitess, its ctx
// targeting the shard (OnShard) and bounded by sweepShardTimeout; elsewhere it runs fn
// once with ctx. A shard that fails does not stop the others: their errors are joined,
// each naming its shard. fn must be safe to run concurrently with itself.
func (s *Store) eachShard(ctx context.Context, fn func(ctx context.Context) error) error {
	if !s.vitess {
		return fn(ctx)
	}
	s.slots.mu.Lock()
	s.readShards(ctx)
	ranges := s.slots.ranges
	s.slots.mu.Unlock()
	if len(ranges) == 0 {
		return errors.New("vtgate lists no shard")
	}
	errs := make([]error, len(ranges))
	var wg sync.WaitGroup
	for i, r := range ranges {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(ctx, sweepShardTimeout)
			defer cancel()
			ctx, err := s.OnShard(ctx, r.shard)
			if err == nil {
				err = fn(ctx)
			}
			if err != nil {
				errs[i] = fmt.Errorf("shard %s: %w", r.shard, err)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}
