package main

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"messages/models/dbtest"
	"messages/models/keyseal"
	"messages/models/store"
)

// logRecord is the first JSON log record of log whose message begins with msg, nil
// when there is none.
func logRecord(log, msg string) map[string]any {
	for _, line := range strings.Split(log, "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) == nil && strings.HasPrefix(fmt.Sprint(rec["msg"]), msg) {
			return rec
		}
	}
	return nil
}

// The API key secrets of these tests: the one keys are sealed under, and others.
const (
	secretA = "api-key-secret-A-0123456789abcdef0123456789"
	secretB = "api-key-secret-B-0123456789abcdef0123456789"
	secretC = "api-key-secret-C-0123456789abcdef0123456789"
)

// serveRefused runs serve with args and returns its exit code and stderr, failing the
// test if it listens: a configuration it must refuse.
func serveRefused(t *testing.T, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	stderr := &syncBuffer{}
	a := newApp(io.Discard, stderr)
	listened := make(chan struct{}, 1)
	a.ready = func(string) { listened <- struct{}{}; cancel() }
	code := a.run(ctx, append([]string{"server", "serve", "--addr", "127.0.0.1:0"}, args...))
	select {
	case <-listened:
		t.Errorf("serve started and served (exit %d when stopped), want it refused:\n%s", code, stderr)
	default:
	}
	return code, stderr.String()
}

// openInboxSession opens a keyless inbox session for subscriberID with a subscriberHash
// keyed with key, as the platform's inbox client does.
func openInboxSession(t *testing.T, base, app, key, subscriberID string) inboxReply {
	t.Helper()
	mac := hmac.New(sha256.New, []byte(key))
	mac.Write([]byte(subscriberID))
	b, _ := json.Marshal(map[string]any{"applicationIdentifier": app, "subscriberHash": hex.EncodeToString(mac.Sum(nil)),
		"subscriber": map[string]string{"subscriberId": subscriberID}})
	return inboxCall(t, http.MethodPost, base+"/v1/inbox/session", "application/json", "", string(b))
}

// A secret that opens none of the sealed keys stops serve at start, naming how many it
// cannot open and what to set, and creates no key; one that opens some starts with an
// error record naming the others, and a session keyed with one of those is a 503 that says why, logged,
// instead of "subscriberHash does not match".
func TestAPIKeySecretThatOpensNoKeyIsRefused(t *testing.T) {
	databaseURL := dbtest.URL(t, store.DialectMySQL)
	productionStore(t, databaseURL)
	const env = "660000000000000000000031"
	t.Setenv("API_KEY_SECRET", secretA)
	keyA, app := createKey(t, env, "sealed under A")

	t.Run("start2WrongSecret", func(t *testing.T) {
		t.Setenv("API_KEY_SECRET", secretB)
		code, stderr := serveRefused(t)
		if code != 2 || !strings.Contains(stderr, "API_KEY_SECRET opens none of the 1 sealed API key") || !strings.Contains(stderr, "API_KEY_SECRET_PREVIOUS") {
			t.Errorf("serve exited %d, want 2 naming the one key it cannot open and what to set:\n%s", code, stderr)
		}
	})
	t.Run("start2NoSecret", func(t *testing.T) {
		t.Setenv("API_KEY_SECRET", "")
		code, stderr := serveRefused(t)
		if code != 2 || !strings.Contains(stderr, "API_KEY_SECRET is not set, and 1 API key is sealed") {
			t.Errorf("serve exited %d, want 2 naming the sealed key:\n%s", code, stderr)
		}
	})

	t.Run("create2WrongSecret", func(t *testing.T) {
		t.Setenv("API_KEY_SECRET", secretB)
		code, stdout, stderr := runCLI(t, "", "apikey", "create", "--environment-id", env, "--name", "sealed under B")
		if code != 2 || stdout != "" || !strings.Contains(stderr, "API_KEY_SECRET opens none of the 1 sealed API key") {
			t.Errorf("apikey create with a secret that opens no key exited %d, want 2 and no key:\n%s%s", code, stdout, stderr)
		}
	})

	// A key sealed under another secret, as an instance configured with it would seal it.
	sealerB, err := keyseal.New([]byte(secretB))
	if err != nil {
		t.Fatal(err)
	}
	underB, err := store.Open(context.Background(), databaseURL, store.DefaultPool, store.WithKeySealer(sealerB))
	if err != nil {
		t.Fatal(err)
	}
	defer underB.Close()
	keyB, _, err := underB.CreateAPIKey(context.Background(), env, "sealed under B")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("API_KEY_SECRET", secretA)
	if code, _, stderr := runCLI(t, "", "apikey", "create", "--environment-id", env, "--name", "another"); code != 0 ||
		!strings.Contains(stderr, "warning: API_KEY_SECRET opens 1 of the 2 sealed API keys") {
		t.Errorf("apikey create with a secret that opens some keys exited %d, want 0 with a warning:\n%s", code, stderr)
	}
	srv := start(t)
	if rec := logRecord(srv.stderr.String(), "API_KEY_SECRET opens 2 of the 3 sealed API keys"); rec["level"] != "ERROR" || rec["unopenable"] != 1.0 {
		t.Errorf("serve started without an error record naming the key it cannot open: %v\n%s", rec, srv.stderr)
	}
	if r := openInboxSession(t, srv.base, app, keyA, "ada"); r.status != http.StatusCreated {
		t.Fatalf("a session keyed with a key the secret opens: %d %s", r.status, r.body)
	}
	r := openInboxSession(t, srv.base, app, keyB, "ada")
	if msg := errorMessage(t, e2eReply{status: r.status, body: r.body}, http.StatusServiceUnavailable); !strings.Contains(msg, "not configured with") {
		t.Errorf("a session keyed with a key no secret opens: %q, want the server's configuration named", msg)
	}
	if strings.Contains(string(r.body), keyB) || strings.Contains(string(r.body), secretA) {
		t.Errorf("the answer leaks a key or secret: %s", r.body)
	}
	if rec := logRecord(srv.stderr.String(), "subscriberHash cannot be checked"); rec["level"] != "ERROR" || rec["environmentId"] != env || rec["unopenable"] != 1.0 {
		t.Errorf("the refused session is not logged with its environment and count: %v\n%s", rec, srv.stderr)
	}
}

