package migrate

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strings"
)

// On Vitess the migrations run on each shard's MySQL-protocol server directly, as
// Vitess's own "direct" DDL strategy does through vtgate, because vtgate's parser refuses
// what they hold besides tables: triggers (the counters, migrations 6, 9 and 12; the
// tombstones, 13) and backfills of one table from another. Each statement goes to every
// shard of the keyspace whose tables it names (vschema.json): a statement on a sharded
// table to every shard, which is right because every table there is placed by
// environment and no migration mixes environments; one on the unsharded keyspace, and
// goose's bookkeeping and the migration lock, to its one shard. A statement naming tables
// of both keyspaces, or of none the VSchema knows, is refused: a new table is placed in
// vschema.json before a migration may create it.
//
// shardRouter is that routing as a database/sql connector, so goose and the migration
// lock run on it unchanged.
type shardRouter struct {
	vschema VSchema
	// shards holds each keyspace's shards, in the order their names sort.
	shards map[string][]*sql.DB
	global string // the unsharded keyspace: bookkeeping and statements naming no table
	tables *regexp.Regexp
}

// Shards names each shard's database, for migrations on Vitess: "keyspace/shard" (as
// SHOW VITESS_SHARDS lists them) to a handle on that shard's MySQL-protocol server.
type Shards map[string]*sql.DB

// newShardRouter checks that shards covers every shard vtgate lists for the VSchema's
// keyspaces, and no other, and returns the router over them.
func newShardRouter(ctx context.Context, vtgate *sql.DB, v VSchema, shards Shards) (*shardRouter, error) {
	rows, err := vtgate.QueryContext(ctx, "SHOW VITESS_SHARDS")
	if err != nil {
		return nil, fmt.Errorf("list Vitess's shards: %w", err)
	}
	defer rows.Close()
	var listed []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, err
		}
		if ks, _, _ := strings.Cut(name, "/"); v[ks].Tables != nil {
			listed = append(listed, name)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	slices.Sort(listed)
	given := slices.Sorted(maps.Keys(shards))
	if !slices.Equal(listed, given) {
		return nil, fmt.Errorf("DATABASE_SHARD_URLS names shards %s, vtgate has %s: name each shard of keyspaces %s as keyspace/shard=mysql://…",
			strings.Join(given, ", "), strings.Join(listed, ", "), strings.Join(v.Keyspaces(), ", "))
	}
	r := &shardRouter{vschema: v, shards: map[string][]*sql.DB{}}
	for _, name := range given {
		ks, _, _ := strings.Cut(name, "/")
		r.shards[ks] = append(r.shards[ks], shards[name])
	}
	var names []string
	for ks, k := range v {
		if !k.Sharded {
			if r.global != "" {
				return nil, errors.New("vschema.json: more than one unsharded keyspace")
			}
			r.global = ks
		}
		for t := range k.Tables {
			names = append(names, regexp.QuoteMeta(t))
		}
		if len(r.shards[ks]) == 0 {
			return nil, fmt.Errorf("vtgate has no shard of keyspace %s", ks)
		}
	}
	if r.global == "" {
		return nil, errors.New("vschema.json: no unsharded keyspace for the migrations' bookkeeping")
	}
	slices.Sort(names)
	r.tables = regexp.MustCompile("(?i)`?\\b(" + strings.Join(names, "|") + ")\\b`?")
	return r, nil
}

// dropTrigger matches DROP TRIGGER, the one statement that names no table: a trigger is
// named after its table (messages_count_insert is on messages), which places it.
var dropTrigger = regexp.MustCompile("(?i)^\\s*DROP\\s+TRIGGER\\s+(?:IF\\s+EXISTS\\s+)?`?(\\w+)")

// TriggerTable returns the table a trigger is on by its name: the longest table of the
// VSchema its name begins with, followed by an underscore.
func (v VSchema) TriggerTable(trigger string) string {
	best := ""
	for _, ks := range v {
		for t := range ks.Tables {
			if strings.HasPrefix(strings.ToLower(trigger), t+"_") && len(t) > len(best) {
				best = t
			}
		}
	}
	return best
}

