package dbtest

import (
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// What the Galera cluster and the replication pair share: a mariadbd process of the
// test's own, in a directory of its own, on a free loopback port.

// mariadbdUser is the system user mariadbd runs as: "" (the test's own) unless the test
// runs as root, which mariadbd refuses; then mysql, and dir is opened to it.
func mariadbdUser(t testing.TB, dir string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		return ""
	}
	if _, err := user.Lookup("mysql"); err != nil {
		t.Fatalf("running as root, mariadbd runs as the mysql user: %v", err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return "mysql"
}

// chownTree gives the directory tree to the user mariadbd runs as ("" leaves it).
func chownTree(t testing.TB, owner, dir string) {
	t.Helper()
	if owner == "" {
		return
	}
	if out, err := exec.Command("chown", "-R", owner+":"+owner, dir).CombinedOutput(); err != nil {
		t.Fatalf("chown %s: %v\n%s", dir, err, out)
	}
}

// installSystemDB creates the system tables in datadir, root logging in without a password.
func installSystemDB(t testing.TB, datadir, owner string) {
	t.Helper()
	args := []string{"--no-defaults", "--datadir=" + datadir, "--auth-root-authentication-method=normal", "--skip-test-db"}
	if owner != "" {
		args = append(args, "--user="+owner)
	}
	if out, err := exec.Command("mariadb-install-db", args...).CombinedOutput(); err != nil {
		t.Fatalf("mariadb-install-db: %v\n%s", err, out)
	}
}

// mariadbdProcess is one mariadbd started by a test: its directory (data, socket, logs)
// and, while it runs, its process.
type mariadbdProcess struct {
	name  string // for failure messages
	dir   string
	port  int
	owner string

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
}

// args are the options every test server gets, before its role's.
func (p *mariadbdProcess) args() []string {
	args := []string{
		"--no-defaults",
		"--datadir=" + filepath.Join(p.dir, "data"),
		"--socket=" + filepath.Join(p.dir, "mysqld.sock"),
		"--pid-file=" + filepath.Join(p.dir, "mysqld.pid"),
		"--log-error=" + filepath.Join(p.dir, "error.log"),
		"--tmpdir=" + filepath.Join(p.dir, "tmp"),
		fmt.Sprintf("--port=%d", p.port),
		"--bind-address=127.0.0.1",
		"--skip-name-resolve",
		"--innodb-buffer-pool-size=64M",
		"--innodb-log-file-size=64M",
		"--max-connections=500",
	}
	if p.owner != "" {
		args = append(args, "--user="+p.owner)
	}
	return args
}

// start runs mariadbd with the common options and extra, in a process group of its own
// (so kill reaches whatever it started).
func (p *mariadbdProcess) start(t testing.TB, extra ...string) {
	t.Helper()
	out, err := os.OpenFile(filepath.Join(p.dir, "stdout.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(mariadbd, append(p.args(), extra...)...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		out.Close()
		t.Fatalf("start %s: %v", p.name, err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); out.Close(); close(done) }()
	p.mu.Lock()
	p.cmd, p.done = cmd, done
	p.mu.Unlock()
}

// running returns the process and its exit channel, nil when never started.
func (p *mariadbdProcess) running() (*exec.Cmd, chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cmd, p.done
}

// kill stops the server at once (SIGKILL), as a crash would, and waits for it to be gone.
func (p *mariadbdProcess) kill() {
	cmd, done := p.running()
	if cmd == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	<-done
}

// signal sends sig to the server's process group, if it runs.
func (p *mariadbdProcess) signal(sig syscall.Signal) {
	if cmd, _ := p.running(); cmd != nil {
		_ = syscall.Kill(-cmd.Process.Pid, sig)
	}
}

// stop asks the server to shut down (SIGTERM) and kills it after grace.
func (p *mariadbdProcess) stop(grace time.Duration) {
	cmd, done := p.running()
	if cmd == nil {
		return
	}
	select {
	case <-done:
		return
	default:
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(grace):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
}

// exited reports whether the process has ended.
func (p *mariadbdProcess) exited() bool {
	_, done := p.running()
	select {
	case <-done:
		return true
	default:
		return false
	}
}

// open returns a root handle on the server (no database).
func (p *mariadbdProcess) open(t testing.TB) *sql.DB {
	t.Helper()
	db, err := sql.Open("mysql", fmt.Sprintf("root@tcp(127.0.0.1:%d)/?timeout=2s&parseTime=true", p.port))
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// tail is the end of the server's error log, for a failure message.
func (p *mariadbdProcess) tail() string {
	b, _ := os.ReadFile(filepath.Join(p.dir, "error.log"))
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}
