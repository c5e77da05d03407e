package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/urfave/cli/v3"

	"messages/models/dbtest"
	"messages/models/store"
)

// statusRows reads the table `migrate status` prints: version -> "name state".
func statusRows(t *testing.T, out string) map[string]string {
	t.Helper()
	rows := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for i := 0; sc.Scan(); i++ {
		f := strings.Fields(sc.Text())
		if i == 0 {
			if strings.Join(f, " ") != "VERSION NAME STATE APPLIED AT" {
				t.Fatalf("status header %q", sc.Text())
			}
			continue
		}
		if len(f) < 4 {
			t.Fatalf("status row %q", sc.Text())
		}
		rows[f[0]] = f[1] + " " + f[2]
	}
	return rows
}

// migrate status, down and up work one step at a time, on both dialects, and leave the
// database where they say.
func TestMigrateCommands(t *testing.T) {
	for _, dialect := range dbtest.Dialects {
		t.Run(dialect, func(t *testing.T) {
			t.Setenv("DATABASE_URL", dbtest.URL(t, dialect))
			run := func(want int, args ...string) (string, string) {
				t.Helper()
				code, stdout, stderr := runCLI(t, "", args...)
				if code != want {
					t.Fatalf("%v exited %d, want %d:\n%s%s", args, code, want, stdout, stderr)
				}
				return stdout, stderr
			}
			status := func() map[string]string {
				t.Helper()
				out, _ := run(0, "migrate", "status")
				return statusRows(t, out)
			}

			// Every migration, in order: the last two are rolled back and applied again.
			names := []string{"initial", "idempotency", "action_columns", "template_deleted_at_text", "message_changes",
				"message_counts", "template_versions", "subscriber_versions", "inbox_state", "inbox_sessions", "state_jobs", "message_severity", "message_deletions", "trusted_documents",
				"message_workflow_counts"}
			pending := map[string]string{}
			for i, name := range names {
				pending[fmt.Sprint(i+1)] = name + " pending"
			}
			if diff := cmp.Diff(pending, status()); diff != "" {
				t.Fatalf("fresh database status (-want +got):\n%s", diff)
			}

			n := len(names)
			last := fmt.Sprintf("%d %s", n, names[n-1])
			_, stderr := run(0, "migrate")
			for i, name := range names {
				if line := fmt.Sprintf("applied %d %s", i+1, name); !strings.Contains(stderr, line) {
					t.Errorf("migrate (no subcommand) must say %q:\n%s", line, stderr)
				}
			}
			if line := fmt.Sprintf("schema version %d, 0 pending", n); !strings.Contains(stderr, line) {
				t.Errorf("migrate (no subcommand) must say %q:\n%s", line, stderr)
			}
			if got := status(); got[fmt.Sprint(n)] != names[n-1]+" applied" || got["1"] != "initial applied" {
				t.Fatalf("status after migrate: %v", got)
			}

			if _, stderr := run(0, "migrate", "down"); !strings.Contains(stderr, "rolled back "+last) ||
				!strings.Contains(stderr, fmt.Sprintf("schema version %d, 1 pending", n-1)) {
				t.Errorf("migrate down said:\n%s", stderr)
			}
			if got := status(); got[fmt.Sprint(n)] != names[n-1]+" pending" || got[fmt.Sprint(n-1)] != names[n-2]+" applied" {
				t.Fatalf("status after down: %v", got)
			}
			if _, stderr := run(0, "migrate", "up"); !strings.Contains(stderr, "applied "+last) {
				t.Errorf("migrate up said:\n%s", stderr)
			}
			if _, stderr := run(0, "migrate", "up"); strings.Contains(stderr, "applied") || !strings.Contains(stderr, "up to date") {
				t.Errorf("a second migrate up must apply nothing:\n%s", stderr)
			}

			for range len(pending) {
				run(0, "migrate", "down")
			}
			if diff := cmp.Diff(pending, status()); diff != "" {
				t.Fatalf("status after rolling everything back (-want +got):\n%s", diff)
			}
			if _, stderr := run(1, "migrate", "down"); !strings.Contains(stderr, "nothing to roll back") {
				t.Errorf("down with nothing applied said:\n%s", stderr)
			}
		})
	}
}

