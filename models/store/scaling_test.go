package store_test

// The checks behind docs/scaling.md: what a sharded MySQL-protocol engine (Vitess, TiDB)
// with the environment id as shard key needs from the schema and the queries.

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"messages/models"
	"messages/models/dbtest"
	"messages/models/jsonl"
	"messages/models/store"
)

// shardKey is the column that names a row's environment: environments are keyed by their
// own id, every other table by environment_id.
func shardKey(table string) string {
	if table == "environments" {
		return "id"
	}
	return "environment_id"
}

// scatter is a statement docs/scaling.md lists as reaching every shard: it matches SQL
// and belongs to op.
type scatter struct {
	op     string
	sql    *regexp.Regexp
	reason string
	// vitess, when set, is whether the statement is Vitess's form (true) or the one
	// every other engine runs (false).
	vitess *bool
}

var onVitess, offVitess = new(true), new(false)

// scatters are the documented exceptions, and the only ones: each must still occur.
var scatters = []scatter{
	{"auth", regexp.MustCompile(`where api_keys\.hash = \?`), "an API key is found by its hash before its environment is known", nil},
	{"import", regexp.MustCompile(`^select id, environment_id from (subscribers|templates|messages) where id in \(`), "import refuses ids another environment already holds", nil},
	{"import", regexp.MustCompile(`^select id from message_deletions where id in \(.*\) and \(?not exists \(select 1 from messages where messages\.id = message_deletions\.id and messages\.environment_id = message_deletions\.environment_id\)`), "import leaves out the messages deleted since its file was written, found by id", nil},
	{"purge", regexp.MustCompile(`^delete from idempotency_keys where expires_at <= \?`), "expired keys of every environment are purged together, on Vitess shard by shard", nil},
	{"apikey list", regexp.MustCompile(`^select \* from api_keys order by created_at, id$`), "the admin listing of every key", nil},
	{"apikey revoke", regexp.MustCompile(`^update api_keys set revoked_at=\? where id = \? and revoked_at is null$`), "the admin revokes a key by its id", nil},
	{"feed", regexp.MustCompile(`^select id, changed_at from \(select id, changed_at from messages order by changed_at desc, id desc limit 1\) as live union all select id, changed_at from \(select id, deleted_at as changed_at from message_deletions order by deleted_at desc, id desc limit 1\) as gone$`), "the change feed starts from the newest change or deletion of every environment", offVitess},
	{"feed", regexp.MustCompile(`^select id, changed_at, deleted from \(select id, changed_at, 0 as deleted from messages where changed_at >= \?.* union all select id, changed_at, deleted from \(select id, deleted_at as changed_at, 1 as deleted from message_deletions where deleted_at >= \?`), "the change feed's poll reads every environment's changes and deletions at once, once per interval per instance", offVitess},
	{"feed", regexp.MustCompile(`^select id, (changed_at|deleted_at as changed_at) from (messages|message_deletions) order by (changed_at|deleted_at) desc, id desc limit 1$`), "on Vitess the change feed's start is two statements (vtgate plans their union wrongly)", onVitess},
	{"feed", regexp.MustCompile(`^select id, (changed_at, 0|deleted_at as changed_at, 1) as deleted from (messages|message_deletions) where (changed_at|deleted_at) >= \?`), "on Vitess the change feed's poll is two statements, merged by the server", onVitess},
	{"feed", regexp.MustCompile(`^select messages\.id, .* from messages left join subscribers s on .* left join templates t on .* where messages\.id in \(.*\)$`), "the change feed loads the changed rows of every environment by id", nil},
}

// unsharded are the tables that are not a tenant's: on a sharded engine they live in an
// unsharded keyspace (Vitess) or as ordinary small tables (TiDB), and their statements
// name no environment.
var unsharded = map[string]string{
	"change_holds": "holds of long-running writers (import), read by every instance's change feed",
}

var (
	insertColumns = regexp.MustCompile(`^insert into (\w+) \(([^)]*)\)`)
	tableRef      = regexp.MustCompile(`\b(?:from|update|join|into)\s+(\w+)`)
	keyEquality   = regexp.MustCompile(`\b(?:\w+\.)?(\w+) (?:= \?|in \()`)
	colocatedJoin = regexp.MustCompile(`\bleft join \w+ (\w+) on \w+\.\w+ = \w+\.\w+ and (\w+)\.environment_id = \w+\.environment_id\b`)
	// colocatedSubquery is a scalar subquery reading a row of the outer row's environment
	// by key, as a colocated join does.
	colocatedSubquery = regexp.MustCompile(`\(select \w+\.\w+ from \w+ (\w+) where \w+\.\w+ = \w+\.\w+ and (\w+)\.environment_id = \w+\.environment_id\)`)
)

