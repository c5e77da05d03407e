package dbtest

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"messages/models/migrate"
	"messages/models/store"
)

// DialectVitess is a sharded Vitess deployment (`.ci/vitess up`): the store speaks
// MySQL to its vtgate, and migrations run on its shards. Each includes it when
// TEST_VITESS_URL names the vtgate (TEST_VITESS_SHARD_URLS the shards, as
// DATABASE_SHARD_URLS does); REQUIRE_VITESS=1 turns its absence into a failure.
//
// A deployment holds one schema (its keyspaces are fixed), so tests take turns on it
// rather than each getting a database of its own: URL waits for a lock that every test
// process on the machine shares, empties every table on every shard, and hands the
// deployment over until the test ends.
const DialectVitess = "vitess"

// eachDialect lists the databases Each runs on: Dialects, and Vitess when configured.
func eachDialect(t testing.TB) []string {
	t.Helper()
	if os.Getenv("TEST_VITESS_URL") != "" {
		return append(Dialects[:len(Dialects):len(Dialects)], DialectVitess)
	}
	if os.Getenv("REQUIRE_VITESS") == "1" {
		t.Fatal("REQUIRE_VITESS=1 but TEST_VITESS_URL is unset: start one with .ci/vitess up")
	}
	return Dialects
}

// vitessShards returns the shard URLs of TEST_VITESS_SHARD_URLS.
func vitessShards(t testing.TB) map[string]string {
	t.Helper()
	shards, err := store.ParseShardURLs(os.Getenv("TEST_VITESS_SHARD_URLS"))
	if err != nil {
		t.Fatal(err)
	}
	if len(shards) == 0 {
		t.Fatal("TEST_VITESS_SHARD_URLS is unset: set it to .ci/vitess shards")
	}
	return shards
}

// vitessURL hands the test the Vitess deployment, emptied, until it ends.
func vitessURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv("TEST_VITESS_URL")
	if u == "" {
		t.Fatal("TEST_VITESS_URL is unset: start a deployment with .ci/vitess up")
	}
	lockVitess(t)
	for name, shard := range vitessShards(t) {
		emptyShard(t, name, shard)
	}
	return u
}

// lockVitess takes the machine-wide lock on the deployment until the test ends.
func lockVitess(t testing.TB) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(os.TempDir(), "messages-vitess-tests.lock"), os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		_ = f.Close()
		t.Fatalf("lock the Vitess deployment: %v", err)
	}
	t.Cleanup(func() { _ = f.Close() }) // closing releases the lock
}

// keepSchema keeps a test that changed the deployment's schema (a dropped table or index,
// the fault it provoked) from handing that schema to the tests after it: it reads every
// shard's schema now, once the test's store is migrated, and again when the test ends,
// still holding the deployment; if they differ, it drops every table of every shard, and
// the next test's migrate creates them afresh.
func keepSchema(t testing.TB) {
	t.Helper()
	shards := vitessShards(t)
	before := map[string]string{}
	for name, u := range shards {
		before[name] = shardSchema(t, name, u)
	}
	t.Cleanup(func() {
		for name, u := range shards {
			if shardSchema(t, name, u) != before[name] {
				t.Logf("the test changed the schema of shard %s: every shard's tables are dropped, for the next test's migrate to create", name)
				for name, u := range shards {
					dropTables(t, name, u)
				}
				return
			}
		}
	})
}

// shardSchema describes one shard's schema, tables with their columns, indexes and
// triggers, as one string to compare.
func shardSchema(t testing.TB, name, shardURL string) string {
	t.Helper()
	db := openShard(t, shardURL)
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var b strings.Builder
	for _, q := range []string{
		"SELECT table_name, column_name, column_type, is_nullable, COALESCE(column_default, '') FROM information_schema.columns WHERE table_schema = DATABASE() ORDER BY table_name, ordinal_position",
		"SELECT table_name, index_name, column_name FROM information_schema.statistics WHERE table_schema = DATABASE() ORDER BY table_name, index_name, seq_in_index",
		"SELECT event_object_table, trigger_name, action_statement FROM information_schema.triggers WHERE trigger_schema = DATABASE() ORDER BY trigger_name",
	} {
		rows, err := db.QueryContext(ctx, q)
		if err != nil {
			t.Fatalf("read the schema of shard %s: %v", name, err)
		}
		for rows.Next() {
			var cols [5]sql.NullString
			ptrs := []any{&cols[0], &cols[1], &cols[2], &cols[3], &cols[4]}
			n, _ := rows.Columns()
			if err := rows.Scan(ptrs[:len(n)]...); err != nil {
				t.Fatal(err)
			}
			for _, c := range cols[:len(n)] {
				b.WriteString(c.String)
				b.WriteByte(0)
			}
			b.WriteByte('\n')
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			t.Fatalf("read the schema of shard %s: %v", name, err)
		}
	}
	return b.String()
}

// dropTables drops every table of one shard's database, the migrations' own too.
func dropTables(t testing.TB, name, shardURL string) {
	t.Helper()
	db := openShard(t, shardURL)
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, table := range shardTables(t, ctx, db, name) {
		if _, err := db.ExecContext(ctx, "DROP TABLE IF EXISTS "+quote(table)); err != nil {
			t.Fatalf("drop %s on shard %s: %v", table, name, err)
		}
	}
}

