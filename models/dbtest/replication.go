package dbtest

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// ReaderUser is the account the replication pair's ReaderURL logs in as: SELECT and
// REPLICA MONITOR (to read its own lag) on the replica, nothing else, which is what the
// read replicas section of docs/operating.md says a read replica's user needs.
const ReaderUser = "reader"

// Replication is a MariaDB primary and one replica of it (MariaDB's own binlog
// replication, by GTID) started for one test, on free loopback ports and in a temporary
// directory of their own, stopped and removed when the test ends. Root logs in to both
// over TCP without a password.
type Replication struct {
	t       testing.TB
	dir     string
	primary *mariadbdProcess
	replica *mariadbdProcess
}

// replicationMissing names what this machine lacks to run the pair, or is "".
func replicationMissing() string {
	if _, err := os.Stat(mariadbd); err != nil {
		return mariadbd
	}
	if _, err := exec.LookPath("mariadb-install-db"); err != nil {
		return "mariadb-install-db"
	}
	return ""
}

// StartReplication starts a primary (binary log on, row format) and a replica of it
// (read-only), and returns once the replica is replicating (a few seconds). Without
// mariadbd the test is skipped, unless REQUIRE_REPLICATION=1, when it fails.
func StartReplication(t testing.TB) *Replication {
	t.Helper()
	if missing := replicationMissing(); missing != "" {
		if os.Getenv("REQUIRE_REPLICATION") == "1" {
			t.Fatalf("a primary and replica need %s (Debian: apt-get install mariadb-server) and REQUIRE_REPLICATION=1", missing)
		}
		t.Skipf("a primary and replica need %s (apt-get install mariadb-server; REQUIRE_REPLICATION=1 to fail instead)", missing)
	}
	dir, err := os.MkdirTemp("", "replication-test-")
	if err != nil {
		t.Fatal(err)
	}
	owner := mariadbdUser(t, dir)
	ports := freePorts(t, 2)
	r := &Replication{t: t, dir: dir,
		primary: &mariadbdProcess{name: "primary", dir: filepath.Join(dir, "primary"), port: ports[0], owner: owner},
		replica: &mariadbdProcess{name: "replica", dir: filepath.Join(dir, "replica"), port: ports[1], owner: owner},
	}
	t.Cleanup(r.stop)
	for _, p := range []*mariadbdProcess{r.primary, r.replica} {
		if err := os.MkdirAll(filepath.Join(p.dir, "tmp"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	chownTree(t, owner, dir)
	// One system database, copied: neither server has logged anything yet.
	installSystemDB(t, filepath.Join(r.primary.dir, "data"), owner)
	if out, err := exec.Command("cp", "-a", filepath.Join(r.primary.dir, "data"), filepath.Join(r.replica.dir, "data")).CombinedOutput(); err != nil {
		t.Fatalf("copy the system database: %v\n%s", err, out)
	}
	chownTree(t, owner, dir)
	r.primary.start(t, r.primaryArgs()...)
	r.replica.start(t, r.replicaArgs()...)
	r.waitAnswers(r.primary)
	r.waitAnswers(r.replica)
	r.Replica(fmt.Sprintf("CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=%d, MASTER_USER='root', MASTER_PASSWORD='', "+
		"MASTER_USE_GTID=slave_pos, MASTER_CONNECT_RETRY=1", r.primary.port))
	r.Replica("START SLAVE")
	r.Primary("CREATE USER '" + ReaderUser + "'@'127.0.0.1'")
	r.Primary("GRANT SELECT, REPLICA MONITOR ON *.* TO '" + ReaderUser + "'@'127.0.0.1'")
	r.Sync()
	return r
}

func (r *Replication) primaryArgs() []string {
	return []string{"--server-id=1", "--log-bin=primary-bin", "--binlog-format=ROW"}
}

func (r *Replication) replicaArgs() []string {
	return []string{"--server-id=2", "--read-only", "--relay-log=replica-relay-bin", "--slave-net-timeout=5"}
}

// PrimaryURL is the DATABASE_URL of database db on the primary (the server's root when db is "").
func (r *Replication) PrimaryURL(db string) string {
	return fmt.Sprintf("mysql://root@127.0.0.1:%d/%s", r.primary.port, db)
}

// ReplicaURL is the URL of database db on the replica as root.
func (r *Replication) ReplicaURL(db string) string {
	return fmt.Sprintf("mysql://root@127.0.0.1:%d/%s", r.replica.port, db)
}

// ReaderURL is the URL of database db on the replica as ReaderUser, the least a
// DATABASE_READ_URLS entry needs.
func (r *Replication) ReaderURL(db string) string {
	return fmt.Sprintf("mysql://%s@127.0.0.1:%d/%s", ReaderUser, r.replica.port, db)
}

// ReplicaAddr is the replica's host:port.
func (r *Replication) ReplicaAddr() string { return fmt.Sprintf("127.0.0.1:%d", r.replica.port) }

// CreateDatabase creates an empty database on the primary, waits until the replica has
// it, and returns its name.
func (r *Replication) CreateDatabase() string {
	r.t.Helper()
	name := "msgtest_" + randomSuffix()
	r.Primary("CREATE DATABASE `" + name + "` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin")
	r.Sync()
	return name
}

// Primary runs statements on the primary as root; they replicate.
func (r *Replication) Primary(statements ...string) { r.exec(r.primary, statements) }

// Replica runs statements on the replica as root (read_only does not bind root): a row
// written this way exists on the replica only.
func (r *Replication) Replica(statements ...string) { r.exec(r.replica, statements) }

func (r *Replication) exec(p *mariadbdProcess, statements []string) {
	r.t.Helper()
	db := p.open(r.t)
	defer db.Close()
	conn, err := db.Conn(context.Background())
	if err != nil {
		r.t.Fatalf("%s: %v", p.name, err)
	}
	defer conn.Close()
	for _, q := range statements {
		if _, err := conn.ExecContext(context.Background(), q); err != nil {
			r.t.Fatalf("%s: %s: %v", p.name, q, err)
		}
	}
}

// Sync waits until the replica has applied everything the primary has logged.
func (r *Replication) Sync() {
	r.t.Helper()
	var pos string
	db := r.primary.open(r.t)
	defer db.Close()
	if err := db.QueryRow("SELECT @@gtid_binlog_pos").Scan(&pos); err != nil {
		r.t.Fatalf("primary's position: %v", err)
	}
	rdb := r.replica.open(r.t)
	defer rdb.Close()
	var waited sql.NullInt64
	if err := rdb.QueryRow("SELECT MASTER_GTID_WAIT(?, 30)", pos).Scan(&waited); err != nil || waited.Int64 != 0 {
		r.t.Fatalf("replica did not reach the primary's position %s within 30 s (%v): %s", pos, err, r.Status())
	}
}

// Status is the replica's replication state, for failure messages: whether its threads
// run, how far behind it is, and its last errors.
func (r *Replication) Status() string {
	db := r.replica.open(r.t)
	defer db.Close()
	rows, err := db.Query("SHOW SLAVE STATUS")
	if err != nil {
		return err.Error()
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	if !rows.Next() {
		return "not a replica"
	}
	vals := make([]sql.NullString, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := rows.Scan(ptrs...); err != nil {
		return err.Error()
	}
	var out []string
	for i, c := range cols {
		switch c {
		case "Slave_IO_Running", "Slave_SQL_Running", "Seconds_Behind_Master", "Last_IO_Error", "Last_SQL_Error", "SQL_Delay", "Gtid_Slave_Pos":
			out = append(out, c+"="+vals[i].String)
		}
	}
	return strings.Join(out, " ")
}

// StopApplying stops the replica's SQL thread: it keeps receiving the primary's changes
// but applies none, and reports no lag (NULL) until StartApplying.
func (r *Replication) StopApplying() { r.Replica("STOP SLAVE SQL_THREAD") }

// StartApplying restarts the SQL thread StopApplying stopped.
func (r *Replication) StartApplying() { r.Replica("START SLAVE SQL_THREAD") }

// Delay makes the replica apply each change d after the primary committed it (MASTER_DELAY),
// so its lag grows to d whenever the primary writes; 0 ends the delay.
func (r *Replication) Delay(d time.Duration) {
	r.Replica("STOP SLAVE", fmt.Sprintf("CHANGE MASTER TO MASTER_DELAY=%d", int(d.Seconds())), "START SLAVE")
}

// KillReplica stops the replica at once (SIGKILL), as a crash would.
func (r *Replication) KillReplica() { r.replica.kill() }

// PauseReplica freezes the replica (SIGSTOP): its connections stay open and nothing
// answers, as with a host gone silent, until ResumeReplica.
func (r *Replication) PauseReplica() { r.replica.signal(syscall.SIGSTOP) }

// ResumeReplica lets a paused replica run again (SIGCONT).
func (r *Replication) ResumeReplica() { r.replica.signal(syscall.SIGCONT) }

// RestartReplica starts the replica again after KillReplica; it resumes replicating from
// where it stopped. It returns once the replica answers.
func (r *Replication) RestartReplica() {
	r.t.Helper()
	r.replica.start(r.t, r.replicaArgs()...)
	r.waitAnswers(r.replica)
}

// waitAnswers waits until p accepts a root login.
func (r *Replication) waitAnswers(p *mariadbdProcess) {
	r.t.Helper()
	db := p.open(r.t)
	defer db.Close()
	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		err := db.PingContext(ctx)
		cancel()
		if err == nil {
			return
		}
		if p.exited() {
			r.t.Fatalf("%s exited while starting:\n%s", p.name, p.tail())
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("%s did not answer within 60 s (%v):\n%s", p.name, err, p.tail())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// stop ends both servers and removes the directory (kept when REPLICATION_KEEP=1 and
// the test failed).
func (r *Replication) stop() {
	r.replica.stop(20 * time.Second)
	r.primary.stop(20 * time.Second)
	if r.t.Failed() {
		r.t.Logf("replica's error log:\n%s", r.replica.tail())
		if os.Getenv("REPLICATION_KEEP") == "1" {
			r.t.Logf("replication directory kept: %s", r.dir)
			return
		}
	}
	_ = os.RemoveAll(r.dir)
}