// normalizeSQL lowercases a statement and drops identifier quotes, so one pattern fits
// both dialects.
func normalizeSQL(sql string) string {
	sql = strings.NewReplacer("`", "", `"`, "", "\n", " ").Replace(strings.ToLower(sql))
	return strings.Join(strings.Fields(sql), " ")
}

// carriesShardKey reports whether a statement names its rows' environment: an INSERT
// writes the shard key column, anything else constrains it by equality in every WHERE
// (the mark's subquery has its own).
func carriesShardKey(sql string) bool {
	if m := insertColumns.FindStringSubmatch(sql); m != nil {
		for _, c := range strings.Split(m[2], ",") {
			if strings.TrimSpace(c) == shardKey(m[1]) {
				return true
			}
		}
		return false
	}
	// A table joined, or read by a scalar subquery, on the same environment as the row it
	// belongs to is on that row's shard: it needs no WHERE of its own.
	sql = colocatedJoin.ReplaceAllString(sql, "")
	sql = colocatedSubquery.ReplaceAllString(sql, "")
	refs := tableRef.FindAllStringSubmatch(sql, -1)
	wheres := strings.Split(sql, " where ")[1:]
	if len(wheres) < len(refs) {
		return false // a table read with no WHERE of its own
	}
	for i, where := range wheres {
		key := shardKey(refs[min(i, len(refs)-1)][1])
		found := false
		for _, m := range keyEquality.FindAllStringSubmatch(where, -1) {
			if m[1] == key {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// onlyUnsharded reports whether every table a statement touches is unsharded.
func onlyUnsharded(sql string) bool {
	for _, m := range tableRef.FindAllStringSubmatch(sql, -1) {
		if _, ok := unsharded[m[1]]; !ok {
			return false
		}
	}
	return true
}

func TestCarriesShardKey(t *testing.T) {
	tests := []struct {
		sql  string
		want bool
	}{
		{"SELECT id FROM `messages` WHERE environment_id = ? AND channel = ? ORDER BY created_at DESC", true},
		{"SELECT messages.*, s.id AS s__id FROM `messages` JOIN (SELECT `id` FROM `messages` WHERE environment_id = ? LIMIT ?) AS picked ON picked.id = messages.id LEFT JOIN subscribers s ON s.id = messages.subscriber_id AND s.environment_id = messages.environment_id WHERE messages.environment_id = ?", true},
		{"SELECT messages.*, s.id AS s__id FROM `messages` JOIN (SELECT `id` FROM `messages` WHERE environment_id = ? LIMIT ?) AS picked ON picked.id = messages.id LEFT JOIN subscribers s ON s.id = messages.subscriber_id WHERE messages.environment_id = ?", false},
		{"SELECT messages.id, (SELECT s.changed_at FROM subscribers s WHERE s.id = messages.subscriber_id AND s.environment_id = messages.environment_id) AS subscriber_version FROM `messages` WHERE environment_id = ? ORDER BY created_at DESC, id DESC LIMIT ?", true},
		{"SELECT messages.id, (SELECT s.changed_at FROM subscribers s WHERE s.id = messages.subscriber_id) AS subscriber_version FROM `messages` WHERE environment_id = ? ORDER BY created_at DESC, id DESC LIMIT ?", false},
		{"SELECT count(*) FROM `environments` WHERE id = ?", true},
		{"UPDATE messages SET a = ? WHERE id = ? AND environment_id = ?\n AND subscriber_id = (SELECT id FROM subscribers WHERE environment_id = ? AND subscriber_id = ?)", true},
		{"UPDATE messages SET a = ? WHERE id = ? AND environment_id = ? AND subscriber_id = (SELECT id FROM subscribers WHERE subscriber_id = ?)", false},
		{"SELECT * FROM `messages` WHERE id IN (?,?)", false},
		{"SELECT * FROM `api_keys` ORDER BY created_at", false},
		{"INSERT INTO `idempotency_keys` (`environment_id`,`idempotency_key`) VALUES (?,?)", true},
		{"INSERT INTO `messages` (`id`,`subject`) VALUES (?,?)", false},
	}
	for _, tt := range tests {
		if got := carriesShardKey(normalizeSQL(tt.sql)); got != tt.want {
			t.Errorf("carriesShardKey(%q) = %v, want %v", tt.sql, got, tt.want)
		}
	}
}

// Every statement the store issues for a tenant's list, count, mark, export, import and
// idempotency keys names the tenant's environment, so a sharded engine routes it to one
// shard; the only statements that do not are the documented scatters.
func TestEveryTenantStatementCarriesEnvironmentID(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		tn := dbtest.NewTenant(t, s, "sharded")
		env := tn.Env.ID
		alice, bob := tn.Subscriber(t, "alice"), tn.Subscriber(t, "bob")
		tpl := tn.Template(t, "welcome")
		var msgs []*models.Message
		for i := range 5 {
			sub := alice
			if i%2 == 1 {
				sub = bob
			}
			msgs = append(msgs, tn.Message(t, sub, tpl, nil))
		}
		var exported bytes.Buffer
		if _, err := jsonl.Export(ctx, s, env, &exported, nil); err != nil {
			t.Fatal(err)
		}

		log := dbtest.RecordStatements(t, s)
		channel, subscriber := models.ChannelInApp, "alice"
		page := models.Page{Number: 0, Size: 2}
		ops := []struct {
			name string
			run  func() error
		}{
			{"list", func() error {
				for _, f := range []models.ListFilter{
					{}, {Channel: &channel}, {SubscriberID: &subscriber}, {SubscriberID: &subscriber, Channel: &channel},
					{TransactionIDs: []string{msgs[0].TransactionID, msgs[1].TransactionID}},
				} {
					if _, err := s.ListMessages(ctx, env, f, page, models.Everything); err != nil {
						return err
					}
					// The cursor walk: a first page, then the page after its last message.
					first, err := s.MessagesAfter(ctx, env, f, nil, 1, models.Everything)
					if err != nil {
						return err
					}
					if len(first.Messages) > 0 {
						after := models.KeysetOf(first.Messages[0])
						if _, err := s.MessagesAfter(ctx, env, f, &after, 1, models.Everything); err != nil {
							return err
						}
					}
				}
				return nil
			}},
			{"count", func() error {
				// A first page with more after it needs the count query: the counter rows,
				// or COUNT with transaction ids.
				for _, f := range []models.ListFilter{
					{}, {Channel: &channel}, {SubscriberID: &subscriber}, {SubscriberID: &subscriber, Channel: &channel},
					{TransactionIDs: []string{msgs[0].TransactionID, msgs[1].TransactionID, msgs[2].TransactionID}},
				} {
					if _, err := s.ListMessages(ctx, env, f, page, models.ListOptions{Count: true}); err != nil {
						return err
					}
				}
				p, err := s.ListMessages(ctx, env, models.ListFilter{}, page, models.ListOptions{Count: true})
				if err == nil && p.TotalCount != len(msgs) {
					t.Errorf("count = %d, want %d", p.TotalCount, len(msgs))
				}
				return err
			}},
			{"mark", func() error {
				// As /v1 marks with an Idempotency-Key: claim, mark, store the response, in
				// one transaction; then the replay finds the stored response.
				for range 2 {
					k := models.IdempotencyKey{EnvironmentID: env, Key: "mark-1", Fingerprint: strings.Repeat("a", 64), CreatedAt: time.Now(), ExpiresAt: time.Now().Add(time.Hour)}
					err := s.Transaction(ctx, func(ctx context.Context) error {
						existing, err := s.ClaimIdempotencyKey(ctx, &k, time.Second)
						if err != nil || existing != nil {
							return err
						}
						if _, err := s.MarkMessageAction(ctx, env, models.MarkAction{SubscriberID: "alice", MessageID: msgs[0].ID,
							Type: models.ButtonPrimary, Status: models.ActionDone, Payload: models.JSON(`{"ok":true}`)}); err != nil {
							return err
						}
						k.Status, k.ContentType, k.Body = 201, "application/json", []byte("{}")
						return s.CompleteIdempotencyKey(ctx, &k)
					})
					if err != nil {
						return err
					}
				}
				return nil
			}},
			{"export", func() error {
				_, err := jsonl.Export(ctx, s, env, &bytes.Buffer{}, nil)
				return err
			}},
			{"import", func() error {
				_, err := jsonl.Import(ctx, s, bytes.NewReader(exported.Bytes()), nil)
				return err
			}},
			{"auth", func() error {
				_, err := s.Authenticate(ctx, tn.Key)
				return err
			}},
			{"purge", func() error {
				_, err := s.PurgeIdempotencyKeys(ctx, time.Now().Add(48*time.Hour))
				return err
			}},
			{"apikey list", func() error {
				_, err := s.ListAPIKeys(ctx, "")
				return err
			}},
			{"apikey revoke", func() error { return s.RevokeAPIKey(ctx, tn.Caller.KeyID) }},
			{"feed", func() error {
				// What one instance's change feed runs: start, poll, load, and a
				// subscription's resumption, which is the environment's.
				latest, err := s.LatestChange(ctx)
				if err != nil {
					return err
				}
				ps, err := s.ChangedSince(ctx, latest.At.Add(-time.Hour), nil, 100)
				if err != nil || len(ps) == 0 {
					return fmt.Errorf("no changes read (%v)", err)
				}
				if _, err := s.ChangedMessages(ctx, []string{ps[0].ID}); err != nil {
					return err
				}
				subscriber := "alice"
				f := models.ChangeFilter{EnvironmentID: env, SubscriberID: &subscriber}
				if _, err := s.MessageChanges(ctx, f, latest.At.Add(-time.Hour), models.Position{}, 10); err != nil {
					return err
				}
				_, _, err = s.OldestHold(ctx)
				return err
			}},
		}

		used := map[int]bool{}
		for _, op := range ops {
			log.Take()
			var before map[string]int64
			if s.Vitess() {
				before = dbtest.VitessCalls(t)
			}
			if err := op.run(); err != nil {
				t.Fatalf("%s: %v", op.name, err)
			}
			if s.Vitess() {
				checkShardsReached(t, op.name, dbtest.CallsSince(before, dbtest.VitessCalls(t)))
			}
			statements := log.Take()
			tables := 0
			for _, st := range statements {
				sql := normalizeSQL(st.SQL)
				if !tableRef.MatchString(sql) {
					continue // session settings: no rows involved
				}
				tables++
				if carriesShardKey(sql) || onlyUnsharded(sql) {
					continue
				}
				exception := -1
				for i, sc := range scatters {
					if sc.op == op.name && sc.sql.MatchString(sql) {
						exception = i
					}
				}
				if exception < 0 {
					t.Errorf("%s: a statement does not name the environment, so it would reach every shard:\n%s", op.name, st.SQL)
					continue
				}
				used[exception] = true
			}
			if tables == 0 {
				t.Errorf("%s: no statement recorded", op.name)
			}
		}
		for i, sc := range scatters {
			if sc.vitess != nil && *sc.vitess != s.Vitess() {
				continue
			}
			if !used[i] {
				t.Errorf("documented scatter of %s (%s) no longer occurs: update docs/scaling.md and this list", sc.op, sc.reason)
			}
		}
	})
}

// scatterOps are the operations that reach every shard of the sharded keyspace on Vitess,
// as docs/scaling.md lists them: import's check of ids held elsewhere, the purge of
// expired keys, the change feed. Authentication and the key admin read the unsharded
// keyspace only.
var scatterOps = map[string]bool{"import": true, "purge": true, "feed": true}

// checkShardsReached fails an operation that vtgate sent to more than one shard of the
// sharded keyspace, unless it is a documented scatter, which must reach all of them.
func checkShardsReached(t *testing.T, op string, calls map[string]int64) {
	t.Helper()
	var sharded []string
	for call := range calls {
		if _, shard, _ := strings.Cut(call, " "); strings.HasPrefix(shard, "messages/") && !slices.Contains(sharded, shard) {
			sharded = append(sharded, shard)
		}
	}
	slices.Sort(sharded)
	switch {
	case scatterOps[op] && len(sharded) < 2:
		t.Errorf("%s: reached shards %v, documented as a scatter over every shard", op, calls)
	case !scatterOps[op] && len(sharded) > 1:
		t.Errorf("%s: vtgate sent it to %v (calls per shard: %v), want one shard", op, sharded, calls)
	}
}

// No table of the service numbers its rows: ids are minted by the application, so shards
// never need a shared sequence. Goose's own bookkeeping table is the one exception.
func TestNoAutoIncrement(t *testing.T) {
	t.Parallel()
	for _, dir := range []string{"../migrate/migrations/mysql", "../migrate/migrations/sqlite"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.sql"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no migrations in %s (%v)", dir, err)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if m := regexp.MustCompile(`(?i)auto_?increment|\bserial\b|\bidentity\b`).Find(b); m != nil {
				t.Errorf("%s uses %s", f, m)
			}
		}
	}
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		var tables []string
		for _, table := range tableNames(t, s) {
			q := "SELECT DISTINCT table_name FROM information_schema.columns WHERE table_schema = " + schemaOf(t, s, table) + " AND table_name = ? AND extra LIKE '%auto_increment%'"
			if s.Dialect() == store.DialectSQLite {
				// SQLite records every AUTOINCREMENT table in sqlite_sequence once it has a row.
				q = "SELECT name FROM sqlite_sequence WHERE name = ?"
			}
			var some []string
			if err := s.DB().Raw(q, table).Scan(&some).Error; err != nil {
				t.Fatal(err)
			}
			tables = append(tables, some...)
		}
		if diff := cmp.Diff([]string{versionTable}, tables); diff != "" {
			t.Errorf("tables with AUTO_INCREMENT (-want +got):\n%s", diff)
		}
	})
}

