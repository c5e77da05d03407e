package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Shopify/toxiproxy/v2"
	"github.com/google/go-cmp/cmp"
	"github.com/rs/zerolog"

	"messages/models"
	"messages/models/dbtest"
	"messages/models/store"
)

// faultProxy is toxiproxy, run in process on loopback, between the service and MariaDB.
// down cuts every open connection and refuses new ones; up lets them through again;
// toxics delay or swallow traffic. The shared server itself is never touched.
type faultProxy struct{ p *toxiproxy.Proxy }

func newFaultProxy(t *testing.T, upstream string) *faultProxy {
	t.Helper()
	srv := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop())
	p := toxiproxy.NewProxy(srv, "mariadb", "127.0.0.1:0", upstream)
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	return &faultProxy{p}
}

// addr is where the service connects; it stays the same across down and up.
func (f *faultProxy) addr() string { return f.p.Listen }

func (f *faultProxy) down() { f.p.Stop() }

func (f *faultProxy) up(t *testing.T) {
	t.Helper()
	if err := f.p.Start(); err != nil {
		t.Fatal(err)
	}
}

// toxic adds a toxic on the database's answers and returns its removal.
func (f *faultProxy) toxic(t *testing.T, kind string, attributes map[string]any) func() {
	t.Helper()
	b, err := json.Marshal(map[string]any{"name": kind, "type": kind, "stream": "downstream", "attributes": attributes})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.p.Toxics.AddToxicJson(strings.NewReader(string(b))); err != nil {
		t.Fatal(err)
	}
	return func() {
		if err := f.p.Toxics.RemoveToxic(context.Background(), kind); err != nil {
			t.Fatal(err)
		}
	}
}

// withHost returns databaseURL pointing at host instead, optionally with a password.
func withHost(t *testing.T, databaseURL, host, password string) string {
	t.Helper()
	u, err := url.Parse(databaseURL)
	if err != nil {
		t.Fatal(err)
	}
	u.Host = host
	if password != "" {
		u.User = url.UserPassword(u.User.Username(), password)
	}
	return u.String()
}

// reply is what one request got, and how long it took.
type reply struct {
	status int
	header http.Header
	body   []byte
	took   time.Duration
}

// faultClient bounds every request, so a hang fails the test instead of stalling it.
var faultClient = &http.Client{Timeout: 20 * time.Second}

func send(t *testing.T, method, url, key, body string) reply {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "ApiKey "+key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	start := time.Now()
	res, err := faultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return reply{status: res.StatusCode, header: res.Header, body: b, took: time.Since(start)}
}

// answeredBeforeDeadline waits for the reply of a request whose database connection was
// just cut: it must come before the request deadline would have answered it, since the
// server notices the cut itself.
func answeredBeforeDeadline(t *testing.T, done <-chan reply, deadline time.Duration) reply {
	t.Helper()
	select {
	case r := <-done:
		return r
	case <-time.After(deadline):
		t.Fatalf("no answer within the %s request deadline of the cut", deadline)
		return reply{}
	}
}

// unavailable503 checks a refusal for an unreachable database: 503, Retry-After, the
// error body with the safe message, and (for GraphQL) SERVICE_UNAVAILABLE.
func unavailable503(t *testing.T, what string, r reply) {
	t.Helper()
	if r.status != http.StatusServiceUnavailable {
		t.Fatalf("%s: status %d after %s, want 503: %s", what, r.status, r.took, r.body)
	}
	if got := r.header.Get("Retry-After"); got != "2" {
		t.Errorf("%s: Retry-After = %q, want 2", what, got)
	}
	var body struct {
		StatusCode int    `json:"statusCode"`
		Message    string `json:"message"`
		ErrorID    string `json:"errorId"`
		Errors     []struct {
			Message    string
			Extensions struct{ Code string }
		} `json:"errors"`
	}
	if err := json.Unmarshal(r.body, &body); err != nil {
		t.Fatalf("%s: body is not JSON: %s", what, r.body)
	}
	if strings.Contains(what, "graphql") {
		// Refused before the operation (its key unchecked) or by the operation itself
		// (its key trusted for AUTH_CACHE_TTL): either way GraphQL's errors say why.
		if len(body.Errors) == 0 || body.Errors[0].Extensions.Code != "SERVICE_UNAVAILABLE" || body.Errors[0].Message != models.UnavailableMessage {
			t.Errorf("%s: body %s, want an error %q with extensions.code SERVICE_UNAVAILABLE", what, r.body, models.UnavailableMessage)
		}
		return
	}
	if body.StatusCode != 503 || body.Message != models.UnavailableMessage {
		t.Errorf("%s: body %s, want statusCode 503 and %q", what, r.body, models.UnavailableMessage)
	}
}

