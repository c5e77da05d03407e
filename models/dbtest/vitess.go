package dbtest

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

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

// emptyShard empties every table of one shard's database but the migrations' own, so
// the schema stays and the data goes.
func emptyShard(t testing.TB, name, shardURL string) {
	t.Helper()
	dsn, err := store.MySQLDSN(shardURL)
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
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
		if table != "goose_db_version" && table != "schema_migration_lock" {
			tables = append(tables, table)
		}
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	for _, table := range tables {
		if _, err := db.ExecContext(ctx, fmt.Sprintf("TRUNCATE TABLE `%s`", strings.ReplaceAll(table, "`", "``"))); err != nil {
			t.Fatalf("empty %s on shard %s: %v", table, name, err)
		}
	}
}