// The keys and indexes docs/scaling.md describes table by table: what each primary and
// unique key holds (a sharded engine enforces uniqueness per shard, or needs the shard
// key in every unique key to partition), and that every secondary index a tenant's
// query uses starts with the environment.
func TestKeysAndIndexesForSharding(t *testing.T) {
	t.Parallel()
	want := map[string][]string{
		"environments": {"PRIMARY unique (id)", "environments_application_identifier unique (application_identifier)"},
		"api_keys":     {"PRIMARY unique (id)", "api_keys_environment (environment_id)", "api_keys_hash unique (hash)"},
		"subscribers":  {"PRIMARY unique (id)", "subscribers_environment_subscriber unique (environment_id, subscriber_id)"},
		"templates":    {"PRIMARY unique (id)", "templates_environment (environment_id)"},
		"messages": {
			"PRIMARY unique (id)",
			"messages_changed (changed_at, id)",
			"messages_environment_changed (environment_id, changed_at, id)",
			"messages_environment_channel_created (environment_id, channel, created_at, id)",
			"messages_environment_created (environment_id, created_at, id)",
			"messages_environment_subscriber_changed (environment_id, subscriber_id, changed_at, id)",
			"messages_environment_subscriber_channel_created (environment_id, subscriber_id, channel, created_at, id, template_id, read, seen, archived, snoozed_until, severity)",
			"messages_environment_subscriber_created (environment_id, subscriber_id, created_at, id)",
			"messages_environment_transaction_created (environment_id, transaction_id, created_at, id)",
			"messages_inbox (environment_id, subscriber_id, channel, archived, created_at, id, read, seen)",
			"messages_snoozed_until (snoozed_until)",
		},
		"idempotency_keys": {"PRIMARY unique (environment_id, idempotency_key)", "idempotency_keys_expires (expires_at)"},
		"change_holds":     {"PRIMARY unique (id)", "change_holds_started (started_at)"},
		"message_counts":   {"PRIMARY unique (shard, environment_id, subscriber_id, channel, state)"},
		"message_workflow_counts": {
			"PRIMARY unique (environment_id, shard, subscriber_id, channel, template_id, created_month, state)",
		},
		"message_deletions": {
			"PRIMARY unique (id)",
			"message_deletions_deleted (deleted_at, id)",
			"message_deletions_environment (environment_id, deleted_at, id)",
			"message_deletions_environment_subscriber (environment_id, subscriber_id, deleted_at, id)",
		},
		// Global, not a tenant's: unsharded on a sharded deployment (docs/scaling.md).
		"trusted_documents": {"PRIMARY unique (id)", "trusted_documents_sha256 (sha256)"},
		"state_jobs": {
			"PRIMARY unique (id)",
			"state_jobs_lease (lease_until)",
			"state_jobs_subscriber (environment_id, subscriber_id, created_at, id)",
		},
	}
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		got := map[string][]string{}
		for _, table := range tableNames(t, s) {
			if table == versionTable {
				continue
			}
			var desc []string
			for _, ix := range tableIndexes(t, s, table) {
				name := ix.Name
				if ix.Primary {
					name = "PRIMARY"
				}
				if ix.Unique {
					name += " unique"
				}
				desc = append(desc, name+" ("+strings.Join(ix.Columns, ", ")+")")
				// messages_changed is the change feed's, messages_snoozed_until the snooze
				// sweep's: docs/scaling.md, "Live events" and "Inbox state".
				if table == "messages" && !ix.Primary && ix.Columns[0] != "environment_id" &&
					ix.Name != "messages_changed" && ix.Name != "messages_snoozed_until" {
					t.Errorf("messages index %s starts with %s: every secondary index of messages must start with environment_id", ix.Name, ix.Columns[0])
				}
			}
			// The primary key first, then by name.
			slices.SortFunc(desc, func(a, b string) int {
				return strings.Compare(strings.Replace(a, "PRIMARY", "", 1), strings.Replace(b, "PRIMARY", "", 1))
			})
			got[table] = desc
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("keys and indexes differ from docs/scaling.md (-documented +migrated):\n%s", diff)
		}
	})
}

