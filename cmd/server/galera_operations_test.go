package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"messages/models"
	"messages/models/dbtest"
	"messages/models/migrate"
	"messages/models/store"
)

// TestGaleraOperations runs what an operator does to a 3-node Galera cluster, where
// TestGalera runs what clients do: two instances migrating a fresh database at the same
// moment from two nodes; a node refusing queries (wsrep_reject_queries, as during
// maintenance) passed over by an instance whose DATABASE_URL names it first, and used
// again once it accepts them; an import of 5,000 lines on a cluster whose write sets are
// bounded to 500 rows.
func TestGaleraOperations(t *testing.T) {
	g := dbtest.StartGalera(t)
	name := g.CreateDatabase()
	t.Run("migrateFromTwoNodesAtOnce", func(t *testing.T) {
		// A fresh database, then an upgrade: the last two migrations rolled back and
		// applied again from both nodes at once, three times over.
		galeraMigrateTogether(t, g, name, 0)
		for range 3 {
			galeraMigrateTogether(t, g, name, 2)
		}
	})
	t.Run("unsyncedNodePassedOverThenUsedAgain", func(t *testing.T) { galeraUnsyncedNode(t, g, name) })
	t.Run("importPastTheWriteSetLimit", func(t *testing.T) { galeraImportChunked(t, g, name) })
	t.Run("inboxStateChangedOnTwoNodes", func(t *testing.T) { galeraInboxState(t, g, name) })
	t.Run("deletesOnTwoNodes", func(t *testing.T) { galeraDeletes(t, g, name) })
	t.Run("bulkChangeTakenOnByOneOfTwoNodes", func(t *testing.T) { galeraStateJob(t, g, name) })
}

// openOn opens a store through DATABASE_URL url, closed when the test ends.
func openOn(t *testing.T, url string, pool store.PoolOptions) *store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), url, pool)
	if err != nil {
		t.Fatalf("open %s: %v", url, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// galeraMigrateTogether rolls back the last back migrations of database name (none on a
// fresh one), then has stores on nodes 1 and 3 migrate it at the same moment: both
// succeed and each pending migration is applied once. GET_LOCK alone is local to a node
// and lets both apply the same migration; the lease row serialises them.
func galeraMigrateTogether(t *testing.T, g *dbtest.Galera, name string, back int) {
	ctx := context.Background()
	stores := []*store.Store{openOn(t, g.Node(1).URL(name), store.DefaultPool), openOn(t, g.Node(3).URL(name), store.DefaultPool)}
	for range back {
		if _, err := stores[0].MigrateDown(ctx); err != nil {
			t.Fatalf("roll back: %v", err)
		}
	}
	applied := make([][]migrate.Migration, len(stores))
	errs := make([]error, len(stores))
	var wg sync.WaitGroup
	ready := make(chan struct{})
	for i, s := range stores {
		wg.Go(func() {
			<-ready
			applied[i], errs[i] = s.MigrateUp(ctx)
		})
	}
	close(ready)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("migrate on node %d: %v", []int{1, 3}[i], err)
		}
	}
	t.Logf("node 1 applied %d migrations, node 3 %d", len(applied[0]), len(applied[1]))
	// Node 2 applies the other nodes' commits shortly after they return (no
	// wsrep_sync_wait): its status is read once it has them all.
	node2 := openOn(t, g.Node(2).URL(name), store.DefaultPool)
	var status []migrate.MigrationState
	eventually(t, 10*time.Second, "node 2 has every migration applied", func() bool {
		var err error
		if status, err = node2.MigrationStatus(ctx); err != nil {
			t.Fatal(err)
		}
		return !slices.ContainsFunc(status, func(m migrate.MigrationState) bool { return !m.Applied })
	})
	for _, m := range status {
		if !m.Applied || m.Unknown {
			t.Errorf("migration %d %s: applied %v, unknown %v; want applied", m.Version, m.Name, m.Applied, m.Unknown)
		}
	}
	pending := len(status)
	if back > 0 {
		pending = back
	}
	if n := len(applied[0]) + len(applied[1]); n != pending {
		t.Errorf("the two instances applied %d migrations between them, want each of %d once", n, pending)
	}
	var rows int64
	if err := stores[0].DB().Raw("SELECT COUNT(*) FROM goose_db_version WHERE version_id > 0").Scan(&rows).Error; err != nil || int(rows) != len(status) {
		t.Errorf("goose_db_version holds %d applied rows (%v), want %d", rows, err, len(status))
	}
}