// emptyShard empties every table of one shard's database but the migrations' own, so
// the schema stays and the data goes.
func emptyShard(t testing.TB, name, shardURL string) {
	t.Helper()
	db := openShard(t, shardURL)
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, table := range shardTables(t, ctx, db, name) {
		if table == "goose_db_version" || table == "schema_migration_lock" {
			continue
		}
		if _, err := db.ExecContext(ctx, "TRUNCATE TABLE "+quote(table)); err != nil {
			t.Fatalf("empty %s on shard %s: %v", table, name, err)
		}
	}
	// A test may record a version no binary has (the refusal of a newer schema): the
	// next test gets the schema this binary migrated.
	if _, err := db.ExecContext(ctx, "DELETE FROM goose_db_version WHERE version_id > ?", migrate.Latest()); err != nil && !strings.Contains(err.Error(), "doesn't exist") {
		t.Fatalf("forget versions newer than this binary's on shard %s: %v", name, err)
	}
}

// openShard opens one shard's database directly; the caller closes it.
func openShard(t testing.TB, shardURL string) *sql.DB {
	t.Helper()
	dsn, err := store.MySQLDSN(shardURL)
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// shardTables lists the tables of one shard's database. An unreachable shard fails the
// test under REQUIRE_VITESS=1 or REQUIRE_MYSQL=1 and skips it otherwise.
func shardTables(t testing.TB, ctx context.Context, db *sql.DB, name string) []string {
	t.Helper()
	rows, err := db.QueryContext(ctx, "SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE() AND table_type = 'BASE TABLE'")
	if err != nil {
		if os.Getenv("REQUIRE_VITESS") == "1" || os.Getenv("REQUIRE_MYSQL") == "1" {
			t.Fatalf("Vitess shard %s is unreachable: %v", name, err)
		}
		t.Skipf("Vitess shard %s is unreachable (REQUIRE_VITESS=1 fails instead): %v", name, err)
	}
	var tables []string
	for rows.Next() {
		var table string
		if err := rows.Scan(&table); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, table)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		t.Fatal(err)
	}
	return tables
}

// quote quotes a table name for MySQL.
func quote(name string) string { return "`" + strings.ReplaceAll(name, "`", "``") + "`" }

// VitessCalls returns how many calls vtgate has made to each shard of the deployment so
// far, by call and shard ("Execute keyspace/shard"), from its counters at TEST_VITESS_VARS_URL
// (vtgate's /debug/vars): a test takes it before and after a request to see the shards
// the request reached.
func VitessCalls(t testing.TB) map[string]int64 {
	t.Helper()
	u := os.Getenv("TEST_VITESS_VARS_URL")
	if u == "" {
		t.Fatal("TEST_VITESS_VARS_URL is unset: set it to vtgate's /debug/vars (.ci/vitess vars)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("read vtgate's counters: %v", err)
	}
	defer resp.Body.Close()
	var vars struct {
		VttabletCall struct {
			Histograms map[string]struct{ Count int64 }
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&vars); err != nil {
		t.Fatalf("read vtgate's counters: %v", err)
	}
	out := map[string]int64{}
	// Keys are operation.keyspace.shard.tablet_type: Execute.messages.-80.primary.
	for key, h := range vars.VttabletCall.Histograms {
		parts := strings.Split(key, ".")
		if len(parts) != 4 {
			continue
		}
		out[parts[0]+" "+parts[1]+"/"+parts[2]] += h.Count
	}
	return out
}

// CallsSince returns the statements sent to each shard between two VitessCalls,
// leaving out shards that got none.
func CallsSince(before, after map[string]int64) map[string]int64 {
	out := map[string]int64{}
	for shard, n := range after {
		if d := n - before[shard]; d > 0 {
			out[shard] = d
		}
	}
	return out
}

// EachVitess runs f on the Vitess deployment, as Each's vitess subtest does, when
// TEST_VITESS_URL names one; REQUIRE_VITESS=1 fails without it.
func EachVitess(t *testing.T, f func(t *testing.T, s *store.Store), opts ...store.OpenOption) {
	t.Helper()
	if slices.Contains(eachDialect(t), DialectVitess) {
		t.Run(DialectVitess, func(t *testing.T) { f(t, Open(t, DialectVitess, opts...)) })
	}
}

// ShardDB opens one shard's database of the deployment directly, by "keyspace/shard".
func ShardDB(t testing.TB, shard string) *sql.DB {
	t.Helper()
	u, ok := vitessShards(t)[shard]
	if !ok {
		t.Fatalf("TEST_VITESS_SHARD_URLS names no shard %s", shard)
	}
	db := openShard(t, u)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// VitessShards lists the deployment's shards by "keyspace/shard".
func VitessShards(t testing.TB) []string {
	t.Helper()
	return slices.Sorted(maps.Keys(vitessShards(t)))
}

// ShardOf returns the shard ("messages/-80") that holds an environment's rows, as
// vtgate's own vindex places it.
func ShardOf(t testing.TB, s *store.Store, environmentID string) string {
	t.Helper()
	// A vindex answers as a table of its keyspace, on a connection targeting it.
	db, err := s.DB().DB()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = conn.Raw(func(any) error { return driver.ErrBadConn }) // not back to the pool
		_ = conn.Close()
	}()
	var shard string
	if _, err := conn.ExecContext(ctx, "USE messages"); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRowContext(ctx, "SELECT shard FROM environment WHERE id = ?", environmentID).Scan(&shard); err != nil {
		t.Fatal(err)
	}
	return "messages/" + shard
}

// VitessCtl runs vtctldclient against the deployment's vtctld, the command line of
// TEST_VITESS_CTL (`.ci/vitess ctl`) followed by args, and returns its output.
func VitessCtl(t testing.TB, args ...string) []byte {
	t.Helper()
	ctl := strings.Fields(os.Getenv("TEST_VITESS_CTL"))
	if len(ctl) == 0 {
		t.Fatal("TEST_VITESS_CTL is unset: set it to .ci/vitess ctl")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, ctl[0], append(ctl[1:], args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("vtctldclient %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}