// newerSchema returns the URL of a migrated database on which a newer binary has applied
// one more migration, and the versions involved.
func newerSchema(t *testing.T, dialect string) (url string, binary, database int64) {
	t.Helper()
	url = dbtest.URL(t, dialect)
	ctx := context.Background()
	s, err := store.Open(ctx, url, store.DefaultPool)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	status, err := s.MigrationStatus(ctx)
	if err != nil {
		t.Fatal(err)
	}
	binary = status[len(status)-1].Version
	database = binary + 1
	if err := s.DB().Exec("INSERT INTO goose_db_version (version_id, is_applied) VALUES (?, ?)", database, true).Error; err != nil {
		t.Fatal(err)
	}
	return url, binary, database
}

// A database a newer binary migrated: serve refuses at once (no retrying: waiting cannot
// fix it) naming both versions; migrate up and down refuse; status shows the stranger.
func TestNewerSchemaRefused(t *testing.T) {
	for _, dialect := range dbtest.Dialects {
		t.Run(dialect, func(t *testing.T) {
			url, binary, database := newerSchema(t, dialect)
			t.Setenv("DATABASE_URL", url)
			t.Setenv("APP_ENV", "production")
			versions := regexp.MustCompile(fmt.Sprintf(`version %d is newer than this binary's %d: upgrade`, database, binary))

			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			stderr := &syncBuffer{}
			start := time.Now()
			code := newApp(io.Discard, stderr).run(ctx, []string{"server", "serve", "--addr", "127.0.0.1:0"})
			if code != 1 || !versions.MatchString(stderr.String()) {
				t.Fatalf("serve exited %d after %s, want 1 naming both versions:\n%s", code, time.Since(start), stderr)
			}
			if strings.Contains(stderr.String(), "retrying") {
				t.Errorf("serve retried a newer schema:\n%s", stderr)
			}

			for _, args := range [][]string{{"migrate"}, {"migrate", "down"}, {"export", "--environment-id", "650000000000000000000001"}} {
				if code, _, stderr := runCLI(t, "", args...); code != 1 || !versions.MatchString(stderr) {
					t.Errorf("%v exited %d, want 1 naming both versions:\n%s", args, code, stderr)
				}
			}
			code, stdout, stderr2 := runCLI(t, "", "migrate", "status")
			if code != 0 || statusRows(t, stdout)[fmt.Sprint(database)] != "(unknown) applied" || !versions.MatchString(stderr2) {
				t.Errorf("status exited %d, want 0 listing version %d as unknown, with a note:\n%s%s", code, database, stdout, stderr2)
			}
		})
	}
}

// helpCommands lists every command of the tree with its full name.
func helpCommands(cmd *cli.Command, path []string) [][]string {
	path = append(path, cmd.Name)
	out := [][]string{path}
	for _, sub := range cmd.Commands {
		out = append(out, helpCommands(sub, append([]string(nil), path...))...)
	}
	return out
}

