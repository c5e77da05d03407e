package dbtest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Where Debian's packages put what a Galera cluster needs (galera-4, mariadb-server, rsync).
const (
	GaleraProvider = "/usr/lib/galera/libgalera_smm.so"
	mariadbd       = "/usr/sbin/mariadbd"
)

// GaleraNodes is the size of the cluster StartGalera starts.
const GaleraNodes = 3

// Galera is a MariaDB Galera cluster of GaleraNodes nodes started for one test, on free
// loopback ports and in a temporary directory of its own, stopped and removed when the
// test ends. Root logs in over TCP without a password.
type Galera struct {
	t     testing.TB
	dir   string
	name  string
	nodes []*GaleraNode
}

// GaleraNode is one mariadbd of a Galera cluster.
type GaleraNode struct {
	// N numbers the node from 1.
	N int
	// Port is the MySQL protocol's port; GaleraPort, ISTPort and SSTPort are the
	// replication's (group communication, incremental and full state transfer).
	Port, GaleraPort, ISTPort, SSTPort int
	proc                               *mariadbdProcess
}

// URL is the DATABASE_URL of database db on the node (the server's root when db is "").
func (n *GaleraNode) URL(db string) string {
	return fmt.Sprintf("mysql://root@127.0.0.1:%d/%s", n.Port, db)
}

// Addr is the node's MySQL host:port.
func (n *GaleraNode) Addr() string { return fmt.Sprintf("127.0.0.1:%d", n.Port) }

// galeraMissing names what this machine lacks to run a Galera cluster, or is "".
func galeraMissing() string {
	for _, f := range []string{GaleraProvider, mariadbd, "/usr/bin/wsrep_sst_rsync"} {
		if _, err := os.Stat(f); err != nil {
			return f
		}
	}
	for _, cmd := range []string{"mariadb-install-db", "rsync"} {
		if _, err := exec.LookPath(cmd); err != nil {
			return cmd
		}
	}
	return ""
}

// GaleraAvailable reports whether StartGalera can run here.
func GaleraAvailable() bool { return galeraMissing() == "" }

// StartGalera starts a cluster of GaleraNodes nodes and returns once every node is
// synced with all of them (about 30 s: each joiner copies the first node's data by
// rsync). Without Debian's galera-4 the test is skipped, unless REQUIRE_GALERA=1, when it
// fails; it is skipped under -short too.
func StartGalera(t testing.TB) *Galera {
	t.Helper()
	required := os.Getenv("REQUIRE_GALERA") == "1"
	if missing := galeraMissing(); missing != "" {
		if required {
			t.Fatalf("Galera needs %s (Debian: apt-get install galera-4 mariadb-server rsync) and REQUIRE_GALERA=1", missing)
		}
		t.Skipf("Galera needs %s (apt-get install galera-4; REQUIRE_GALERA=1 to fail instead)", missing)
	}
	if testing.Short() && !required {
		t.Skip("a Galera cluster takes about 30 s to start; not under -short")
	}
	dir, err := os.MkdirTemp("", "galera-test-")
	if err != nil {
		t.Fatal(err)
	}
	g := &Galera{t: t, dir: dir, name: "test_" + randomSuffix()}
	t.Cleanup(g.stop)
	owner := mariadbdUser(t, dir)
	ports := freePorts(t, 4*GaleraNodes)
	for i := range GaleraNodes {
		n := &GaleraNode{N: i + 1, Port: ports[4*i], GaleraPort: ports[4*i+1], ISTPort: ports[4*i+2], SSTPort: ports[4*i+3]}
		n.proc = &mariadbdProcess{name: fmt.Sprintf("Galera node %d", n.N), dir: filepath.Join(dir, fmt.Sprintf("node%d", n.N)), port: n.Port, owner: owner}
		if err := os.MkdirAll(filepath.Join(n.proc.dir, "tmp"), 0o755); err != nil {
			t.Fatal(err)
		}
		g.nodes = append(g.nodes, n)
	}
	// One system database, copied: the joiners' data is replaced by the first node's anyway.
	first := g.nodes[0]
	chownTree(t, owner, dir)
	installSystemDB(t, filepath.Join(first.proc.dir, "data"), owner)
	for _, n := range g.nodes[1:] {
		if out, err := exec.Command("cp", "-a", filepath.Join(first.proc.dir, "data"), filepath.Join(n.proc.dir, "data")).CombinedOutput(); err != nil {
			t.Fatalf("copy the system database: %v\n%s", err, out)
		}
	}
	chownTree(t, owner, dir)
	g.launch(first, true)
	g.waitSynced(first, 1, 60*time.Second)
	for _, n := range g.nodes[1:] {
		g.launch(n, false)
	}
	for _, n := range g.nodes {
		g.waitSynced(n, GaleraNodes, 120*time.Second)
	}
	return g
}

// Node returns node n (from 1).
func (g *Galera) Node(n int) *GaleraNode { return g.nodes[n-1] }

// Nodes returns every node, first to last.
func (g *Galera) Nodes() []*GaleraNode { return g.nodes }

// Name is the cluster's name, unique to the test.
func (g *Galera) Name() string { return g.name }

