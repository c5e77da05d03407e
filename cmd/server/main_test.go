package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"messages/models"
	"messages/models/dbtest"
	"messages/models/store"
)

// syncBuffer is a bytes.Buffer safe for the server's goroutines to write while the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// running is a server started in-process on a free loopback port.
type running struct {
	base   string
	stderr *syncBuffer
	stop   func() int
}

// start runs `server serve` with args until the test stops it, and returns once it listens.
func start(t *testing.T, args ...string) *running {
	t.Helper()
	return startWith(t, nil, args...)
}

// startWith is start with opts added to the server's store: a test's seam into it.
func startWith(t *testing.T, opts []store.OpenOption, args ...string) *running {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stderr := &syncBuffer{}
	a := newApp(io.Discard, stderr)
	a.storeOptions = opts
	ready := make(chan string, 1)
	a.ready = func(addr string) { ready <- addr }
	exit := make(chan int, 1)
	go func() { exit <- a.run(ctx, append([]string{"server", "serve", "--addr", "127.0.0.1:0"}, args...)) }()
	r := &running{stderr: stderr}
	var once sync.Once
	code := -1
	r.stop = func() int {
		once.Do(func() { cancel(); code = <-exit })
		return code
	}
	t.Cleanup(func() { r.stop() })
	select {
	case addr := <-ready:
		r.base = "http://" + addr
	case c := <-exit:
		exit <- c // for the cleanup's stop, which waits for the exit code
		t.Fatalf("server exited with %d before listening:\n%s", c, stderr.String())
	case <-time.After(60 * time.Second):
		t.Fatalf("server did not listen within 60s:\n%s", stderr.String())
	}
	return r
}

// productionStore points the servers a test starts at databaseURL in production mode,
// and returns that database migrated and open for the test to fill.
func productionStore(t *testing.T, databaseURL string) *store.Store {
	t.Helper()
	t.Setenv("DATABASE_URL", databaseURL)
	t.Setenv("APP_ENV", "production")
	ctx := context.Background()
	st, err := store.Open(ctx, databaseURL, store.DefaultPool)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	return st
}

// cli runs one admin command in-process and returns its exit code and outputs.
// createKey runs apikey create for the environment and returns the key and the
// environment's application identifier, failing unless the output is exactly
// "applicationIdentifier: <id>" and then the key alone on the last line.
func createKey(t *testing.T, environmentID, name string) (key, applicationIdentifier string) {
	t.Helper()
	code, stdout, stderr := runCLI(t, "", "apikey", "create", "--environment-id", environmentID, "--name", name)
	if code != 0 {
		t.Fatalf("apikey create exited %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "applicationIdentifier: ") || len(lines[1]) != 64 || strings.ContainsAny(lines[1], " ") {
		t.Fatalf("apikey create printed %q, want the application identifier line, then the key alone", stdout)
	}
	return lines[1], strings.TrimPrefix(lines[0], "applicationIdentifier: ")
}

func runCLI(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if stdin != "" {
		f, err := os.CreateTemp(t.TempDir(), "stdin")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteString(stdin); err != nil {
			t.Fatal(err)
		}
		args = append(args, "--file", f.Name())
	}
	code := newApp(&stdout, &stderr).run(context.Background(), append([]string{"server"}, args...))
	return code, stdout.String(), stderr.String()
}

func get(t *testing.T, url, key string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "ApiKey "+key)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, body
}

func listPage(t *testing.T, base, key, query string) models.MessagesPage {
	t.Helper()
	status, body := get(t, base+"/v1/messages"+query, key)
	if status != http.StatusOK {
		t.Fatalf("GET /v1/messages%s: %d %s", query, status, body)
	}
	var page models.MessagesPage
	if err := json.Unmarshal(body, &page); err != nil {
		t.Fatal(err)
	}
	return page
}