// Every command's --help lists each of its flags (and its parents') with a description,
// its environment variable and its default; the root documents the precedence rule and
// the exit codes.
func TestHelpListsFlagsVariablesAndDefaults(t *testing.T) {
	t.Setenv("DATABASE_URL", "sqlite:"+t.TempDir()+"/x.db")
	root := newApp(io.Discard, io.Discard).command()
	lookup := func(path []string) *cli.Command {
		cmd := root
		for _, name := range path[1:] {
			cmd = cmd.Command(name)
		}
		return cmd
	}
	for _, path := range helpCommands(root, nil) {
		t.Run(strings.Join(path, " "), func(t *testing.T) {
			code, stdout, stderr := runCLI(t, "", append(path[1:], "--help")...)
			if code != 0 {
				t.Fatalf("--help exited %d: %s", code, stderr)
			}
			for c := lookup(path); c != nil; c = parentOf(root, c) {
				for _, f := range c.Flags {
					name := f.Names()[0]
					if name == "help" {
						continue
					}
					line := regexp.MustCompile(`(?m)^\s*--` + regexp.QuoteMeta(name) + `\b.*$`).FindString(stdout)
					if line == "" {
						t.Errorf("--%s is missing from the help:\n%s", name, stdout)
						continue
					}
					doc := f.(cli.DocGenerationFlag)
					if doc.GetUsage() == "" {
						t.Errorf("--%s has no description", name)
					}
					for _, env := range doc.GetEnvVars() {
						if !strings.Contains(line, "[$"+env+"]") {
							t.Errorf("--%s does not show its variable %s: %q", name, env, line)
						}
					}
					if v := doc.GetValue(); v != "" && v != "false" && !strings.Contains(line, "(default: ") {
						t.Errorf("--%s does not show its default %s: %q", name, v, line)
					}
				}
			}
		})
	}

	_, stdout, _ := runCLI(t, "", "--help")
	for _, want := range []string{"a flag wins over its environment variable, which wins over the default",
		"Exit codes: 0 success; 1 failure", "2 bad usage", "README.md"} {
		if !strings.Contains(strings.Join(strings.Fields(stdout), " "), want) {
			t.Errorf("root --help must say %q:\n%s", want, stdout)
		}
	}
	// The documented configuration (docs/operating.md's table) is all reachable from --help.
	_, serveHelp, _ := runCLI(t, "", "serve", "--help")
	for _, env := range []string{"DATABASE_URL", "APP_ENV", "DB_MAX_OPEN_CONNS", "ADDR", "GRAPHQL_INTROSPECTION",
		"REQUEST_TIMEOUT", "RATE_LIMIT", "RATE_BURST", "REDIS_URL", "IDEMPOTENCY_TTL", "AUTH_CACHE_TTL"} {
		if !strings.Contains(serveHelp, "[$"+env+"]") {
			t.Errorf("serve --help does not list %s", env)
		}
	}
}

// parentOf finds cmd's parent in the tree under root, nil for root (Lineage works only
// on a command that has run).
func parentOf(root, cmd *cli.Command) *cli.Command {
	for _, sub := range root.Commands {
		if sub == cmd {
			return root
		}
		if p := parentOf(sub, cmd); p != nil {
			return p
		}
	}
	return nil
}

// Exit codes: 2 for a mistake in the command line or configuration, with a message
// naming it; 1 for a failure; 0 otherwise.
func TestExitCodes(t *testing.T) {
	sqlite := "sqlite:" + t.TempDir() + "/x.db"
	tests := []struct {
		name   string
		env    map[string]string
		args   []string
		code   int
		stderr string
	}{
		{"usage2UnknownCommand", nil, []string{"mirgate"}, 2, `"mirgate" is not a command of server`},
		{"usage2UnknownSubcommand", nil, []string{"migrate", "sideways"}, 2, `"sideways" is not a command of server migrate`},
		{"usage2StrayArgument", nil, []string{"apikey", "list", "extra"}, 2, `unexpected argument "extra"`},
		{"usage2UnknownFlag", nil, []string{"serve", "--bogus"}, 2, "server serve --help"},
		{"usage2MissingFlag", nil, []string{"apikey", "create"}, 2, "environment-id"},
		{"usage2BadFlagValue", nil, []string{"--db-max-open-conns", "many", "migrate"}, 2, "db-max-open-conns"},
		{"usage2BadEnvDuration", map[string]string{"REQUEST_TIMEOUT": "5"}, []string{"serve"}, 2, `REQUEST_TIMEOUT="5" is not a duration`},
		{"usage2BadEnvNumber", map[string]string{"DB_MAX_OPEN_CONNS": "many"}, []string{"migrate"}, 2, `DB_MAX_OPEN_CONNS="many" is not a whole number`},
		{"usage2WrongScheme", map[string]string{"DATABASE_URL": "postgres://app:pw@db/x"}, []string{"migrate"}, 2,
			"mysql://user:password@host:3306/database or sqlite:path/to/file.db"},
		{"usage2NoDatabaseName", map[string]string{"DATABASE_URL": "mysql://app:pw@db:3306/"}, []string{"migrate", "status"}, 2, "names no database"},
		{"failure1Unreachable", map[string]string{"DATABASE_URL": "mysql://app:pw@127.0.0.1:1/x?timeout=2s"}, []string{"migrate", "status"}, 1,
			"MySQL at 127.0.0.1:1 is unreachable"},
		{"failure1NothingToRollBack", nil, []string{"migrate", "down"}, 1, "nothing to roll back"},
		{"ok0Status", nil, []string{"migrate", "status"}, 0, ""},
		{"ok0Help", nil, []string{"--help"}, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("DATABASE_URL", sqlite)
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			done := make(chan struct{})
			var code int
			var stderr string
			go func() {
				defer close(done)
				code, _, stderr = runCLI(t, "", tt.args...)
			}()
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				t.Fatalf("%v did not exit within 30s", tt.args)
			}
			if code != tt.code || !strings.Contains(stderr, tt.stderr) {
				t.Errorf("%v exited %d, want %d with %q on stderr:\n%s", tt.args, code, tt.code, tt.stderr, stderr)
			}
			if strings.Contains(stderr, ":pw@") {
				t.Errorf("the database password appears on stderr:\n%s", stderr)
			}
		})
	}
}