// apikey reseal fails when a key could not be opened, saying how many; it refuses to run
// without a secret to seal under; --forget-unopenable is the way out of a lost secret.
func TestResealFailsOnKeysItCannotOpen(t *testing.T) {
	productionStore(t, dbtest.URL(t, store.DialectMySQL))
	t.Setenv("API_KEY_SECRET", secretA)
	createKey(t, "660000000000000000000032", "one")
	createKey(t, "660000000000000000000032", "two")

	t.Setenv("API_KEY_SECRET", secretB)
	if code, _, stderr := runCLI(t, "", "apikey", "reseal"); code != 1 || !strings.Contains(stderr, "2 keys could not be opened") {
		t.Errorf("reseal without the old secret exited %d, want 1 saying 2 keys could not be opened:\n%s", code, stderr)
	}
	t.Setenv("API_KEY_SECRET", "")
	if code, _, stderr := runCLI(t, "", "apikey", "reseal"); code != 2 || !strings.Contains(stderr, "API_KEY_SECRET") {
		t.Errorf("reseal with no secret exited %d, want 2 naming API_KEY_SECRET:\n%s", code, stderr)
	}
	t.Setenv("API_KEY_SECRET", secretB)
	t.Setenv("API_KEY_SECRET_PREVIOUS", secretA)
	if code, _, stderr := runCLI(t, "", "apikey", "reseal"); code != 0 || !strings.Contains(stderr, "resealed 2 keys") {
		t.Errorf("reseal with the old secret as previous exited %d:\n%s", code, stderr)
	}
	t.Setenv("API_KEY_SECRET_PREVIOUS", "")
	if code, _, stderr := runCLI(t, "", "apikey", "reseal"); code != 0 || !strings.Contains(stderr, "resealed 0 keys") {
		t.Errorf("reseal after the rotation exited %d:\n%s", code, stderr)
	}

	// The secret is lost: the keys are kept as hashes only, and serve starts again.
	t.Setenv("API_KEY_SECRET", secretC)
	if code, _, stderr := runCLI(t, "", "apikey", "reseal", "--forget-unopenable"); code != 0 ||
		!strings.Contains(stderr, "2 keys that no given secret opens now stored as hashes only") {
		t.Errorf("reseal --forget-unopenable exited %d:\n%s", code, stderr)
	}
	if _, out, _ := runCLI(t, "", "apikey", "list"); strings.Count(out, "active, hash only") != 2 {
		t.Errorf("apikey list after forgetting the seals:\n%s", out)
	}
	srv := start(t)
	if strings.Contains(srv.stderr.String(), "sealed API key") {
		t.Errorf("serve still finds keys it cannot open:\n%s", srv.stderr)
	}
}

