package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"messages/models"
	"messages/models/dbtest"
	"messages/models/store"
)

// metricValue reads one series of GET /metrics on base, e.g.
// db_replica_state{replica="127.0.0.1:3307",state="down"}; -1 when absent.
func metricValue(t *testing.T, base, series string) float64 {
	t.Helper()
	status, body := get(t, base+"/metrics", "")
	if status != http.StatusOK {
		t.Fatalf("/metrics: %d", status)
	}
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`).FindSubmatch(body)
	if m == nil {
		return -1
	}
	v, err := strconv.ParseFloat(string(m[1]), 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// replicaMark marks a message through POST /v1 and returns the status its answer holds.
func replicaMark(t *testing.T, base, key, subscriberID, messageID string) models.MessageActionStatus {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, fmt.Sprintf("%s/v1/subscribers/%s/messages/%s/actions/primary", base, subscriberID, messageID),
		strings.NewReader(`{"status":"done"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "ApiKey "+key)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("mark: %d %s", res.StatusCode, body)
	}
	var m models.Message
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	return m.CTA.Action.Status
}

// TestReadReplicasServe runs two instances on a primary whose lists they read from a real
// replica (DATABASE_READ_URLS, as the least-privileged reader user): lists come from the
// replica; a mark answers from the primary and its caller's next lists on that instance
// too, while the other instance may show the replica's older state; and with the replica
// killed every list still answers 200, from the primary, until it is back.
func TestReadReplicasServe(t *testing.T) {
	rep := dbtest.StartReplication(t)
	name := rep.CreateDatabase()
	st := productionStore(t, rep.PrimaryURL(name))
	writer := dbtest.NewTenant(t, st, "writer")
	ada := writer.Subscriber(t, "ada")
	tpl := writer.Template(t, "welcome")
	target := writer.Message(t, ada, tpl, nil)
	writer.Message(t, ada, tpl, nil)
	// The probe's environment has one message on the replica alone: a list holding it was
	// read from the replica. Nothing writes that environment on the primary afterwards.
	probe := dbtest.NewTenant(t, st, "probe")
	bob := probe.Subscriber(t, "bob")
	probe.Message(t, bob, probe.Template(t, "digest"), nil)
	rep.Sync()
	replica, err := store.Open(context.Background(), rep.ReplicaURL(name), store.DefaultPool)
	if err != nil {
		t.Fatal(err)
	}
	marker := dbtest.RawMessage(t, replica.DB(), probe.Env, bob.ID, nil)
	_ = replica.Close()

	args := []string{"--database-read-urls", rep.ReaderURL(name), "--database-read-max-lag", "30s", "--database-read-after-write", "2s",
		"--rate-limit", "100000", "--rate-burst", "100000"}
	a, b := start(t, args...), start(t, args...)
	state := func(t *testing.T, srv *running, s string) float64 {
		return metricValue(t, srv.base, fmt.Sprintf(`db_replica_state{replica=%q,state=%q}`, rep.ReplicaAddr(), s))
	}
	// probeReadReplica lists the probe's messages and reports whether the replica served them.
	probeReadReplica := func(t *testing.T, srv *running) bool {
		page := listPage(t, srv.base, probe.Key, "")
		if page.TotalCount != len(page.Data) {
			t.Fatalf("one page, one snapshot: %d messages, totalCount %d", len(page.Data), page.TotalCount)
		}
		return slices.ContainsFunc(page.Data, func(m *models.Message) bool { return m.ID == marker })
	}
	for _, srv := range []*running{a, b} {
		eventually(t, 10*time.Second, "the replica is checked ready", func() bool { return state(t, srv, "ready") == 1 })
		if !probeReadReplica(t, srv) {
			t.Fatal("a list was read from the primary while the replica was ready")
		}
	}
	status, body := postGraphQL(t, a.base, probe.Key, `{ messagesConnection(first: 5) { totalCount edges { node { _id } } } }`)
	if status != http.StatusOK || !strings.Contains(string(body), marker) || !strings.Contains(string(body), `"totalCount":2`) {
		t.Fatalf("messagesConnection must read the replica: %d %s", status, body)
	}
	if v := metricValue(t, a.base, `db_list_reads_total{reason="ready",served_by="replica"}`); v < 2 {
		t.Fatalf("reads served by the replica: %v", v)
	}
	if v := metricValue(t, a.base, fmt.Sprintf(`go_sql_open_connections{db_name="replica %s"}`, rep.ReplicaAddr())); v < 1 {
		t.Fatalf("the replica's pool in /metrics: %v open connections", v)
	}

	t.Run("markThenList", func(t *testing.T) {
		// The replica applies each change 3 s late: within the bound, so it stays in use.
		rep.Delay(3 * time.Second)
		t.Cleanup(func() { rep.Delay(0) })
		time.Sleep(1500 * time.Millisecond) // a check after the replica's threads restarted
		for _, srv := range []*running{a, b} {
			eventually(t, 5*time.Second, "the delayed replica is ready", func() bool { return state(t, srv, "ready") == 1 })
		}
		targetStatus := func(srv *running) models.MessageActionStatus {
			for _, m := range listPage(t, srv.base, writer.Key, "").Data {
				if m.ID == target.ID {
					return m.CTA.Action.Status
				}
			}
			t.Fatalf("message %s missing", target.ID)
			return ""
		}
		if got := replicaMark(t, a.base, writer.Key, "ada", target.ID); got != models.ActionDone {
			t.Fatalf("the mark answered %s: its record must be read from the primary", got)
		}
		afterWrite := metricValue(t, a.base, `db_list_reads_total{reason="after_write",served_by="primary"}`)
		if got := targetStatus(a); got != models.ActionDone {
			t.Fatalf("the marking instance listed %s right after the mark", got)
		}
		if metricValue(t, a.base, `db_list_reads_total{reason="after_write",served_by="primary"}`) != afterWrite+1 {
			t.Fatal("the list after the mark was not read from the primary as the writer's")
		}
		// What docs/operating.md tells clients: another instance's list may lag by the replica's delay.
		if got := targetStatus(b); got != models.ActionPending {
			t.Fatalf("the other instance listed %s within the replica's 3 s delay; the test proves nothing", got)
		}
		marked := time.Now()
		eventually(t, 10*time.Second, "the other instance lists the mark once the replica applied it", func() bool {
			return targetStatus(b) == models.ActionDone
		})
		t.Logf("the other instance listed the mark %s after it answered (replica delay 3 s)", time.Since(marked).Round(10*time.Millisecond))
	})

	t.Run("replicaKilled", func(t *testing.T) {
		rep.KillReplica()
		killed := time.Now()
		failedBefore := metricValue(t, a.base, `db_list_reads_total{reason="replica_failed",served_by="primary"}`) +
			metricValue(t, b.base, `db_list_reads_total{reason="replica_failed",served_by="primary"}`)
		// Every list answers 200 (listPage fails otherwise), from the primary, at once:
		// a read that fails on the dead replica is read again from the primary.
		deadline := time.Now().Add(2 * time.Second)
		for n := 0; time.Now().Before(deadline); n++ {
			for _, srv := range []*running{a, b} {
				if probeReadReplica(t, srv) {
					t.Fatalf("read %d: the marker of a killed replica", n)
				}
			}
			time.Sleep(20 * time.Millisecond)
		}
		for _, srv := range []*running{a, b} {
			if state(t, srv, "down") != 1 {
				t.Fatalf("the killed replica is not reported down:\n%s", srv.stderr.String())
			}
		}
		failed := metricValue(t, a.base, `db_list_reads_total{reason="replica_failed",served_by="primary"}`) +
			metricValue(t, b.base, `db_list_reads_total{reason="replica_failed",served_by="primary"}`) - failedBefore
		t.Logf("after the kill: reads that failed on the replica and were read from the primary: %v; the rest skipped it", failed)
		rep.RestartReplica()
		restarted := time.Now()
		t.Logf("replica restarted %s after the kill", restarted.Sub(killed).Round(10*time.Millisecond))
		for _, srv := range []*running{a, b} {
			eventually(t, 15*time.Second, "the restarted replica serves lists again", func() bool { return probeReadReplica(t, srv) })
		}
		t.Logf("lists read from the replica again %s after it answered", time.Since(restarted).Round(10*time.Millisecond))
		if !strings.Contains(a.stderr.String(), "read replica skipped") || !strings.Contains(a.stderr.String(), "read replica ready") {
			t.Fatalf("the log must say when the replica was skipped and when it served again:\n%s", a.stderr.String())
		}
	})
}