// serve logs its effective configuration at start as one record: every setting, where it
// came from (a flag beats the environment, which beats the default), passwords masked.
func TestServeLogsConfiguration(t *testing.T) {
	t.Setenv("DATABASE_URL", "mysql://app:db-s3cret@127.0.0.1:1/messages") // unreachable: serve keeps retrying
	t.Setenv("REDIS_URL", "redis://:redis-s3cret@127.0.0.1:1/0")
	t.Setenv("APP_ENV", "production")
	t.Setenv("RATE_BURST", "9")
	t.Setenv("RATE_LIMIT", "")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stderr := &syncBuffer{}
	exit := make(chan int, 1)
	go func() {
		exit <- newApp(io.Discard, stderr).run(ctx, []string{"server", "serve", "--addr", "127.0.0.1:0", "--rate-burst", "11"})
	}()
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(stderr.String(), "retrying") {
		if time.Now().After(deadline) {
			t.Fatalf("serve did not start retrying the database:\n%s", stderr)
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if code := <-exit; code != 0 {
		t.Fatalf("serve stopped with %d:\n%s", code, stderr)
	}

	type setting struct{ Value, Source string }
	var record map[string]json.RawMessage
	for _, line := range strings.Split(stderr.String(), "\n") {
		if strings.Contains(line, `"msg":"configuration"`) {
			if err := json.Unmarshal([]byte(line), &record); err != nil {
				t.Fatal(err)
			}
		}
	}
	if record == nil {
		t.Fatalf("no configuration record:\n%s", stderr)
	}
	got := map[string]setting{}
	for k, v := range record {
		var s setting
		if json.Unmarshal(v, &s) == nil && s.Source != "" {
			got[k] = s
		}
	}
	want := map[string]setting{
		"DATABASE_URL":      {"mysql://app:xxxxx@127.0.0.1:1/messages", "environment"},
		"APP_ENV":           {"production", "environment"},
		"DB_MAX_OPEN_CONNS": {fmt.Sprint(store.DefaultPool.MaxOpenConns), "default"},
		"ADDR":              {"127.0.0.1:0", "flag"},
		"RATE_BURST":        {"11", "flag"},
		"REDIS_URL":         {"redis://:xxxxx@127.0.0.1:1/0", "environment"},
		"REQUEST_TIMEOUT":   {"5s", "default"},
		"RATE_LIMIT":        {"50", "default"}, // an empty variable counts as unset
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s = %+v, want %+v", name, got[name], w)
		}
	}
	// Every flag of serve and of the root is in the record.
	root := newApp(io.Discard, io.Discard).command()
	for _, cmd := range []*cli.Command{root, root.Command("serve")} {
		for _, f := range cmd.Flags {
			doc, _ := f.(cli.DocGenerationFlag)
			if f.Names()[0] == "help" || doc == nil {
				continue
			}
			name := "--" + f.Names()[0]
			if envs := doc.GetEnvVars(); len(envs) > 0 {
				name = envs[0]
			}
			if _, ok := got[name]; !ok {
				t.Errorf("the configuration record lacks %s", name)
			}
		}
	}
	if strings.Contains(stderr.String(), "s3cret") {
		t.Errorf("a password appears in the log:\n%s", stderr)
	}
}