// instances opens n stores on one fresh, migrated database, as n servers behind a load
// balancer would.
func instances(t *testing.T, dialect string, n int, opts ...store.OpenOption) []*store.Store {
	t.Helper()
	url := dbtest.URL(t, dialect)
	stores := make([]*store.Store, n)
	for i := range stores {
		s, err := store.Open(context.Background(), url, store.DefaultPool, opts...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		if err := s.Migrate(context.Background()); err != nil {
			t.Fatal(err)
		}
		stores[i] = s
	}
	return stores
}

// Idempotency keys live in the database: a request retried on another instance replays
// the response the first instance stored.
func TestIdempotencyReplaysAcrossInstances(t *testing.T) {
	t.Parallel()
	for _, dialect := range dbtest.Dialects {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			stores := instances(t, dialect, 2)
			env := dbtest.NewTenant(t, stores[0], "a").Env.ID
			now := time.Now().UTC().Truncate(time.Millisecond)
			k := models.IdempotencyKey{EnvironmentID: env, Key: "retry-1", Fingerprint: strings.Repeat("f", 64), CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
			first := k
			if got := claim(t, stores[0], first, &models.IdempotencyKey{Status: 201, ContentType: "application/json", Body: []byte(`{"ok":1}`)}); got != nil {
				t.Fatalf("first claim found %+v", got)
			}
			got := claim(t, stores[1], k, nil)
			if got == nil || got.Status != 201 || string(got.Body) != `{"ok":1}` {
				t.Fatalf("the other instance found %+v, want the stored 201", got)
			}
		})
	}
}

