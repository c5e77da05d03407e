package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"messages/models"
	"messages/models/dbtest"
	"messages/models/store"
)

// galeraClient bounds every request of the Galera suite.
var galeraClient = &http.Client{Timeout: 30 * time.Second, Transport: http.DefaultTransport.(*http.Transport).Clone()}

// galeraReply is what one request of a burst got.
type galeraReply struct {
	instance int
	status   int
	replay   bool
	body     []byte
	err      error
}

// galeraPost sends one POST to base as the key's tenant.
func galeraPost(base, apiKey, path, idempotencyKey, body string) galeraReply {
	req, err := http.NewRequest(http.MethodPost, base+path, strings.NewReader(body))
	if err != nil {
		return galeraReply{err: err}
	}
	req.Header.Set("Authorization", "ApiKey "+apiKey)
	req.Header.Set("Content-Type", "application/json")
	if idempotencyKey != "" {
		req.Header.Set("Idempotency-Key", idempotencyKey)
	}
	res, err := galeraClient.Do(req)
	if err != nil {
		return galeraReply{err: err}
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return galeraReply{status: res.StatusCode, replay: res.Header.Get("Idempotency-Replay") == "true", body: b, err: err}
}

// galeraGet sends one GET to base as the key's tenant and returns its status.
func galeraGet(base, apiKey, path string) (int, error) {
	req, err := http.NewRequest(http.MethodGet, base+path, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "ApiKey "+apiKey)
	res, err := galeraClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, res.Body)
	return res.StatusCode, nil
}

// TestGalera runs the service on a 3-node MariaDB Galera cluster (Debian's galera-4):
// migrations through node 1, an import through node 2, one server instance on node 1 and
// one on node 3; then bursts of 40 concurrent marks of one message, alternating
// instances, which conflict at certification and must all be answered as on one
// database; then node 3 killed during a burst of reads and marks, and restarted.
func TestGalera(t *testing.T) {
	g := dbtest.StartGalera(t)
	ctx := context.Background()
	name := g.CreateDatabase()
	url1, url2, url3 := g.Node(1).URL(name), g.Node(2).URL(name), g.Node(3).URL(name)

	store1, err := store.Open(ctx, url1, store.DefaultPool)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store1.Close() })
	if err := store1.Migrate(ctx); err != nil {
		t.Fatalf("migrate on node 1: %v", err)
	}

	// A file to import: seeded into SQLite, exported.
	const env = "670000000000000000000013"
	t.Setenv("APP_ENV", "production")
	t.Setenv("DATABASE_URL", dbtest.URL(t, store.DialectSQLite))
	if code, _, stderr := runCLI(t, "", "seed", "--seed", "13", "--messages", "300", "--subscribers", "5", "--templates", "3", "--environment-id", env); code != 0 {
		t.Fatalf("seed: %s", stderr)
	}
	code, export, stderr := runCLI(t, "", "export", "--environment-id", env)
	if code != 0 {
		t.Fatalf("export: %s", stderr)
	}
	t.Setenv("DATABASE_URL", url2)
	if code, _, stderr := runCLI(t, export, "import"); code != 0 {
		t.Fatalf("import on node 2: %s", stderr)
	}
	apiKey, _ := createKey(t, env, "galera")
	// Another node applies a commit shortly after it returned (without wsrep_sync_wait).
	eventually(t, 10*time.Second, "node 1 holds the 300 messages imported on node 2", func() bool {
		var n int64
		err := store1.DB().Model(&models.Message{}).Where("environment_id = ?", env).Count(&n).Error
		return err == nil && n == 300
	})

	limits := []string{"--rate-limit", "100000", "--rate-burst", "100000"}
	// Node 1's and node 3's instances, and one whose DATABASE_URL names node 3, then node 1.
	urlFailover := strings.Replace(url3, g.Node(3).Addr(), g.Node(3).Addr()+","+g.Node(1).Addr(), 1)
	instances := []*running{
		start(t, append([]string{"--database-url", url1}, limits...)...),
		start(t, append([]string{"--database-url", url3}, limits...)...),
		start(t, append([]string{"--database-url", urlFailover}, limits...)...),
	}
	t.Cleanup(galeraClient.CloseIdleConnections)
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		// The instances' last errors, few enough that the failures above stay in view.
		for i, in := range instances {
			var errs []string
			for _, line := range strings.Split(in.stderr.String(), "\n") {
				if strings.Contains(line, "ERROR") {
					errs = append(errs, line)
				}
			}
			t.Logf("instance %d logged %d errors", i+1, len(errs))
			for _, line := range errs[max(0, len(errs)-5):] {
				t.Logf("instance %d: %.400s", i+1, line)
			}
		}
	})
	var target struct{ ID, SubscriberID string }
	if err := store1.DB().Raw(`SELECT m.id, s.subscriber_id FROM messages m JOIN subscribers s ON s.id = m.subscriber_id
WHERE m.environment_id = ? ORDER BY m.id LIMIT 1`, env).Scan(&target).Error; err != nil || target.ID == "" {
		t.Fatalf("a message to mark: %v", err)
	}
	path := fmt.Sprintf("/v1/subscribers/%s/messages/%s/actions/primary", target.SubscriberID, target.ID)

	t.Run("burst", func(t *testing.T) {
		for _, variant := range []string{"noKey", "distinctKeys", "sharedKey"} {
			t.Run(variant, func(t *testing.T) { galeraBurst(t, store1, instances, apiKey, path, target.ID, variant) })
		}
		// A conflict retried is no outage: nothing is logged for it.
		for i, in := range instances[:2] {
			if n := strings.Count(in.stderr.String(), `"msg":"database unavailable"`); n > 0 {
				t.Errorf("instance %d logged %d outages during the bursts", i+1, n)
			}
		}
	})
	t.Run("importWhileMarking", func(t *testing.T) { galeraImportWhileMarking(t, instances, apiKey, path, export) })
	t.Run("countsAndEvents", func(t *testing.T) {
		galeraCountsAndEvents(t, store1, url3, instances, apiKey, env, target.ID, target.SubscriberID)
	})
	t.Run("nodeKilled", func(t *testing.T) { galeraNodeKilled(t, g, instances, apiKey, path) })
}