// launch runs `server serve` on a free loopback port without waiting for the database,
// and returns once the port answers /healthz.
func launch(t *testing.T, args ...string) *running {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	stderr := &syncBuffer{}
	exit := make(chan int, 1)
	go func() {
		exit <- newApp(io.Discard, stderr).run(ctx, append([]string{"server", "serve", "--addr", addr}, args...))
	}()
	r := &running{base: "http://" + addr, stderr: stderr}
	var once sync.Once
	code := -1
	r.stop = func() int {
		once.Do(func() {
			cancel()
			select {
			case code = <-exit:
			case <-time.After(30 * time.Second):
				t.Errorf("server did not stop within 30s:\n%s", stderr.String())
			}
		})
		return code
	}
	t.Cleanup(func() { r.stop() })
	deadline := time.Now().Add(10 * time.Second)
	for {
		if res, err := faultClient.Get(r.base + "/healthz"); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return r
			}
		}
		select {
		case c := <-exit:
			t.Fatalf("server exited with %d before listening:\n%s", c, stderr.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("server did not answer /healthz within 10s:\n%s", stderr.String())
		}
	}
}

// eventually polls f every 100ms until it is true or within runs out.
func eventually(t *testing.T, within time.Duration, what string, f func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !f() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, within)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// storedMessage reads a message straight from MariaDB, bypassing proxy and service.
func storedMessage(t *testing.T, s *store.Store, id string) models.Message {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var m models.Message
	if err := s.DB().WithContext(ctx).Where("id = ?", id).Take(&m).Error; err != nil {
		t.Fatal(err)
	}
	// Where the mark is kept does not matter; AfterFind has folded it into CTA.
	m.ActionStatus, m.ActionResultType, m.ActionResultPayload = "", "", nil
	return m
}

// mark is one markMessageAction request and the state it asks for.
type mark struct {
	typ, status, payload string
}

func (m mark) path(subscriberID, messageID string) string {
	return "/v1/subscribers/" + subscriberID + "/messages/" + messageID + "/actions/" + m.typ
}

func (m mark) body() string { return `{"status":"` + m.status + `","payload":` + m.payload + `}` }

// wholeOrNothing fails unless after is before untouched, or before with exactly m applied.
func wholeOrNothing(t *testing.T, before, after models.Message, m mark) {
	t.Helper()
	rest := after
	rest.CTA = before.CTA
	// The change stamps are the database's: a mark moves changed_at, as it should.
	rest.InsertedAt, rest.ChangedAt = before.InsertedAt, before.ChangedAt
	if diff := cmp.Diff(before, rest); diff != "" {
		t.Fatalf("fields outside cta changed (-before +after):\n%s", diff)
	}
	if cmp.Equal(before.CTA, after.CTA) {
		return
	}
	var want models.CTA
	b, _ := json.Marshal(before.CTA)
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	want.Action.Status = models.MessageActionStatus(m.status)
	if want.Action.Result == nil {
		want.Action.Result = &models.CTAResult{}
	}
	want.Action.Result.Type = models.ButtonType(m.typ)
	want.Action.Result.Payload = models.JSON(m.payload)
	got, _ := json.Marshal(after.CTA)
	wantJSON, _ := json.Marshal(want)
	if !jsonEqual(t, got, wantJSON) {
		t.Fatalf("half-written: cta is neither as before nor as requested\nbefore    %s\nrequested %s\nafter     %s", b, wantJSON, got)
	}
}

func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatal(err)
	}
	return cmp.Equal(x, y)
}