// With only API_KEY_SECRET_PREVIOUS set, keys sealed under it still open, but no key is
// created: it would be sealed under the secret being retired.
func TestPreviousSecretNeverSeals(t *testing.T) {
	st := productionStore(t, dbtest.URL(t, store.DialectMySQL))
	const env = "660000000000000000000033"
	t.Setenv("API_KEY_SECRET", secretA)
	key, app := createKey(t, env, "before")

	t.Setenv("API_KEY_SECRET", "")
	t.Setenv("API_KEY_SECRET_PREVIOUS", secretA)
	code, stdout, stderr := runCLI(t, "", "apikey", "create", "--environment-id", env, "--name", "after")
	if code != 2 || !strings.Contains(stderr, "API_KEY_SECRET_PREVIOUS") || stdout != "" {
		t.Errorf("apikey create with only the previous secret exited %d, want 2 and no key:\n%s%s", code, stdout, stderr)
	}
	if keys, err := st.ListAPIKeys(context.Background(), env); err != nil || len(keys) != 1 {
		t.Errorf("keys after the refused create: %d, %v; want the one made before", len(keys), err)
	}
	srv := start(t)
	if r := openInboxSession(t, srv.base, app, key, "ada"); r.status != http.StatusCreated {
		t.Errorf("a key sealed under the previous secret no longer opens a session: %d %s", r.status, r.body)
	}
	if !strings.Contains(srv.stderr.String(), "API_KEY_SECRET is not set") {
		t.Errorf("serve with only the previous secret does not warn:\n%s", srv.stderr)
	}
}

// The development secret in ./data is never replaced while keys are sealed under it: a
// damaged or missing one is an error that says what to do, and the file is left as it is.
func TestDevelopmentSecretKept(t *testing.T) {
	srv := startDemo(t)
	if code := srv.stop(); code != 0 {
		t.Fatalf("first run exited %d:\n%s", code, srv.stderr)
	}
	secret, err := os.ReadFile("data/api-key-secret")
	if err != nil {
		t.Fatal(err)
	}

	for _, tt := range []struct {
		name, content string // content "" removes the file
		want          string
	}{
		{"start2Short", "too short\n", "data/api-key-secret holds 9 bytes"},
		{"start2Missing", "", "data/api-key-secret is missing"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.content == "" {
				os.Remove("data/api-key-secret")
			} else if err := os.WriteFile("data/api-key-secret", []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			code, stderr := serveRefused(t)
			if code != 2 || !strings.Contains(stderr, tt.want) || !strings.Contains(stderr, "restore") {
				t.Errorf("serve exited %d, want 2 saying %q and what to do:\n%s", code, tt.want, stderr)
			}
			got, err := os.ReadFile("data/api-key-secret")
			if tt.content == "" && !os.IsNotExist(err) || tt.content != "" && string(got) != tt.content {
				t.Errorf("the secret file was replaced: %q, %v", got, err)
			}
		})
	}

	if err := os.WriteFile("data/api-key-secret", secret, 0o600); err != nil {
		t.Fatal(err)
	}
	again := start(t)
	if strings.Contains(again.stderr.String(), "sealed API keys") {
		t.Errorf("the restored secret does not open every key:\n%s", again.stderr)
	}
}

// --help names the previous secret's value by its type, as every other flag's, not by a
// word of its description.
func TestHelpPlaceholderOfPreviousSecret(t *testing.T) {
	_, stdout, _ := runCLI(t, "", "--help")
	line := regexp.MustCompile(`(?m)^\s*--api-key-secret-previous\b.*$`).FindString(stdout)
	if !strings.HasPrefix(strings.TrimSpace(line), "--api-key-secret-previous string ") {
		t.Errorf("--help shows %q, want the placeholder value", line)
	}
}