// burstSize is how many marks of one message each burst sends at once.
const burstSize = 40

// galeraBurst sends burstSize marks of one message at once, alternating instances, each
// with its own payload: every one is answered 201 (a shared key: one execution, the
// others 409 or a replay of its bytes), each key is executed once, and the message ends
// in the state one of them asked for.
func galeraBurst(t *testing.T, st *store.Store, instances []*running, apiKey, path, messageID, variant string) {
	run := time.Now().UnixNano()
	key := func(i int) string {
		switch variant {
		case "distinctKeys":
			return fmt.Sprintf("%s-%d-%d", variant, run, i)
		case "sharedKey":
			return fmt.Sprintf("%s-%d", variant, run)
		}
		return ""
	}
	body := func(i int) string {
		if variant == "sharedKey" {
			i = 0 // one request, sent many times
		}
		return fmt.Sprintf(`{"status":"done","payload":{"variant":%q,"n":%d}}`, variant, i)
	}
	retriesBefore := transactionRetries(t, instances)
	replies := make([]galeraReply, burstSize)
	var wg sync.WaitGroup
	ready := make(chan struct{})
	for i := range replies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-ready
			replies[i] = galeraPost(instances[i%2].base, apiKey, path, key(i), body(i))
			replies[i].instance = i % 2
		}()
	}
	close(ready)
	wg.Wait()

	statuses := map[int]int{}
	var executed, replayed, busy int
	var first []byte
	payloads := map[string]bool{}
	for i, r := range replies {
		if r.err != nil {
			t.Fatalf("request %d: %v", i, r.err)
		}
		statuses[r.status]++
		switch {
		case r.status == http.StatusCreated && r.replay:
			replayed++
		case r.status == http.StatusCreated:
			executed++
			payloads[body(i)] = true
		case r.status == http.StatusConflict && variant == "sharedKey":
			busy++
		default:
			t.Errorf("request %d (instance %d): %d: %s", i, r.instance+1, r.status, r.body)
		}
		if r.status == http.StatusCreated && variant == "sharedKey" {
			if first == nil {
				first = r.body
			} else if !bytes.Equal(first, r.body) {
				t.Errorf("request %d: a 201 differs from another under the same key:\n%s\n%s", i, r.body, first)
			}
		}
	}
	t.Logf("%s: statuses %v (%d executed, %d replayed, %d busy); %d transactions retried",
		variant, statuses, executed, replayed, busy, transactionRetries(t, instances)-retriesBefore)

	// Exactly one execution per key, as the keys' records say.
	switch variant {
	case "distinctKeys":
		var keys int64
		if err := st.DB().Model(&models.IdempotencyKey{}).Where("idempotency_key LIKE ? AND status = 201", fmt.Sprintf("%s-%d-%%", variant, run)).
			Count(&keys).Error; err != nil || keys != burstSize {
			t.Errorf("%d idempotency records with a 201, want %d (%v)", keys, burstSize, err)
		}
		if executed != burstSize {
			t.Errorf("%d executed, want all %d", executed, burstSize)
		}
	case "sharedKey":
		if executed != 1 {
			t.Errorf("%d requests executed under one key, want exactly 1", executed)
		}
	}

	// The message holds the values of one of the requests that ran.
	var stored struct{ ActionStatus, ActionResultType, ActionResultPayload string }
	if err := st.DB().Raw("SELECT action_status, action_result_type, action_result_payload FROM messages WHERE id = ?", messageID).
		Scan(&stored).Error; err != nil {
		t.Fatal(err)
	}
	var payload map[string]any
	if err := json.Unmarshal([]byte(stored.ActionResultPayload), &payload); err != nil {
		t.Fatalf("stored payload %q: %v", stored.ActionResultPayload, err)
	}
	n, _ := payload["n"].(float64)
	want := body(int(n))
	if stored.ActionStatus != "done" || stored.ActionResultType != "primary" || payload["variant"] != variant || !payloads[want] {
		t.Errorf("stored %+v, want done, primary and the payload of a request of this burst that ran", stored)
	}
}