// The first run with nothing configured creates the embedded database, loads the demo,
// logs a working curl line, and keeps the same key across a restart.
func TestFirstRunLoadsDemoAndKeepsKey(t *testing.T) {
	t.Chdir(t.TempDir())
	t.Setenv("DATABASE_URL", "")
	os.Unsetenv("DATABASE_URL")
	t.Setenv("APP_ENV", "")
	os.Unsetenv("APP_ENV")

	srv := start(t)
	keyFile, err := os.ReadFile("data/demo-api-key")
	if err != nil {
		t.Fatalf("demo key file: %v", err)
	}
	key := strings.TrimSpace(string(keyFile))
	if !strings.Contains(srv.stderr.String(), `curl -H "Authorization: ApiKey `+key+`" http://`) {
		t.Fatalf("log has no ready-to-paste curl line with the demo key:\n%s", srv.stderr.String())
	}
	page := listPage(t, srv.base, key, "?limit=1000")
	if page.TotalCount < 100 || len(page.Data) != page.TotalCount {
		t.Fatalf("demo has %d messages (%d listed), want a couple of hundred", page.TotalCount, len(page.Data))
	}
	channels := map[models.ChannelType]int{}
	buttons := 0
	for _, m := range page.Data {
		channels[m.Channel]++
		if m.CTA.Action != nil && len(m.CTA.Action.Buttons) > 0 {
			buttons++
		}
		if m.Subscriber == nil || m.Template == nil {
			t.Fatalf("message %s lacks its subscriber or template", m.ID)
		}
	}
	if len(channels) != len(models.Channels) || buttons == 0 {
		t.Fatalf("demo covers channels %v and has %d messages with buttons; want all five and some", channels, buttons)
	}
	if status, body := get(t, srv.base+"/", ""); status != http.StatusOK || !bytes.Contains(body, []byte("graphiql")) {
		t.Fatalf("playground: %d %.200s", status, body)
	}
	if code := srv.stop(); code != 0 {
		t.Fatalf("graceful stop exited %d:\n%s", code, srv.stderr.String())
	}

	again := start(t)
	keyFile2, err := os.ReadFile("data/demo-api-key")
	if err != nil || strings.TrimSpace(string(keyFile2)) != key {
		t.Fatalf("demo key changed across restart: %q -> %q (%v)", key, keyFile2, err)
	}
	if page2 := listPage(t, again.base, key, "?limit=1"); page2.TotalCount != page.TotalCount {
		t.Fatalf("restart changed the demo from %d to %d messages", page.TotalCount, page2.TotalCount)
	}
}

// In production against MySQL: no playground, no demo, keys from the CLI, health endpoints.
func TestProductionOnMySQL(t *testing.T) {
	url := dbtest.URL(t, store.DialectMySQL)
	t.Setenv("DATABASE_URL", url)
	t.Setenv("APP_ENV", "production")

	key, app := createKey(t, "660000000000000000000001", "ci")
	if code, out, _ := runCLI(t, "", "apikey", "list"); code != 0 || !strings.Contains(out, "660000000000000000000001") ||
		!strings.Contains(out, app) || strings.Contains(out, key) || !strings.Contains(out, "hash only") {
		t.Fatalf("apikey list (%d) must show the environment, its application, that no secret sealed the key, and never the key:\n%s", code, out)
	}

	srv := start(t)
	if page := listPage(t, srv.base, key, ""); page.TotalCount != 0 || page.PageSize != 10 || page.Data == nil {
		t.Fatalf("empty environment page: %+v", page)
	}
	if status, body := get(t, srv.base+"/", ""); status != http.StatusNotFound {
		t.Fatalf("playground must be absent in production, got %d %.100s", status, body)
	}
	for _, path := range []string{"/healthz", "/readyz", "/openapi.json", "/metrics"} {
		if status, body := get(t, srv.base+path, ""); status != http.StatusOK {
			t.Fatalf("%s: %d %s", path, status, body)
		}
	}
	// Refused before it runs: 200 in application/json (GraphQL over HTTP), with the code.
	status, body := postGraphQL(t, srv.base, key, `{ __schema { queryType { name } } }`)
	if status != http.StatusOK || !bytes.Contains(body, []byte("INTROSPECTION_DISABLED")) {
		t.Fatalf("introspection must be off in production: %d %s", status, body)
	}
	if strings.Contains(srv.stderr.String(), key) {
		t.Fatal("the API key appears in the log")
	}

	list := func() string {
		_, out, _ := runCLI(t, "", "apikey", "list")
		return out
	}
	id := strings.Fields(strings.Split(list(), "\n")[1])[0]
	if code, _, stderr := runCLI(t, "", "apikey", "revoke", id); code != 0 {
		t.Fatalf("revoke: %s", stderr)
	}
	// The CLI is another process: the server refuses the key within AUTH_CACHE_TTL.
	refusedWithinAuthTTL(t, func() int { status, _ := get(t, srv.base+"/v1/messages", key); return status })
}