// TestDatabaseFaults runs the service against MariaDB through a fault-injecting proxy:
// connections cut mid-request, the database down, blackholed and back, the service
// started while it is down, and a restart.
func TestDatabaseFaults(t *testing.T) {
	const requestTimeout = 3 * time.Second
	direct := dbtest.URL(t, store.DialectMySQL)
	st, err := store.Open(context.Background(), direct, store.DefaultPool)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	if err := st.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	tn := dbtest.NewTenant(t, st, "faults")
	sub := tn.Subscriber(t, "alice")
	msg := tn.Message(t, sub, tn.Template(t, "welcome"), nil)

	upstream, err := url.Parse(direct)
	if err != nil {
		t.Fatal(err)
	}
	proxy := newFaultProxy(t, upstream.Host)
	t.Setenv("DATABASE_URL", withHost(t, direct, proxy.addr(), ""))
	t.Setenv("APP_ENV", "production")
	srv := start(t, "--request-timeout", requestTimeout.String())
	list := srv.base + "/v1/messages?transactionId=" + msg.TransactionID
	graphql := `{"query":"{ messages { totalCount } }"}`

	if r := send(t, http.MethodGet, list, tn.Key, ""); r.status != http.StatusOK {
		t.Fatalf("healthy list: %d %s", r.status, r.body)
	}

	t.Run("mark503WhenCutWaitingForRowLock", func(t *testing.T) {
		// A transaction of the test's own holds the row, so the mark is certainly inside
		// its transaction, waiting for the row lock in its UPDATE, when the proxy cuts it.
		lock := st.DB().Begin()
		if err := lock.Exec("SELECT id FROM messages WHERE id = ? FOR UPDATE", msg.ID).Error; err != nil {
			t.Fatal(err)
		}
		defer lock.Rollback()
		before := storedMessage(t, st, msg.ID)
		m := mark{"secondary", "done", `{"locked":true}`}
		done := make(chan reply, 1)
		go func() {
			done <- send(t, http.MethodPost, srv.base+m.path(sub.SubscriberID, msg.ID), tn.Key, m.body())
		}()
		eventually(t, 5*time.Second, "the mark waiting for the row lock", func() bool {
			var n int64
			err := st.DB().Raw("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE DB = DATABASE() AND INFO LIKE 'UPDATE messages%' AND ID <> CONNECTION_ID()").Scan(&n).Error
			return err == nil && n > 0
		})
		proxy.down()
		r := answeredBeforeDeadline(t, done, requestTimeout)
		proxy.up(t)
		unavailable503(t, "mark cut while waiting for the row lock", r)
		if err := lock.Rollback().Error; err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(before, storedMessage(t, st, msg.ID)); diff != "" {
			t.Errorf("the cut mark changed the message (-before +after):\n%s", diff)
		}
	})

	t.Run("mark503WhenCutMidRequest", func(t *testing.T) {
		// Every answer of the database is delayed, so a mark takes several hundred
		// milliseconds; the proxy cuts it at points spread across that time.
		removeLatency := proxy.toxic(t, "latency", map[string]any{"latency": 50})
		defer removeLatency()
		var full time.Duration
		for _, m := range []mark{{"primary", "done", `{"warmup":1}`}, {"primary", "done", `{"warmup":2}`}} {
			proxy.down() // each timed mark starts with fresh connections, as the cut ones do
			proxy.up(t)
			r := send(t, http.MethodPost, srv.base+m.path(sub.SubscriberID, msg.ID), tn.Key, m.body())
			if r.status != http.StatusCreated {
				t.Fatalf("mark through a slow proxy: %d %s", r.status, r.body)
			}
			full = max(full, r.took)
		}
		for i, frac := range []float64{0.1, 0.3, 0.5, 0.7} {
			for try := 0; ; try++ {
				// Each try writes a payload of its own, so that a mark that changed the
				// message is told apart from one that did not.
				m := mark{[]string{"secondary", "primary"}[i%2], []string{"pending", "done"}[i%2], fmt.Sprintf(`{"cut":%d,"try":%d}`, i, try)}
				before := storedMessage(t, st, msg.ID)
				done := make(chan reply, 1)
				go func() {
					done <- send(t, http.MethodPost, srv.base+m.path(sub.SubscriberID, msg.ID), tn.Key, m.body())
				}()
				time.Sleep(time.Duration(frac * float64(full)))
				select {
				case r := <-done:
					// This mark was quicker than the timed ones (a loaded machine slows
					// some more than others) and answered before the cut: nothing was cut.
					// The next try is timed by this one.
					if r.status != http.StatusCreated {
						t.Fatalf("uncut mark: %d %s", r.status, r.body)
					}
					if try == 2 {
						t.Fatalf("the mark answered before the cut at %.0f%% three times (last %s)", frac*100, r.took)
					}
					full = r.took
					continue
				default:
				}
				proxy.down()
				r := answeredBeforeDeadline(t, done, requestTimeout)
				proxy.up(t)
				unavailable503(t, fmt.Sprintf("mark cut at %.0f%% of %s", frac*100, full), r)
				after := storedMessage(t, st, msg.ID)
				wholeOrNothing(t, before, after, m)
				t.Logf("cut at %.0f%% of %s: 503, message %s", frac*100, full, map[bool]string{true: "unchanged", false: "fully changed"}[cmp.Equal(before.CTA, after.CTA)])
				break
			}
		}
	})

	t.Run("requests503FastWhileDown", func(t *testing.T) {
		proxy.down()
		defer proxy.up(t)
		before := storedMessage(t, st, msg.ID)
		m := mark{"primary", "pending", `{"down":true}`}
		for _, c := range []struct{ what, method, url, body string }{
			{"list", http.MethodGet, list, ""},
			{"mark", http.MethodPost, srv.base + m.path(sub.SubscriberID, msg.ID), m.body()},
			{"graphql", http.MethodPost, srv.base + "/graphql", graphql},
			{"list again", http.MethodGet, list, ""},
		} {
			r := send(t, c.method, c.url, tn.Key, c.body)
			unavailable503(t, c.what, r)
			// A refused connection fails at once, not at the request deadline.
			if r.took >= requestTimeout {
				t.Errorf("%s took %s with the database refusing connections, want it answered before the %s deadline", c.what, r.took, requestTimeout)
			}
		}
		if r := send(t, http.MethodGet, srv.base+"/readyz", "", ""); r.status != http.StatusServiceUnavailable {
			t.Errorf("/readyz while down: %d %s, want 503", r.status, r.body)
		}
		if r := send(t, http.MethodGet, srv.base+"/healthz", "", ""); r.status != http.StatusOK {
			t.Errorf("/healthz while down: %d %s, want 200", r.status, r.body)
		}
		if diff := cmp.Diff(before, storedMessage(t, st, msg.ID)); diff != "" {
			t.Errorf("refused requests changed the message (-before +after):\n%s", diff)
		}
	})

	t.Run("recoversWhenBack", func(t *testing.T) {
		m := mark{"secondary", "done", `{"back":true}`}
		if r := send(t, http.MethodPost, srv.base+m.path(sub.SubscriberID, msg.ID), tn.Key, m.body()); r.status != http.StatusCreated {
			t.Fatalf("first mark after the database came back: %d %s", r.status, r.body)
		}
		for _, path := range []string{list, srv.base + "/readyz"} {
			if r := send(t, http.MethodGet, path, tn.Key, ""); r.status != http.StatusOK {
				t.Errorf("GET %s after the database came back: %d %s", path, r.status, r.body)
			}
		}
	})

	t.Run("requests503AtDeadlineWhenBlackholed", func(t *testing.T) {
		removeBlackhole := proxy.toxic(t, "timeout", map[string]any{"timeout": 0})
		for _, what := range []string{"list", "list again"} {
			r := send(t, http.MethodGet, list, tn.Key, "")
			unavailable503(t, what, r)
			// Not before the deadline; faultClient's own deadline catches a hang.
			if r.took < requestTimeout {
				t.Errorf("%s answered after %s, before the %s deadline", what, r.took, requestTimeout)
			}
		}
		// /readyz answers from its own 2 s timeout, well before faultClient gives up.
		if r := send(t, http.MethodGet, srv.base+"/readyz", "", ""); r.status != http.StatusServiceUnavailable {
			t.Errorf("/readyz while blackholed: %d after %s, want 503 within its own timeout", r.status, r.took)
		}
		removeBlackhole()
		if r := send(t, http.MethodGet, list, tn.Key, ""); r.status != http.StatusOK {
			t.Errorf("list once the blackhole is gone: %d %s", r.status, r.body)
		}
	})

	t.Run("markPersistsAcrossRestart", func(t *testing.T) {
		m := mark{"secondary", "done", `{"restart":true}`}
		if r := send(t, http.MethodPost, srv.base+m.path(sub.SubscriberID, msg.ID), tn.Key, m.body()); r.status != http.StatusCreated {
			t.Fatalf("mark: %d %s", r.status, r.body)
		}
		if code := srv.stop(); code != 0 {
			t.Fatalf("graceful stop exited %d:\n%s", code, srv.stderr.String())
		}
		again := start(t, "--request-timeout", requestTimeout.String())
		r := send(t, http.MethodGet, again.base+"/v1/messages?transactionId="+msg.TransactionID, tn.Key, "")
		var page struct {
			Data []struct {
				CTA struct {
					Action struct {
						Status string `json:"status"`
						Result struct {
							Type    string          `json:"type"`
							Payload json.RawMessage `json:"payload"`
						} `json:"result"`
					} `json:"action"`
				} `json:"cta"`
			} `json:"data"`
		}
		if err := json.Unmarshal(r.body, &page); err != nil || r.status != http.StatusOK || len(page.Data) != 1 {
			t.Fatalf("list after restart: %d %s", r.status, r.body)
		}
		a := page.Data[0].CTA.Action
		if a.Status != m.status || a.Result.Type != m.typ || string(a.Result.Payload) != m.payload {
			t.Errorf("after restart cta.action = %+v, want status %s, type %s, payload %s", a, m.status, m.typ, m.payload)
		}
	})

	t.Run("startsWhileDownThenReady", func(t *testing.T) {
		proxy.down()
		srv := launch(t, "--request-timeout", requestTimeout.String())
		if r := send(t, http.MethodGet, srv.base+"/readyz", "", ""); r.status != http.StatusServiceUnavailable {
			t.Errorf("/readyz while the database is down: %d %s", r.status, r.body)
		}
		unavailable503(t, "list while starting", send(t, http.MethodGet, srv.base+"/v1/messages", tn.Key, ""))
		unavailable503(t, "graphql while starting", send(t, http.MethodPost, srv.base+"/graphql", tn.Key, graphql))
		eventually(t, 10*time.Second, "two retry log lines", func() bool {
			return strings.Count(srv.stderr.String(), "database unreachable, retrying in") >= 2
		})
		proxy.up(t)
		eventually(t, 15*time.Second, "/readyz 200 once the database is reachable", func() bool {
			return send(t, http.MethodGet, srv.base+"/readyz", "", "").status == http.StatusOK
		})
		if r := send(t, http.MethodGet, srv.base+"/v1/messages", tn.Key, ""); r.status != http.StatusOK {
			t.Errorf("list once ready: %d %s", r.status, r.body)
		}
		if code := srv.stop(); code != 0 {
			t.Errorf("stop exited %d:\n%s", code, srv.stderr.String())
		}
	})

	t.Run("exits0WhenStoppedWhileRetrying", func(t *testing.T) {
		const password = "pw-s3cret"
		t.Setenv("DATABASE_URL", withHost(t, direct, proxy.addr(), password))
		proxy.down()
		defer proxy.up(t)
		srv := launch(t)
		eventually(t, 10*time.Second, "a retry log line", func() bool {
			return strings.Contains(srv.stderr.String(), "database unreachable, retrying in")
		})
		start := time.Now()
		if code := srv.stop(); code != 0 {
			t.Errorf("SIGTERM while retrying exited %d, want 0:\n%s", code, srv.stderr.String())
		}
		// Stopping does not wait out the backoff (up to its 10 s maximum).
		if d := time.Since(start); d >= startBackoff.max {
			t.Errorf("stopping while retrying took %s", d)
		}
		log := srv.stderr.String()
		if strings.Contains(log, password) || !strings.Contains(log, "xxxxx@") {
			t.Errorf("the log must name the database with the password redacted:\n%s", log)
		}
	})
}