// galeraUnsyncedNode: node 1 refuses queries with 1047; an instance whose DATABASE_URL
// names node 1 then node 2 serves from node 2, its pooled connections to node 1 included,
// and moves back to node 1 once it accepts queries again.
func galeraUnsyncedNode(t *testing.T, g *dbtest.Galera, name string) {
	n1, n2 := g.Node(1), g.Node(2)
	url := strings.Replace(n1.URL(name), n1.Addr(), n1.Addr()+","+n2.Addr(), 1)
	pool := store.PoolOptions{MaxOpenConns: 4, MaxIdleConns: 4, ConnMaxLifetime: time.Second, ConnMaxIdleTime: time.Second}
	s := openOn(t, url, pool)
	// ports asks as many connections as the pool holds which node they are on.
	ports := func() ([]int, error) {
		out := make([]int, pool.MaxOpenConns)
		errs := make([]error, pool.MaxOpenConns)
		var wg sync.WaitGroup
		for i := range out {
			wg.Go(func() { errs[i] = s.DB().Raw("SELECT @@port FROM (SELECT SLEEP(0.05)) AS pause").Scan(&out[i]).Error })
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				return out, err
			}
		}
		return out, nil
	}
	all := func(got []int, port int) bool {
		return !slices.ContainsFunc(got, func(p int) bool { return p != port })
	}
	if got, err := ports(); err != nil || !all(got, n1.Port) {
		t.Fatalf("before: connections on ports %v (%v), want all on node 1 (%d)", got, err, n1.Port)
	}

	g.Exec(1, "SET GLOBAL wsrep_reject_queries = ALL")
	t.Cleanup(func() { g.Exec(1, "SET GLOBAL wsrep_reject_queries = NONE") })
	if got, err := ports(); err != nil || !all(got, n2.Port) {
		t.Errorf("node 1 refusing queries: connections on ports %v (%v), want all on node 2 (%d)", got, err, n2.Port)
	}
	fresh := openOn(t, url, pool)
	var port int
	// Through a table, as any query of the store's: a node refusing queries still answers
	// a SELECT that reads none.
	if err := fresh.DB().Raw("SELECT @@port FROM (SELECT 1) AS one").Scan(&port).Error; err != nil || port != n2.Port {
		t.Errorf("opened while node 1 refuses queries: on port %d (%v), want node 2 (%d)", port, err, n2.Port)
	}

	g.Exec(1, "SET GLOBAL wsrep_reject_queries = NONE")
	back := time.Now()
	eventually(t, 60*time.Second, "every connection back on node 1", func() bool {
		got, err := ports()
		return err == nil && all(got, n1.Port)
	})
	t.Logf("every connection back on node 1 %s after it accepted queries again", time.Since(back).Round(100*time.Millisecond))
}