// galeraNodeKilled kills node 3 during a burst of reads and marks on every instance: the
// instance on node 1, and the one whose DATABASE_URL names node 3 then node 1, keep
// answering. A request caught while the cluster evicts the dead node may be answered 503;
// it is retried after its Retry-After, as the documented retry says, and must succeed
// once the eviction is over: none is lost. The instance on node 3 alone answers 503 with
// Retry-After while its node is down, and again 2xx once the node has restarted and
// rejoined.
func galeraNodeKilled(t *testing.T, g *dbtest.Galera, instances []*running, apiKey, path string) {
	stop := make(chan struct{})
	type tally struct {
		ok, retriedOK, lost, unavailable, other atomic.Int64
		mu                                      sync.Mutex
		mostRetries                             int64
	}
	tallies := []*tally{{}, {}, {}}
	survives := func(instance int) bool { return instance != 1 }
	// evicted is when node 1 saw the cluster shrink to two; zero until then.
	var evicted atomic.Int64
	var wg sync.WaitGroup
	worker := func(instance, w int) {
		defer wg.Done()
		tl := tallies[instance]
		base := instances[instance].base
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			send := func() int {
				if i%2 == 0 {
					status, err := galeraGet(base, apiKey, "/v1/messages?limit=5")
					if err != nil {
						return 0
					}
					return status
				}
				r := galeraPost(base, apiKey, path, fmt.Sprintf("kill-%d-%d-%d", instance, w, i),
					fmt.Sprintf(`{"status":"pending","payload":{"worker":%d,"i":%d}}`, w, i))
				if r.err != nil {
					return 0
				}
				return r.status
			}
			status := send()
			switch {
			case status/100 == 2:
				tl.ok.Add(1)
			case status == http.StatusServiceUnavailable && survives(instance):
				// The documented retry: after Retry-After, while the eviction lasts, and once
				// after it; a request still refused then is lost.
				retries := int64(0)
				for status == http.StatusServiceUnavailable {
					done := evicted.Load()
					if done != 0 && time.Since(time.Unix(0, done)) > 3*time.Second {
						break
					}
					time.Sleep(2 * time.Second)
					retries++
					status = send()
				}
				if status/100 == 2 {
					tl.retriedOK.Add(1)
					tl.mu.Lock()
					tl.mostRetries = max(tl.mostRetries, retries)
					tl.mu.Unlock()
				} else {
					tl.lost.Add(1)
					t.Errorf("instance %d: a request failed again after %d retries: %d", instance+1, retries, status)
				}
			case status == http.StatusServiceUnavailable:
				tl.unavailable.Add(1)
				time.Sleep(100 * time.Millisecond)
			default:
				tl.other.Add(1)
				t.Errorf("instance %d: status %d", instance+1, status)
			}
		}
	}
	for instance := range instances {
		for w := range 4 {
			wg.Add(1)
			go worker(instance, w)
		}
	}
	time.Sleep(time.Second)
	killed := time.Now()
	g.Kill(3)
	// Galera evicts a member it stops hearing from after its suspect timeout (5 s by
	// default); a loaded machine takes longer.
	eventually(t, 30*time.Second, "node 1 evicts node 3", func() bool { return g.Status(1, "cluster_size") == "2" })
	evicted.Store(time.Now().UnixNano())
	t.Logf("node 1 saw node 3 evicted %s after the kill", time.Since(killed).Round(100*time.Millisecond))
	time.Sleep(5 * time.Second) // the instances keep answering after the eviction
	close(stop)
	wg.Wait()
	for i, tl := range tallies {
		t.Logf("instance on %s, while node 3 was killed: %d ok, %d ok after retrying (at most %d retries), %d lost, %d answered 503, %d other",
			[]string{"node 1", "node 3", "nodes 3,1"}[i], tl.ok.Load(), tl.retriedOK.Load(), tl.mostRetries,
			tl.lost.Load(), tl.unavailable.Load(), tl.other.Load())
	}
	for _, i := range []int{0, 2} {
		if tallies[i].ok.Load() == 0 {
			t.Errorf("instance %d answered nothing while node 3 was down", i+1)
		}
	}
	// The instance with several hosts answers from node 1 now.
	if r := galeraPost(instances[2].base, apiKey, path, "", `{"status":"done"}`); r.status != http.StatusCreated {
		t.Errorf("instance on nodes 3,1 with node 3 down: %d, want 201: %s", r.status, r.body)
	}
	if tallies[1].unavailable.Load() == 0 {
		t.Error("the instance on node 3 never answered 503 while its node was down")
	}
	// What a client of the dead node's instance sees: 503 with Retry-After.
	r := galeraPost(instances[1].base, apiKey, path, "", `{"status":"done"}`)
	if r.status != http.StatusServiceUnavailable {
		t.Errorf("instance on the dead node: %d, want 503: %s", r.status, r.body)
	}

	g.Restart(3)
	t.Logf("node 3 rejoined %s after the kill", time.Since(killed).Round(time.Second))
	deadline := time.Now().Add(30 * time.Second)
	for {
		r := galeraPost(instances[1].base, apiKey, path, "", `{"status":"done","payload":{"after":"rejoin"}}`)
		if r.status == http.StatusCreated {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("instance on node 3 after its node rejoined: %d %s", r.status, r.body)
		}
		time.Sleep(500 * time.Millisecond)
	}
	if s := g.Status(1, "cluster_size"); s != strconv.Itoa(dbtest.GaleraNodes) {
		t.Errorf("cluster size %s after the restart, want %d", s, dbtest.GaleraNodes)
	}
}

