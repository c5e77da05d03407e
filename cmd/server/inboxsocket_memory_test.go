package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"messages/models"
	"messages/models/dbtest"
	"messages/models/session"
)

// TestMain lets this test binary be the client process of TestInboxSocketMemory, so the
// sockets' client side does not count in the server's memory.
func TestMain(m *testing.M) {
	if os.Getenv(socketClientsEnv) == "1" {
		os.Exit(holdInboxSockets(os.Stdin, os.Stdout))
	}
	os.Exit(m.Run())
}

// socketClientsEnv makes the test binary hold inbox sockets instead of testing.
const socketClientsEnv = "MESSAGES_TEST_HOLD_INBOX_SOCKETS"

// socketClients is what the client process is asked to open: per token, that many
// sockets.
type socketClients struct {
	Base     string   `json:"base"`
	Tokens   []string `json:"tokens"`
	PerToken int      `json:"perToken"`
}

// holdInboxSockets reads a socketClients line, opens the sockets, prints "open" and
// their number, and holds them until its input ends; each further line it reads is
// answered with how many notification_received messages the sockets got.
func holdInboxSockets(in io.Reader, out io.Writer) int {
	r := bufio.NewReaderSize(in, 1<<20)
	line, err := r.ReadBytes('\n')
	var spec socketClients
	if err == nil {
		err = json.Unmarshal(line, &spec)
	}
	if err != nil {
		fmt.Fprintln(out, "error", err)
		return 1
	}
	var conns []*websocket.Conn
	var received atomic.Int64
	for _, token := range spec.Tokens {
		for range spec.PerToken {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			c, _, err := websocket.Dial(ctx, inboxSocketURL(spec.Base, token), nil)
			cancel()
			if err != nil {
				fmt.Fprintln(out, "error", err)
				return 1
			}
			// A reader, so pongs and close frames are taken.
			go func() {
				for {
					_, b, err := c.Read(context.Background())
					if err != nil {
						return
					}
					if strings.Contains(string(b), `"event":"notification_received"`) {
						received.Add(1)
					}
				}
			}()
			conns = append(conns, c)
		}
	}
	fmt.Fprintln(out, "open", len(conns))
	for {
		if _, err := r.ReadBytes('\n'); err != nil {
			break
		}
		fmt.Fprintln(out, "received", received.Load())
	}
	for _, c := range conns {
		_ = c.CloseNow()
	}
	return 0
}

// serverMemory is what the server process holds: heap and goroutine stacks in use after
// a collection, goroutines, and its resident set.
type serverMemory struct {
	heap, stacks, rss uint64
	goroutines        int
}

func measureServer(t *testing.T) serverMemory {
	t.Helper()
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return serverMemory{heap: m.HeapInuse, stacks: m.StackInuse, rss: residentBytes(t), goroutines: runtime.NumGoroutine()}
}

// residentBytes is this process's VmRSS.
func residentBytes(t *testing.T) uint64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmRSS in /proc/self/status")
	return 0
}

// What an idle inbox socket costs the server: 2,000 sockets (10 per subscriber) held by
// another process, the server's heap, stacks and goroutines measured here before and
// after. docs/inbox.md has the figure.
func TestInboxSocketMemory(t *testing.T) {
	const subscribers, perSubscriber = 200, 10
	w := newSessionWorld(t, "mysql", "--max-connections-per-address", "0",
		"--session-rate-limit", "100000", "--session-rate-burst", "100000")
	signer, err := session.NewSigner(time.Now, []byte(sessionSecret))
	if err != nil {
		t.Fatal(err)
	}
	caller := models.Caller{KeyID: w.keyID, EnvironmentID: w.env.ID, OrganizationID: w.env.OrganizationID}
	spec := socketClients{Base: w.srv.base, PerToken: perSubscriber}
	for i := range subscribers {
		// The last is alice, a subscriber with a row, to whom a message is written below.
		name := fmt.Sprintf("idle-%d", i)
		if i == subscribers-1 {
			name = "alice"
		}
		token, _, err := signer.Issue(caller, name, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		spec.Tokens = append(spec.Tokens, token)
	}
	// Warm the paths a socket takes (the first socket's one-time allocations are not a
	// socket's), then measure.
	warm := mustDialInbox(t, w.srv.base, spec.Tokens[0])
	_ = warm.conn.Close(websocket.StatusNormalClosure, "")
	<-warm.closed
	time.Sleep(200 * time.Millisecond)
	before := measureServer(t)

	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), socketClientsEnv+"=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = stdin.Close(); _ = cmd.Wait() }()
	line, _ := json.Marshal(spec)
	if _, err := stdin.Write(append(line, '\n')); err != nil {
		t.Fatal(err)
	}
	out := bufio.NewReader(stdout)
	reply, err := out.ReadString('\n')
	n := subscribers * perSubscriber
	if err != nil || reply != fmt.Sprintf("open %d\n", n) {
		t.Fatalf("client process: %q %v", reply, err)
	}
	// The server's side of the last sockets settles.
	time.Sleep(time.Second)
	after := measureServer(t)

	per := func(a, b uint64) float64 { return (float64(a) - float64(b)) / float64(n) }
	heap, stacks, rss := per(after.heap, before.heap), per(after.stacks, before.stacks), per(after.rss, before.rss)
	goroutines := float64(after.goroutines-before.goroutines) / float64(n)
	t.Logf("%d idle inbox sockets: per socket %.0f B heap + %.0f B stacks = %.1f KB; RSS %.1f KB; %.2f goroutines",
		n, heap, stacks, (heap+stacks)/1024, rss/1024, goroutines)
	if goroutines > 1.05 {
		t.Errorf("%.2f goroutines per idle socket, want 1 (its reader)", goroutines)
	}
	// Measured: 13 KB (9 KB of heap, 4 KB of the reader's stack).
	if heap+stacks > 20<<10 {
		t.Errorf("%.1f KB per idle socket, want under 20 KB", (heap+stacks)/1024)
	}

	// The sockets are live, not merely open: a message to alice reaches her ten.
	dbtest.RawMessage(t, w.store.DB(), w.env, w.alice1.SubscriberID, nil)
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, err := stdin.Write([]byte("count\n")); err != nil {
			t.Fatal(err)
		}
		reply, err := out.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if reply == fmt.Sprintf("received %d\n", perSubscriber) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("alice's sockets: %q within 5 s, want %d", reply, perSubscriber)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
