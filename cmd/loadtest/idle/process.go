package idle

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// process is a server this benchmark started, and where its output goes.
type process struct {
	side    string
	cmd     *exec.Cmd
	logPath string
	base    string // http://127.0.0.1:PORT
	exited  chan struct{}
}

// start starts side's server, its output in a file under dir, and waits until it answers.
func start(ctx context.Context, c config, side, dir string) (*process, error) {
	var cmd *exec.Cmd
	var ready string
	switch side {
	case sideServer, sideServerSSE:
		addr := "127.0.0.1:" + strconv.Itoa(c.serverPort)
		cmd = exec.Command(c.serverBin, "serve", "--addr", addr, "--websocket-ping", c.ping.String())
		cmd.Env = append(os.Environ(), "DATABASE_URL="+c.databaseURL)
		ready = "http://" + addr + "/readyz"
	case sideReference:
		cmd = exec.Command(c.node, "server.mjs")
		cmd.Dir = c.referenceDir
		cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(c.referencePort), "NODE_ENV=production")
		ready = "http://127.0.0.1:" + strconv.Itoa(c.referencePort) + "/"
	default:
		return nil, fmt.Errorf("unknown side %q", side)
	}
	logPath := filepath.Join(dir, side+".log")
	out, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer out.Close()
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the %s: %w", side, err)
	}
	p := &process{side: side, cmd: cmd, logPath: logPath, base: strings.TrimSuffix(strings.TrimSuffix(ready, "/"), "/readyz"), exited: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.exited) }()
	if err := p.waitReady(ctx, ready); err != nil {
		p.stop()
		return nil, err
	}
	return p, nil
}

// pid is the server's own process id: its RSS and CPU are what is measured.
func (p *process) pid() int { return p.cmd.Process.Pid }

// waitReady polls url until it answers 200, the process exits, or a minute passes.
func (p *process) waitReady(ctx context.Context, url string) error {
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-p.exited:
			return fmt.Errorf("the %s exited before it was ready:\n%s", p.side, p.logTail())
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	return fmt.Errorf("the %s was not ready within a minute:\n%s", p.side, p.logTail())
}

// alive reports whether the process is still running.
func (p *process) alive() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// stop ends the process: SIGTERM, then SIGKILL after 20 s.
func (p *process) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(20 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

// logTail is the end of the process's output, for an error.
func (p *process) logTail() string {
	b, err := os.ReadFile(p.logPath)
	if err != nil {
		return err.Error()
	}
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}

// errExited is a server that ended while it was measured.
var errExited = errors.New("the server exited while it was measured")