// refusedWithinAuthTTL polls until status answers 401, failing when that takes longer
// than AUTH_CACHE_TTL and a second: how long an instance may still trust a key revoked
// elsewhere.
func refusedWithinAuthTTL(t *testing.T, status func() int) {
	t.Helper()
	deadline := time.Now().Add(store.DefaultAuthTTL + time.Second)
	for {
		got := status()
		if got == http.StatusUnauthorized {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("revoked key still answered %d after %s, want 401", got, store.DefaultAuthTTL+time.Second)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func postGraphQL(t *testing.T, base, key, query string) (int, []byte) {
	t.Helper()
	b, _ := json.Marshal(map[string]string{"query": query})
	req, err := http.NewRequest(http.MethodPost, base+"/graphql", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "ApiKey "+key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res.StatusCode, body
}

// seed, export, import into another database and export again: the same bytes.
func TestSeedExportImportRoundTrip(t *testing.T) {
	const env = "670000000000000000000001"
	for _, dialect := range dbtest.Dialects {
		t.Run(dialect, func(t *testing.T) {
			t.Setenv("DATABASE_URL", dbtest.URL(t, dialect))
			if code, _, stderr := runCLI(t, "", "seed", "--seed", "3", "--messages", "150", "--subscribers", "7", "--templates", "3", "--environment-id", env); code != 0 {
				t.Fatalf("seed: %s", stderr)
			}
			code, first, stderr := runCLI(t, "", "export", "--environment-id", env)
			if code != 0 || strings.Count(first, "\n") != 150 {
				t.Fatalf("export (%d) wrote %d lines: %s", code, strings.Count(first, "\n"), stderr)
			}
			t.Setenv("DATABASE_URL", dbtest.URL(t, dialect))
			if code, _, stderr := runCLI(t, first, "import"); code != 0 {
				t.Fatalf("import: %s", stderr)
			}
			_, second, _ := runCLI(t, "", "export", "--environment-id", env)
			if first != second {
				t.Fatal("export after import differs from the original export")
			}
			bad := strings.Replace(first, `"channel":"`, `"channel":"fax","x":"`, 1)
			lines := strings.SplitN(bad, "\n", 2)
			code, _, stderr = runCLI(t, lines[1]+lines[0]+"\n", "import")
			if code != 1 || !strings.Contains(stderr, "line 150") {
				t.Fatalf("bad last line: exit %d, stderr %q; want exit 1 naming line 150", code, stderr)
			}
		})
	}
}

func TestUsageErrors(t *testing.T) {
	t.Setenv("DATABASE_URL", "sqlite:"+t.TempDir()+"/x.db")
	if code, _, stderr := runCLI(t, "", "--app-env", "staging", "migrate"); code != 2 || !strings.Contains(stderr, "APP_ENV") {
		t.Fatalf("bad APP_ENV: exit %d, %q", code, stderr)
	}
	if code, _, stderr := runCLI(t, "", "apikey", "create"); code == 0 || !strings.Contains(stderr, "environment-id") {
		t.Fatalf("missing --environment-id: exit %d, %q", code, stderr)
	}
	code, stdout, _ := runCLI(t, "", "--help")
	if code != 0 || !strings.Contains(stdout, "DATABASE_URL") || !strings.Contains(stdout, "seed") {
		t.Fatalf("--help (exit %d) must list commands and variables:\n%s", code, stdout)
	}
}