// TestReadReplicaSettingsRefused: replicas of SQLite, a URL that is not one replica's,
// and a lag bound that is not positive are configuration mistakes (exit 2) named in the
// error, and a replica's password never reaches the log.
func TestReadReplicaSettingsRefused(t *testing.T) {
	mysql := "mysql://root@127.0.0.1:3306/messages"
	for _, tc := range []struct {
		name, databaseURL string
		args              []string
		says              string
	}{
		{"sqlitePrimary", "sqlite:" + t.TempDir() + "/x.db", []string{"--database-read-urls", mysql}, "SQLite has no replicas"},
		{"notMySQL", mysql, []string{"--database-read-urls", "postgres://r:hunter2@db/m"}, "not a mysql:// URL"},
		{"severalHosts", mysql, []string{"--database-read-urls", "mysql://r:hunter2@db2:3306,db3:3306/m"}, "several hosts"},
		{"noLagBound", mysql, []string{"--database-read-urls", "mysql://r:hunter2@db2/m", "--database-read-max-lag", "0s"}, "DATABASE_READ_MAX_LAG must be positive"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("DATABASE_URL", tc.databaseURL)
			code, _, stderr := runCLI(t, "", append([]string{"serve", "--addr", "127.0.0.1:0"}, tc.args...)...)
			if code != 2 || !strings.Contains(stderr, tc.says) || strings.Contains(stderr, "hunter2") {
				t.Fatalf("exit %d, want 2 saying %q without the password:\n%s", code, tc.says, stderr)
			}
		})
	}
}