// CreateDatabase creates an empty database on the cluster (through node 1; Galera
// replicates the DDL) and returns its name once every node has it: the others apply
// the DDL after node 1 answers, and under load a store opened on node 3 right away
// found no such database.
func (g *Galera) CreateDatabase() string {
	g.t.Helper()
	name := "msgtest_" + randomSuffix()
	db := g.nodes[0].proc.open(g.t)
	defer db.Close()
	if _, err := db.Exec("CREATE DATABASE `" + name + "` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin"); err != nil {
		g.t.Fatalf("create database on Galera: %v", err)
	}
	for _, node := range g.nodes[1:] {
		other := node.proc.open(g.t)
		deadline := time.Now().Add(30 * time.Second)
		for {
			var n int
			err := other.QueryRow("SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name = ?", name).Scan(&n)
			if err == nil && n == 1 {
				break
			}
			if time.Now().After(deadline) {
				other.Close()
				g.t.Fatalf("database %s not on Galera node %d within 30 s (%v)", name, node.N, err)
			}
			time.Sleep(20 * time.Millisecond)
		}
		other.Close()
	}
	return name
}

// Kill stops node n at once (SIGKILL), as a crash would, and waits for it to be gone.
func (g *Galera) Kill(n int) {
	g.t.Helper()
	g.nodes[n-1].proc.kill()
}

// Restart starts node n again after Kill and waits until it has rejoined and is synced
// (by incremental state transfer when the others' cache still holds what it missed).
func (g *Galera) Restart(n int) {
	g.t.Helper()
	node := g.nodes[n-1]
	g.launch(node, false)
	g.waitSynced(node, GaleraNodes, 120*time.Second)
}

// Status returns a wsrep status variable of node n ("cluster_size" for
// wsrep_cluster_size), or "" when the node does not answer.
func (g *Galera) Status(n int, name string) string {
	db := g.nodes[n-1].proc.open(g.t)
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var k, v string
	if err := db.QueryRowContext(ctx, "SHOW STATUS LIKE 'wsrep_"+name+"'").Scan(&k, &v); err != nil {
		return ""
	}
	return v
}

// Exec runs a statement as root on node n, such as SET GLOBAL wsrep_max_ws_rows = 500.
func (g *Galera) Exec(n int, query string) {
	g.t.Helper()
	db := g.nodes[n-1].proc.open(g.t)
	defer db.Close()
	if _, err := db.Exec(query); err != nil {
		g.t.Fatalf("node %d: %s: %v", n, query, err)
	}
}

// launch starts node's mariadbd; bootstrap starts a new cluster with it.
func (g *Galera) launch(n *GaleraNode, bootstrap bool) {
	g.t.Helper()
	var peers []string
	for _, p := range g.nodes {
		peers = append(peers, fmt.Sprintf("127.0.0.1:%d", p.GaleraPort))
	}
	// The common options (mariadbdProcess.args), then the replication's.
	args := []string{
		"--binlog-format=ROW",
		"--innodb-autoinc-lock-mode=2",
		"--wsrep-on=ON",
		"--wsrep-provider=" + GaleraProvider,
		"--wsrep-cluster-name=" + g.name,
		"--wsrep-cluster-address=gcomm://" + strings.Join(peers, ","),
		fmt.Sprintf("--wsrep-node-name=node%d", n.N),
		fmt.Sprintf("--wsrep-node-address=127.0.0.1:%d", n.GaleraPort),
		"--wsrep-sst-method=rsync",
		fmt.Sprintf("--wsrep-sst-receive-address=127.0.0.1:%d", n.SSTPort),
		fmt.Sprintf("--wsrep-provider-options=base_port=%d;gmcast.listen_addr=tcp://127.0.0.1:%d;ist.recv_addr=127.0.0.1:%d;gcache.size=128M",
			n.GaleraPort, n.GaleraPort, n.ISTPort),
	}
	if bootstrap {
		args = append(args, "--wsrep-new-cluster")
	}
	// In a process group of its own (start), so Kill reaches the state transfer's rsync too.
	n.proc.start(g.t, args...)
}

// waitSynced waits until node answers, is synced and sees a cluster of size nodes.
func (g *Galera) waitSynced(n *GaleraNode, size int, within time.Duration) {
	g.t.Helper()
	deadline := time.Now().Add(within)
	for {
		if g.Status(n.N, "local_state_comment") == "Synced" && g.Status(n.N, "cluster_size") == fmt.Sprint(size) &&
			g.Status(n.N, "ready") == "ON" {
			return
		}
		if n.proc.exited() {
			g.t.Fatalf("Galera node %d exited while starting:\n%s", n.N, n.proc.tail())
		}
		if time.Now().After(deadline) {
			g.t.Fatalf("Galera node %d not synced in a cluster of %d within %s:\n%s", n.N, size, within, n.proc.tail())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// stop ends every node (SIGTERM, then SIGKILL after 20 s) and removes the directory.
func (g *Galera) stop() {
	// All at once: a node stopped alone waits for the others to notice it leave.
	for _, n := range g.nodes {
		n.proc.signal(syscall.SIGTERM)
	}
	for _, n := range g.nodes {
		n.proc.stop(20 * time.Second)
	}
	if g.t.Failed() && os.Getenv("GALERA_KEEP") == "1" {
		g.t.Logf("Galera directory kept: %s", g.dir)
		return
	}
	_ = os.RemoveAll(g.dir)
}

// freePorts returns n distinct loopback ports that were free a moment ago.
func freePorts(t testing.TB, n int) []int {
	t.Helper()
	var ports []int
	var listeners []net.Listener
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		listeners = append(listeners, ln)
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	for _, ln := range listeners {
		_ = ln.Close()
	}
	return ports
}