// galeraImportChunked: with wsrep_max_ws_rows = 500 on every node, one transaction of
// more rows fails; an import of 5,000 lines through node 2 succeeds, every message there
// once with the counts to match, and importing it again changes nothing.
func galeraImportChunked(t *testing.T, g *dbtest.Galera, name string) {
	ctx := context.Background()
	const env, lines = "670000000000000000000014", 5000
	t.Setenv("APP_ENV", "production")
	t.Setenv("DATABASE_URL", dbtest.URL(t, store.DialectSQLite))
	if code, _, stderr := runCLI(t, "", "seed", "--seed", "14", "--messages", fmt.Sprint(lines), "--subscribers", "50", "--templates", "5", "--environment-id", env); code != 0 {
		t.Fatalf("seed: %s", stderr)
	}
	code, export, stderr := runCLI(t, "", "export", "--environment-id", env)
	if code != 0 {
		t.Fatalf("export: %s", stderr)
	}
	file := filepath.Join(t.TempDir(), "import.jsonl")
	if err := os.WriteFile(file, []byte(export), 0o644); err != nil {
		t.Fatal(err)
	}

	for n := 1; n <= dbtest.GaleraNodes; n++ {
		g.Exec(n, "SET GLOBAL wsrep_max_ws_rows = 500")
		t.Cleanup(func() { g.Exec(n, "SET GLOBAL wsrep_max_ws_rows = 0") })
	}
	store2 := openOn(t, g.Node(2).URL(name), store.DefaultPool)
	if err := store2.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	// What the import was before: one transaction, here of 600 rows.
	err := store2.Transaction(ctx, func(ctx context.Context) error {
		return store2.DB().WithContext(ctx).Exec("INSERT INTO change_holds (id, expires_at) SELECT LPAD(seq, 24, '0'), UTC_TIMESTAMP(6) FROM seq_1_to_600").Error
	})
	if err == nil {
		t.Fatal("a transaction of 600 rows committed under wsrep_max_ws_rows = 500")
	}
	t.Logf("one transaction of 600 rows: %v", err)

	store1 := openOn(t, g.Node(1).URL(name), store.DefaultPool)
	want := dbtest.ExportedMessages(t, []byte(export))
	for _, run := range []string{"first", "again"} {
		t.Setenv("DATABASE_URL", g.Node(2).URL(name))
		started := time.Now()
		code, _, stderr := runCLI(t, "", "import", "--file", file)
		if code != 0 {
			t.Fatalf("%s import of %d lines under wsrep_max_ws_rows = 500: %s", run, lines, stderr)
		}
		t.Logf("%s import of %d lines under wsrep_max_ws_rows = 500, through node 2: %s", run, lines, time.Since(started).Round(time.Millisecond))
		eventually(t, 10*time.Second, "node 1 holds every imported message", func() bool {
			var n int64
			return store1.DB().Model(&models.Message{}).Where("environment_id = ?", env).Count(&n).Error == nil && n == lines
		})
		got := dbtest.ExportedMessages(t, dbtest.Export(t, store1, env))
		if len(got) != len(want) {
			t.Fatalf("%s: %d messages exported from node 1, want %d", run, len(got), len(want))
		}
		for i := range want {
			if got[i].ID != want[i].ID || got[i].Channel != want[i].Channel || !got[i].CreatedAt.Equal(want[i].CreatedAt.Time) {
				t.Fatalf("%s: message %d on node 1 is %s, want %s as in the file", run, i, got[i].ID, want[i].ID)
			}
		}
		var counted int64
		if err := store1.DB().Raw("SELECT COALESCE(SUM(n), 0) FROM message_counts WHERE environment_id = ? AND subscriber_id = '' AND channel = ''", env).
			Scan(&counted).Error; err != nil || counted != lines {
			t.Errorf("%s: the counter rows say %d messages (%v), want %d", run, counted, err, lines)
		}
	}
}

