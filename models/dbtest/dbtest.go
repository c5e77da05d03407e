// Package dbtest gives tests a database to work on: a fresh, migrated one per test (a
// uniquely named database on the MySQL-compatible server of TEST_MYSQL_URL, or an SQLite
// file in a temporary folder, dropped when the test ends), fixtures and generated data to
// fill it, and a recorder of the statements a store runs. Every package's tests share it.
package dbtest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"messages/models/store"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql" // registers the "mysql" driver for creating databases
)

// DefaultMySQLURL is the server tests use when TEST_MYSQL_URL is unset.
const DefaultMySQLURL = "mysql://root@127.0.0.1:3306/"

// Dialects lists the databases every behavioural test runs on.
var Dialects = []string{store.DialectSQLite, store.DialectMySQL}

// MySQLServerURL returns the server URL tests use.
func MySQLServerURL() string {
	if u := os.Getenv("TEST_MYSQL_URL"); u != "" {
		return u
	}
	return DefaultMySQLURL
}

// URL returns the DATABASE_URL of a fresh, empty database of the given dialect. A MySQL
// database gets a unique name and is dropped in t.Cleanup. When the server is unreachable
// the test is skipped, unless REQUIRE_MYSQL=1, when it fails.
func URL(t testing.TB, dialect string) string {
	t.Helper()
	if dialect == store.DialectSQLite {
		return "sqlite:" + filepath.Join(t.TempDir(), "test.db")
	}
	if dialect == DialectVitess {
		return vitessURL(t)
	}
	server := MySQLServerURL()
	u, err := url.Parse(server)
	if err != nil {
		t.Fatalf("TEST_MYSQL_URL %q: %v", server, err)
	}
	dsn, err := store.MySQLDSN(server)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := admin.PingContext(ctx); err != nil {
		if os.Getenv("REQUIRE_MYSQL") == "1" {
			t.Fatalf("MySQL at %s is unreachable and REQUIRE_MYSQL=1: %v", u.Host, err)
		}
		t.Skipf("MySQL at %s is unreachable (set TEST_MYSQL_URL, or REQUIRE_MYSQL=1 to fail instead): %v", u.Host, err)
	}
	name := "msgtest_" + randomSuffix()
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE `"+name+"` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin"); err != nil {
		t.Fatalf("create test database: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := admin.ExecContext(ctx, "DROP DATABASE IF EXISTS `"+name+"`"); err != nil {
			t.Errorf("drop test database %s: %v", name, err)
		}
	})
	u.Path = "/" + name
	return u.String()
}

// Open returns a migrated store on a fresh database of the given dialect, opened with
// opts, closed in t.Cleanup.
func Open(t testing.TB, dialect string, opts ...store.OpenOption) *store.Store {
	t.Helper()
	u := URL(t, dialect)
	if dialect == DialectVitess {
		opts = append([]store.OpenOption{store.WithShardURLs(vitessShards(t))}, opts...)
	}
	s, err := store.Open(context.Background(), u, store.DefaultPool, opts...)
	if err != nil {
		t.Fatalf("open %s: %v", dialect, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if _, err := s.MigrateUp(context.Background()); err != nil {
		t.Fatalf("migrate %s: %v", dialect, err)
	}
	if dialect == DialectVitess {
		keepSchema(t)
	}
	return s
}

// Each runs f once per dialect as a subtest named after it, on a store opened with opts:
// Dialects, and Vitess when TEST_VITESS_URL names one (DialectVitess).
func Each(t *testing.T, f func(t *testing.T, s *store.Store), opts ...store.OpenOption) {
	t.Helper()
	for _, d := range eachDialect(t) {
		t.Run(d, func(t *testing.T) { f(t, Open(t, d, opts...)) })
	}
}

// MarkHooks are what tests run inside marks' transactions, by message id: a store opened
// with store.WithMarkHook(h.Run) runs them.
type MarkHooks struct{ hooks sync.Map }

// Set makes every mark of messageID run fn until remove is called.
func (h *MarkHooks) Set(messageID string, fn func(ctx context.Context) error) (remove func()) {
	h.hooks.Store(messageID, fn)
	return func() { h.hooks.Delete(messageID) }
}

// Run is the store's hook: it runs the function set for messageID, if any.
func (h *MarkHooks) Run(ctx context.Context, messageID string) error {
	fn, ok := h.hooks.Load(messageID)
	if !ok {
		return nil
	}
	return fn.(func(ctx context.Context) error)(ctx)
}

func randomSuffix() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%d_%s", time.Now().Unix(), strings.ToLower(hex.EncodeToString(b[:])))
}
