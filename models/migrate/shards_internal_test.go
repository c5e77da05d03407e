package migrate

import (
	"database/sql"
	"io/fs"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// testRouter is a router over placeholder shards: two for each sharded keyspace, one for
// the unsharded one.
func testRouter(t *testing.T) (*shardRouter, map[*sql.DB]string) {
	t.Helper()
	v, err := LoadVSchema()
	if err != nil {
		t.Fatal(err)
	}
	r := &shardRouter{vschema: v, shards: map[string][]*sql.DB{}}
	names := map[*sql.DB]string{}
	var tables []string
	for ks, k := range v {
		n := 1
		if k.Sharded {
			n = 2
		} else {
			r.global = ks
		}
		for i := range n {
			db := new(sql.DB)
			names[db] = ks + "/" + string(rune('a'+i))
			r.shards[ks] = append(r.shards[ks], db)
		}
		for table := range k.Tables {
			tables = append(tables, regexp.QuoteMeta(table))
		}
	}
	r.tables = regexp.MustCompile("(?i)`?\\b(" + strings.Join(tables, "|") + ")\\b`?")
	return r, names
}

// statements splits a migration file as goose does: statements end with a semicolon at
// the end of a line, except between StatementBegin and StatementEnd.
func statements(sql string) []string {
	var out []string
	var cur strings.Builder
	block := false
	for line := range strings.Lines(sql) {
		trimmed := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(trimmed, "-- +goose StatementBegin"):
			block = true
			continue
		case strings.HasPrefix(trimmed, "-- +goose StatementEnd"):
			block = false
			out = append(out, cur.String())
			cur.Reset()
			continue
		case strings.HasPrefix(trimmed, "--") && cur.Len() == 0:
			continue
		}
		cur.WriteString(line)
		if !block && strings.HasSuffix(trimmed, ";") {
			out = append(out, cur.String())
			cur.Reset()
		}
	}
	return out
}

// Every statement of every migration, up and down, runs on the shards of exactly one
// keyspace: the one holding its tables, all of them for a sharded one.
func TestEveryMigrationStatementIsRouted(t *testing.T) {
	r, names := testRouter(t)
	files, err := fs.Glob(migrations, "migrations/mysql/*.sql")
	if err != nil || len(files) == 0 {
		t.Fatalf("no migrations: %v", err)
	}
	seen := map[string]bool{}
	for _, f := range files {
		body, err := fs.ReadFile(migrations, f)
		if err != nil {
			t.Fatal(err)
		}
		for _, stmt := range statements(string(body)) {
			shards, err := r.route(stmt)
			if err != nil {
				t.Errorf("%s: %v", f, err)
				continue
			}
			var got []string
			for _, db := range shards {
				got = append(got, names[db])
			}
			slices.Sort(got)
			seen[strings.Join(got, ",")] = true
			if strings.Contains(strings.ToUpper(stmt), "TRIGGER") && !slices.Equal(got, []string{"messages/a", "messages/b"}) {
				t.Errorf("%s: a trigger statement runs on %v, want every shard of messages: %.80s", f, got, stmt)
			}
		}
	}
	if !seen["messages/a,messages/b"] || !seen["messages_global/a"] {
		t.Errorf("the migrations reached %v, want both keyspaces", seen)
	}
}

func TestRouteRefusesWhatNoShardHolds(t *testing.T) {
	r, _ := testRouter(t)
	for _, stmt := range []string{
		"CREATE TABLE unplaced (id INT PRIMARY KEY)",
		"ALTER TABLE unplaced ADD COLUMN x INT",
		"INSERT INTO unplaced SELECT * FROM messages",
		"INSERT INTO environments (id) SELECT environment_id FROM messages",
		"DROP TRIGGER nobody_insert",
	} {
		if shards, err := r.route(stmt); err == nil {
			t.Errorf("%s: routed to %d shards, want it refused", stmt, len(shards))
		}
	}
	for stmt, want := range map[string]int{
		"SELECT GET_LOCK(LEFT(CONCAT('messages-migrate:', DATABASE()), 64), 5)": 1,
		"DROP TRIGGER messages_count_insert":                                    2,
		"INSERT INTO goose_db_version (version_id, is_applied) VALUES (?, ?)":   1,
		"UPDATE messages SET `read` = 0 -- environments":                        2,
	} {
		if shards, err := r.route(stmt); err != nil || len(shards) != want {
			t.Errorf("%s: %d shards (%v), want %d", stmt, len(shards), err, want)
		}
	}
}