// galeraInboxState changes the inbox state of the imported environment's messages from
// nodes 1 and 3 at once, by name and in bulk, on the same subscribers, so that their
// counter rows are certified against each other (conflicts are retried); afterwards
// every counter, read on node 2, equals GROUP BY over the messages.
func galeraInboxState(t *testing.T, g *dbtest.Galera, name string) {
	ctx := context.Background()
	const env = "670000000000000000000014"
	nodes := []*store.Store{openOn(t, g.Node(1).URL(name), store.DefaultPool), openOn(t, g.Node(3).URL(name), store.DefaultPool)}
	var ids []struct{ ID, Sub string }
	if err := nodes[0].DB().Raw("SELECT m.id, s.subscriber_id AS sub FROM messages m JOIN subscribers s ON s.id = m.subscriber_id WHERE m.environment_id = ? ORDER BY m.id LIMIT 400", env).
		Scan(&ids).Error; err != nil || len(ids) == 0 {
		t.Fatalf("messages to change: %d (%v)", len(ids), err)
	}
	changes := []models.StateChange{{Read: models.Bool(true), Seen: models.Bool(true)}, {Read: models.Bool(false)},
		{Archived: models.Bool(true)}, {Archived: models.Bool(false)}}
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for w, s := range nodes {
		wg.Go(func() {
			for i := range 60 {
				m := ids[(i*7+w*13)%len(ids)]
				target := models.StateTarget{SubscriberID: m.Sub, MessageIDs: []string{m.ID}}
				if i%10 == w {
					target = models.StateTarget{SubscriberID: m.Sub}
				}
				if _, err := s.ChangeState(ctx, env, target, changes[(i+w)%len(changes)]); err != nil {
					errs <- fmt.Errorf("node %d, change %d: %w", 1+2*w, i, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	galeraCountersMatch(t, openOn(t, g.Node(2).URL(name), store.DefaultPool), env, "node 2 has every change and its counters match the messages")
}

// galeraCountersMatch waits until the environment's counters, read on node, equal COUNT
// over its messages by subscriber, channel and state, and in total by state, and its
// counters by workflow and month equal COUNT by subscriber, channel, workflow, month and
// state.
func galeraCountersMatch(t *testing.T, node *store.Store, env, what string) {
	t.Helper()
	const byState = "(`read` <> 0) + 2 * (seen <> 0) + 4 * (archived <> 0) + 8 * (snoozed_until IS NOT NULL)"
	read := func(q string) map[string]int64 {
		var rows []struct {
			Sub, Channel string
			State, N     int64
		}
		if err := node.DB().Raw(q, env).Scan(&rows).Error; err != nil {
			t.Fatal(err)
		}
		out := map[string]int64{}
		for _, r := range rows {
			if r.N != 0 {
				out[fmt.Sprintf("%s/%s/%d", r.Sub, r.Channel, r.State)] = r.N
			}
		}
		return out
	}
	eventually(t, 10*time.Second, what, func() bool {
		counters := read("SELECT subscriber_id AS sub, channel, state, SUM(n) AS n FROM message_counts WHERE environment_id = ? AND subscriber_id <> '' AND channel <> '' GROUP BY 1, 2, 3")
		messages := read("SELECT subscriber_id AS sub, channel, " + byState + " AS state, COUNT(*) AS n FROM messages WHERE environment_id = ? GROUP BY 1, 2, 3")
		totals := read("SELECT '' AS sub, '' AS channel, state, SUM(n) AS n FROM message_counts WHERE environment_id = ? AND subscriber_id = '' AND channel = '' GROUP BY 3")
		wantTotals := read("SELECT '' AS sub, '' AS channel, " + byState + " AS state, COUNT(*) AS n FROM messages WHERE environment_id = ? GROUP BY 3")
		// The counters by workflow and month (migration 15), keyed the same way.
		workflows := read("SELECT CONCAT(subscriber_id, '/', channel, '/', template_id, '/', created_month) AS sub, '' AS channel, state, SUM(n) AS n" +
			" FROM message_workflow_counts WHERE environment_id = ? GROUP BY 1, 3")
		wantWorkflows := read("SELECT CONCAT(subscriber_id, '/', channel, '/', template_id, '/', EXTRACT(YEAR_MONTH FROM created_at)) AS sub, '' AS channel, " +
			byState + " + 16 * (CASE severity WHEN 'high' THEN 3 WHEN 'medium' THEN 2 WHEN 'low' THEN 1 ELSE 0 END) AS state, COUNT(*) AS n" +
			" FROM messages WHERE environment_id = ? AND subscriber_id <> '' GROUP BY 1, 3")
		return maps.Equal(counters, messages) && maps.Equal(totals, wantTotals) && maps.Equal(workflows, wantWorkflows) && len(messages) > 1
	})
}

// galeraDeletes deletes from two nodes at once (named messages, transactions, a
// subscriber's read messages by filter, and plain SQL), beside state changes: on the
// third node the counters equal COUNT over the messages, and every deleted message left
// its tombstone.
func galeraDeletes(t *testing.T, g *dbtest.Galera, name string) {
	ctx := context.Background()
	const env = "670000000000000000000014"
	nodes := []*store.Store{openOn(t, g.Node(1).URL(name), store.DefaultPool), openOn(t, g.Node(3).URL(name), store.DefaultPool)}
	var rows []struct{ ID, Sub, Txn string }
	if err := nodes[0].DB().Raw("SELECT m.id, s.subscriber_id AS sub, m.transaction_id AS txn FROM messages m JOIN subscribers s ON s.id = m.subscriber_id WHERE m.environment_id = ? ORDER BY m.id LIMIT 600", env).
		Scan(&rows).Error; err != nil || len(rows) < 100 {
		t.Fatalf("messages to delete: %d (%v)", len(rows), err)
	}
	var before int64
	if err := nodes[0].DB().Table("messages").Where("environment_id = ?", env).Count(&before).Error; err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for w, s := range nodes {
		wg.Go(func() {
			for i := range 40 {
				m := rows[(i*11+w*17)%len(rows)]
				var err error
				switch i % 5 {
				case 0, 1:
					_, err = s.DeleteMessages(ctx, env, models.DeleteTarget{MessageIDs: []string{m.ID, rows[(i*3+w)%len(rows)].ID}})
				case 2:
					_, err = s.DeleteMessages(ctx, env, models.DeleteTarget{TransactionID: &m.Txn})
				case 3:
					_, err = s.DeleteMessages(ctx, env, models.DeleteTarget{SubscriberID: &m.Sub, Filter: models.StateFilter{Read: models.Bool(true)}})
				case 4:
					if w == 0 {
						_, err = s.ChangeState(ctx, env, models.StateTarget{SubscriberID: m.Sub}, models.StateChange{Read: models.Bool(true)})
					} else {
						err = s.DB().Exec("DELETE FROM messages WHERE environment_id = ? AND id = ?", env, m.ID).Error
					}
				}
				if err != nil {
					errs <- fmt.Errorf("node %d, delete %d: %w", 1+2*w, i, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	node2 := openOn(t, g.Node(2).URL(name), store.DefaultPool)
	galeraCountersMatch(t, node2, env, "node 2 has every delete and its counters match the messages")
	var after, tombs int64
	if err := node2.DB().Table("messages").Where("environment_id = ?", env).Count(&after).Error; err != nil {
		t.Fatal(err)
	}
	if err := node2.DB().Table("message_deletions").Where("environment_id = ?", env).Count(&tombs).Error; err != nil {
		t.Fatal(err)
	}
	if after >= before || tombs != before-after {
		t.Fatalf("%d messages before, %d after, %d tombstones: want one tombstone per deleted message", before, after, tombs)
	}
}

// galeraStateJob: a bulk change begun on node 1 whose instance dies after its first
// batch is claimed, once its lease has passed, by exactly one of two instances asking at
// once on nodes 2 and 3, which completes it; the instance on node 1, back, finds it taken.
// The counters equal the messages on every node.
func galeraStateJob(t *testing.T, g *dbtest.Galera, name string) {
	ctx := context.Background()
	nodes := []*store.Store{openOn(t, g.Node(1).URL(name), store.DefaultPool), openOn(t, g.Node(2).URL(name), store.DefaultPool),
		openOn(t, g.Node(3).URL(name), store.DefaultPool)}
	const n = 1200
	tn := bulkInbox(t, nodes[0], n)
	env := tn.Env.ID
	// Another subscriber's message, which the change leaves alone.
	tn.Message(t, tn.Subscriber(t, "bob"), tn.Template(t, "welcome"), nil)
	const lease = time.Second
	job, claimed, err := nodes[0].CreateStateJob(ctx, env, models.StateTarget{SubscriberID: "alice"}, models.StateChange{Read: models.Bool(true)}, "node-1", lease)
	if err != nil || !claimed {
		t.Fatalf("create on node 1: claimed %v (%v)", claimed, err)
	}
	dying, die := context.WithCancel(ctx)
	if err := nodes[0].RunStateJob(dying, job, "node-1", lease, func(int64) { die() }); !errors.Is(err, context.Canceled) {
		t.Fatalf("the dying run on node 1 ended with %v", err)
	}
	var winners []*store.StateJob
	deadline := time.Now().Add(30 * time.Second)
	for len(winners) == 0 && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
		got := make([][]*store.StateJob, 2)
		var wg sync.WaitGroup
		for i, s := range nodes[1:] {
			wg.Go(func() {
				// A claim that loses certification to the other node's is an error here:
				// it claimed nothing, as the loser of a race should.
				got[i], _ = s.ClaimStateJobs(ctx, fmt.Sprintf("node-%d", i+2), time.Minute, 10)
			})
		}
		wg.Wait()
		if len(got[0])+len(got[1]) > 1 {
			t.Fatalf("both nodes claimed the job: %d and %d", len(got[0]), len(got[1]))
		}
		winners = append(got[0], got[1]...)
	}
	if len(winners) != 1 || winners[0].ID != job.ID || winners[0].Changed != 500 {
		t.Fatalf("claimed after the lease passed: %+v, want the job with its first batch counted", winners)
	}
	winner := nodes[1]
	if winners[0].Owner == "node-3" {
		winner = nodes[2]
	}
	if err := nodes[0].RunStateJob(ctx, job, "node-1", lease, nil); !errors.Is(err, store.ErrStateJobLost) {
		t.Fatalf("node 1, back, ran on with %v, want ErrStateJobLost", err)
	}
	if err := winner.RunStateJob(ctx, winners[0], winners[0].Owner, time.Minute, nil); err != nil {
		t.Fatal(err)
	}
	if winners[0].Changed != n {
		t.Errorf("the job changed %d in all, want %d", winners[0].Changed, n)
	}
	for i, s := range nodes {
		eventually(t, 10*time.Second, fmt.Sprintf("node %d has the job done", i+1), func() bool {
			jobs, err := s.StateJobs(ctx, env)
			return err == nil && len(jobs) == 0
		})
	}
	galeraCountersMatch(t, nodes[1], env, "node 2 has the job's batches and its counters match the messages")
}