// galeraImportWhileMarking imports the file again through node 2 (replacing every
// message, the marked one included) three times, each while a burst of burstSize marks
// of that message runs on nodes 1 and 3: when the import's transaction loses
// certification to a mark committed first, it is run again from the start of the file;
// every import succeeds and every mark is 201 (after the documented retry at worst).
// Marks that never stop would starve the import instead: with 8 workers marking the row
// without pause, its 20 attempts all lost in 2 of 3 runs.
func galeraImportWhileMarking(t *testing.T, instances []*running, apiKey, path, export string) {
	file := filepath.Join(t.TempDir(), "export.jsonl")
	if err := os.WriteFile(file, []byte(export), 0o644); err != nil {
		t.Fatal(err)
	}
	retriesBefore := transactionRetries(t, instances)
	var unavailable, failed atomic.Int64
	for round := range 3 {
		var wg sync.WaitGroup
		ready := make(chan struct{})
		for i := range burstSize {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-ready
				body := fmt.Sprintf(`{"status":"done","payload":{"import":%d,"n":%d}}`, round, i)
				r := galeraPost(instances[i%2].base, apiKey, path, "", body)
				if r.err == nil && r.status == http.StatusServiceUnavailable {
					// The documented retry, once, after Retry-After.
					unavailable.Add(1)
					time.Sleep(2 * time.Second)
					r = galeraPost(instances[i%2].base, apiKey, path, "", body)
				}
				if r.err != nil || r.status != http.StatusCreated {
					failed.Add(1)
					t.Errorf("mark during the import: %d %v %s", r.status, r.err, r.body)
				}
			}()
		}
		close(ready)
		var stdout, stderr bytes.Buffer
		if code := newApp(&stdout, &stderr).run(context.Background(), []string{"server", "import", "--file", file}); code != 0 {
			t.Errorf("import during marks: exit %d: %s", code, stderr.String())
		}
		wg.Wait()
	}
	t.Logf("3 imports, each during %d marks: %d marks answered 503 and succeeded on their retry, %d failed; %d transactions retried",
		burstSize, unavailable.Load(), failed.Load(), transactionRetries(t, instances)-retriesBefore)
}

// transactionRetries sums the instances' db_transaction_retries_total.
func transactionRetries(t *testing.T, instances []*running) int {
	t.Helper()
	n := 0
	for _, in := range instances {
		_, body := get(t, in.base+"/metrics", "")
		for _, line := range strings.Split(string(body), "\n") {
			if v, ok := strings.CutPrefix(line, "db_transaction_retries_total "); ok {
				f, err := strconv.ParseFloat(v, 64)
				if err != nil {
					t.Fatalf("metrics: %q", line)
				}
				n += int(f)
			}
		}
	}
	return n
}