// headTable matches the table a statement writes or defines, which must be placed.
var headTable = regexp.MustCompile("(?i)^\\s*(?:(?:CREATE|ALTER|DROP|TRUNCATE)\\s+TABLE(?:\\s+IF(?:\\s+NOT)?\\s+EXISTS)?|INSERT(?:\\s+IGNORE)?\\s+INTO|REPLACE\\s+INTO|UPDATE|DELETE\\s+FROM|CREATE\\s+(?:UNIQUE\\s+)?INDEX\\s+`?\\w+`?\\s+ON|CREATE\\s+TRIGGER\\s+`?\\w+`?\\s+(?:BEFORE|AFTER)\\s+\\w+\\s+ON)\\s+`?(\\w+)`?")

// route returns the shards a statement runs on.
func (r *shardRouter) route(query string) ([]*sql.DB, error) {
	query = stripComments(query)
	if m := headTable.FindStringSubmatch(query); m != nil && r.vschema.KeyspaceOf(strings.ToLower(m[1])) == "" {
		return nil, fmt.Errorf("table %s is not in models/migrate/vschema.json: place it in a keyspace (sharded by environment_id, or unsharded) before a migration touches it", m[1])
	}
	keyspaces := map[string]bool{}
	for _, m := range r.tables.FindAllStringSubmatch(query, -1) {
		keyspaces[r.vschema.KeyspaceOf(strings.ToLower(m[1]))] = true
	}
	if m := dropTrigger.FindStringSubmatch(query); m != nil {
		table := r.vschema.TriggerTable(m[1])
		if table == "" {
			return nil, fmt.Errorf("trigger %s is not named after a table of vschema.json (table_…), so no shard is known to hold it", m[1])
		}
		keyspaces[r.vschema.KeyspaceOf(table)] = true
	}
	switch len(keyspaces) {
	case 0:
		// Goose's and the lock's own questions (the server's version, GET_LOCK).
		return r.shards[r.global], nil
	case 1:
		for ks := range keyspaces {
			return r.shards[ks], nil
		}
	}
	return nil, fmt.Errorf("a migration statement names tables of keyspaces %s at once, which no shard holds together: %.200s",
		strings.Join(slices.Sorted(maps.Keys(keyspaces)), " and "), query)
}

// notNames are the parts of a statement that name no table: comments and string
// literals ('messages-migrate:…' is the lock's name, not a table).
var notNames = regexp.MustCompile(`(?m)--[^\n]*$|/\*[\s\S]*?\*/|'(?:[^'\\]|\\.|'')*'`)

func stripComments(q string) string { return notNames.ReplaceAllString(q, " ") }

// Connect implements driver.Connector: a connection pins one connection of each shard it
// uses, so a session's state (GET_LOCK, a transaction) stays on it.
func (r *shardRouter) Connect(context.Context) (driver.Conn, error) {
	return &routerConn{r: r, conns: map[*sql.DB]*sql.Conn{}}, nil
}

// Driver implements driver.Connector.
func (r *shardRouter) Driver() driver.Driver { return routerDriver{} }

type routerDriver struct{}

func (routerDriver) Open(string) (driver.Conn, error) {
	return nil, errors.New("the shard router opens only through its connector")
}

type routerConn struct {
	r     *shardRouter
	conns map[*sql.DB]*sql.Conn
	order []*sql.DB // pinned shards in the order they were first used
	txs   map[*sql.DB]*sql.Tx
	inTx  bool
}

var (
	_ driver.ExecerContext     = (*routerConn)(nil)
	_ driver.QueryerContext    = (*routerConn)(nil)
	_ driver.ConnBeginTx       = (*routerConn)(nil)
	_ driver.NamedValueChecker = (*routerConn)(nil)
	_ driver.SessionResetter   = (*routerConn)(nil)
	_ driver.Validator         = (*routerConn)(nil)
)

// conn returns the connection pinned to shard, taking one first.
func (c *routerConn) conn(ctx context.Context, shard *sql.DB) (*sql.Conn, error) {
	if conn, ok := c.conns[shard]; ok {
		return conn, nil
	}
	conn, err := shard.Conn(ctx)
	if err != nil {
		return nil, err
	}
	c.conns[shard] = conn
	c.order = append(c.order, shard)
	return conn, nil
}