// TestReadURLsMasked: the logged configuration hides every replica's password.
func TestReadURLsMasked(t *testing.T) {
	got := mask("DATABASE_READ_URLS", "mysql://r:hunter2@db2:3306/m, mysql://r:swordfish@db3:3306/m")
	if want := "mysql://r:xxxxx@db2:3306/m,mysql://r:xxxxx@db3:3306/m"; got != want {
		t.Fatalf("masked %q, want %q", got, want)
	}
}

// TestReadReplicaDownAtStart: a replica that cannot be reached does not stop serve from
// starting or any list from answering; it is reported down. The read-after-write window
// is twice the lag bound unless set, and 0 turns it off.
func TestReadReplicaDownAtStart(t *testing.T) {
	st := productionStore(t, dbtest.URL(t, store.DialectMySQL))
	tn := dbtest.NewTenant(t, st, "down")
	tn.Message(t, tn.Subscriber(t, "ada"), tn.Template(t, "welcome"), nil)
	nowhere := "mysql://reader:hunter2@127.0.0.1:1/messages"
	for _, tc := range []struct {
		name, afterWrite, logged string
	}{
		{"windowTwiceTheBound", "", `"readAfterWrite":"6s"`},
		{"windowOff", "0", `"readAfterWrite":"0s"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("DATABASE_READ_MAX_LAG", "3s")
			if tc.afterWrite != "" {
				t.Setenv("DATABASE_READ_AFTER_WRITE", tc.afterWrite)
			}
			srv := start(t, "--database-read-urls", nowhere)
			if page := listPage(t, srv.base, tn.Key, ""); page.TotalCount != 1 {
				t.Fatalf("list with the replica down: %+v", page)
			}
			eventually(t, 5*time.Second, "the unreachable replica is reported down", func() bool {
				return metricValue(t, srv.base, `db_replica_state{replica="127.0.0.1:1",state="down"}`) == 1
			})
			if log := srv.stderr.String(); !strings.Contains(log, tc.logged) || strings.Contains(log, "hunter2") {
				t.Fatalf("want %s in the log, and no password:\n%s", tc.logged, log)
			}
		})
	}
}