// totalCount lives in the database, kept in each write's transaction: two instances see
// the same exact count at once, whichever of them (or neither) wrote.
func TestCountsAreTheSameOnEveryInstance(t *testing.T) {
	t.Parallel()
	for _, dialect := range dbtest.Dialects {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			stores := instances(t, dialect, 2)
			tn := dbtest.NewTenant(t, stores[0], "a")
			sub, tpl := tn.Subscriber(t, "s"), tn.Template(t, "t")
			for range 3 {
				tn.Message(t, sub, tpl, nil)
			}
			count := func(s *store.Store) int {
				t.Helper()
				p, err := s.ListMessages(context.Background(), tn.Env.ID, models.ListFilter{}, models.Page{Size: 1}, models.ListOptions{Count: true})
				if err != nil {
					t.Fatal(err)
				}
				return p.TotalCount
			}
			if a, b := count(stores[0]), count(stores[1]); a != 3 || b != 3 {
				t.Fatalf("instance A counts %d, instance B %d, want 3 both", a, b)
			}
			tn.Message(t, sub, tpl, nil)
			dbtest.RawMessage(t, stores[1].DB(), tn.Env, sub.ID, nil)
			if a, b := count(stores[0]), count(stores[1]); a != 5 || b != 5 {
				t.Fatalf("right after two more messages: instance A counts %d, instance B %d, want 5 both", a, b)
			}
		})
	}
}

// An id is minted by the process that creates the row: four bytes of time, five random
// bytes of the process, a three-byte counter. Nothing in it names the environment, so a
// lookup by id alone cannot be routed to a shard; and ids grow with time.
func TestIDsCarryTimeNotEnvironment(t *testing.T) {
	at := time.Date(2025, 3, 1, 8, 0, 0, 0, time.UTC)
	a, b := models.NewID(at), models.NewID(at.Add(time.Second))
	if !strings.HasPrefix(a, fmt.Sprintf("%08x", at.Unix())) || !models.IsID(a) {
		t.Errorf("NewID = %s, want 24 hex digits starting with the time %08x", a, at.Unix())
	}
	if a[8:18] != b[8:18] || a >= b {
		t.Errorf("ids %s, %s: want the same process bytes and later ids sorting after earlier ones", a, b)
	}
}