type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// on returns what runs a statement on shard: its transaction, when one is open.
func (c *routerConn) on(ctx context.Context, shard *sql.DB) (execer, error) {
	conn, err := c.conn(ctx, shard)
	if err != nil {
		return nil, err
	}
	if !c.inTx {
		return conn, nil
	}
	if tx, ok := c.txs[shard]; ok {
		return tx, nil
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	c.txs[shard] = tx
	return tx, nil
}

func (c *routerConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	shards, err := c.r.route(query)
	if err != nil {
		return nil, err
	}
	var affected int64
	for _, shard := range shards {
		e, err := c.on(ctx, shard)
		if err != nil {
			return nil, err
		}
		res, err := e.ExecContext(ctx, query, values(args)...)
		if err != nil {
			return nil, err
		}
		n, _ := res.RowsAffected()
		affected += n
	}
	return driver.RowsAffected(affected), nil
}

func (c *routerConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	shards, err := c.r.route(query)
	if err != nil {
		return nil, err
	}
	if len(shards) != 1 {
		return nil, fmt.Errorf("a migration reads a sharded table, which the migrations never do: %.200s", query)
	}
	e, err := c.on(ctx, shards[0])
	if err != nil {
		return nil, err
	}
	rows, err := e.QueryContext(ctx, query, values(args)...)
	if err != nil {
		return nil, err
	}
	return newRouterRows(rows)
}

func (c *routerConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if c.inTx {
		return nil, errors.New("a transaction is already open on this connection")
	}
	c.inTx, c.txs = true, map[*sql.DB]*sql.Tx{}
	return routerTx{c}, nil
}

// Begin implements driver.Conn; database/sql uses BeginTx.
func (c *routerConn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

// Prepare implements driver.Conn: statements run unprepared (ExecContext, QueryContext).
func (c *routerConn) Prepare(string) (driver.Stmt, error) {
	return nil, errors.New("the shard router does not prepare statements")
}

func (c *routerConn) Close() error {
	var errs []error
	for _, shard := range c.order {
		errs = append(errs, c.conns[shard].Close())
	}
	c.conns, c.order = map[*sql.DB]*sql.Conn{}, nil
	return errors.Join(errs...)
}

// CheckNamedValue passes every argument on to the shard's driver, which converts it.
func (c *routerConn) CheckNamedValue(*driver.NamedValue) error { return nil }

func (c *routerConn) ResetSession(context.Context) error { return nil }

func (c *routerConn) IsValid() bool { return true }

// routerTx ends a transaction on every shard it reached, in the order they were reached.
// Like vtgate's own cross-shard transactions it is not atomic across shards; the
// migrations' DDL commits implicitly on MySQL anyway.
type routerTx struct{ c *routerConn }

func (t routerTx) Commit() error { return t.end(func(tx *sql.Tx) error { return tx.Commit() }) }

func (t routerTx) Rollback() error { return t.end(func(tx *sql.Tx) error { return tx.Rollback() }) }

func (t routerTx) end(f func(*sql.Tx) error) error {
	c := t.c
	var errs []error
	for _, shard := range c.order {
		if tx, ok := c.txs[shard]; ok {
			errs = append(errs, f(tx))
		}
	}
	c.inTx, c.txs = false, nil
	return errors.Join(errs...)
}

func values(args []driver.NamedValue) []any {
	out := make([]any, len(args))
	for i, a := range args {
		out[i] = a.Value
	}
	return out
}

// routerRows hands a shard's rows on through the driver interface.
type routerRows struct {
	rows *sql.Rows
	cols []string
}

func newRouterRows(rows *sql.Rows) (*routerRows, error) {
	cols, err := rows.Columns()
	if err != nil {
		_ = rows.Close()
		return nil, err
	}
	return &routerRows{rows: rows, cols: cols}, nil
}

func (r *routerRows) Columns() []string { return r.cols }

func (r *routerRows) Close() error { return r.rows.Close() }

func (r *routerRows) Next(dest []driver.Value) error {
	if !r.rows.Next() {
		if err := r.rows.Err(); err != nil {
			return err
		}
		return io.EOF
	}
	vals := make([]any, len(dest))
	ptrs := make([]any, len(dest))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := r.rows.Scan(ptrs...); err != nil {
		return err
	}
	for i, v := range vals {
		dest[i] = v
	}
	return nil
}
