package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"messages/models"
	"messages/models/dbtest"
	"messages/models/store"
)

// lockShard takes one shard of the Vitess deployment down the way a hung database does:
// a session of the test's own, on that shard's database, holds LOCK TABLES … WRITE on
// every table, so every statement vtgate sends there waits (reads too), while the
// shard's tablet, vtgate and the other shards keep answering. It returns the release.
//
// The shards share one mysqld here, so stopping one shard's server is not possible; a
// shard that stops answering is also the harder case than one that refuses at once (a
// dead mysqld, a tablet vtgate no longer routes to): requests must be cut at their
// deadline rather than fail fast.
func lockShard(t *testing.T, shard string) (release func()) {
	t.Helper()
	ctx := context.Background()
	db := dbtest.ShardDB(t, shard)
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := conn.QueryContext(ctx, "SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE() AND table_type = 'BASE TABLE'")
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var table string
		if err := rows.Scan(&table); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, "`"+strings.ReplaceAll(table, "`", "``")+"` WRITE")
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, "LOCK TABLES "+strings.Join(tables, ", ")); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	release = func() {
		once.Do(func() {
			if _, err := conn.ExecContext(ctx, "UNLOCK TABLES"); err != nil {
				t.Errorf("unlock %s: %v", shard, err)
			}
			_ = conn.Close()
		})
	}
	t.Cleanup(release)
	return release
}

// unserveShard takes one shard out of service the way vtgate sees a primary that is
// gone: its tablet control disables the primary's query service (vtctld's
// SetShardTabletControl, then RefreshState on the primary), the tablet reports itself
// not serving, and vtgate answers every statement for the shard at once with "no
// healthy tablet available" (UNAVAILABLE), as it does when the primary's tablet or
// MySQL is down. It returns the way back.
func unserveShard(t *testing.T, shard string) (restore func()) {
	t.Helper()
	var primary struct {
		Shard struct {
			PrimaryAlias struct {
				Cell string
				UID  int `json:"uid"`
			} `json:"primary_alias"`
		}
	}
	if err := json.Unmarshal(dbtest.VitessCtl(t, "GetShard", shard), &primary); err != nil {
		t.Fatal(err)
	}
	alias := fmt.Sprintf("%s-%010d", primary.Shard.PrimaryAlias.Cell, primary.Shard.PrimaryAlias.UID)
	dbtest.VitessCtl(t, "SetShardTabletControl", "--disable-query-service", shard, "primary")
	dbtest.VitessCtl(t, "RefreshState", alias)
	var once sync.Once
	restore = func() {
		once.Do(func() {
			dbtest.VitessCtl(t, "SetShardTabletControl", shard, "primary")
			dbtest.VitessCtl(t, "RefreshState", alias)
		})
	}
	t.Cleanup(restore)
	return restore
}

// causeOf returns the server's log lines of a refused request's error id.
func causeOf(srv *running, r reply) string {
	var e struct{ ErrorID string }
	if json.Unmarshal(r.body, &e) != nil || e.ErrorID == "" {
		return ""
	}
	var out strings.Builder
	for _, line := range strings.Split(srv.stderr.String(), "\n") {
		if strings.Contains(line, e.ErrorID) {
			out.WriteString("\n\tlogged: " + line)
		}
	}
	return out.String()
}

// countVia reads a tenant's totalCount through GraphQL.
func countVia(t *testing.T, base, key string) reply {
	t.Helper()
	return send(t, http.MethodPost, base+"/graphql", key, `{"query":"{ messages { totalCount } }"}`)
}

func totalCount(t *testing.T, r reply) int64 {
	t.Helper()
	var body struct {
		Data struct{ Messages struct{ TotalCount int64 } }
	}
	if err := json.Unmarshal(r.body, &body); err != nil || r.status != http.StatusOK || strings.Contains(string(r.body), `"errors"`) {
		t.Fatalf("count: %d %s", r.status, r.body)
	}
	return body.Data.Messages.TotalCount
}

// percentile returns the p-th percentile of ds (0 < p ≤ 100).
func percentile(ds []time.Duration, p float64) time.Duration {
	s := slices.Clone(ds)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := int(float64(len(s))*p/100+0.5) - 1
	return s[min(max(i, 0), len(s)-1)]
}

// TestVitessOneShardDown runs the server in production mode on vtgate with tenants A and
// B on different shards, and takes A's shard down (lockShard): B's list, mark and count
// keep answering 200 at their usual latency; A's answer 503 with the documented body at
// the request deadline; A's mark in flight is applied whole or not at all; /readyz stays
// ready; B's live events keep coming (the feed polls each shard on its own) and an
// instance started meanwhile serves B; once the shard is back A works, every count
// equals COUNT(*), and nothing is lost.
func TestVitessOneShardDown(t *testing.T) {
	dbtest.EachVitess(t, func(t *testing.T, st *store.Store) {
		// hung: the shard's MySQL stops answering; A's requests wait for the deadline.
		t.Run("hung", func(t *testing.T) { oneShardDown(t, st, lockShard, false) })
		// unserved: the shard's primary is out of service; vtgate refuses A's at once.
		t.Run("unserved", func(t *testing.T) { oneShardDown(t, st, unserveShard, true) })
	})
}

// oneShardDown is TestVitessOneShardDown with one way of taking A's shard down: takeDown
// returns the way back; fast says A's requests are refused at once rather than at the
// request deadline.
func oneShardDown(t *testing.T, st *store.Store, takeDown func(*testing.T, string) func(), fast bool) {
	const requestTimeout = 3 * time.Second
	// Environments until A is on the first shard and B on the other (even odds each):
	// A's is where vtgate sends what names no keyspace (a session's settings), the
	// harder shard to lose.
	const shardA = "messages/-80"
	var a, b *dbtest.Tenant
	for i := 0; a == nil || b == nil; i++ {
		if i == 64 {
			t.Fatal("64 environments all landed on one shard")
		}
		tn := dbtest.NewTenant(t, st, fmt.Sprint("shard-down-", i))
		switch onA := dbtest.ShardOf(t, st, tn.Env.ID) == shardA; {
		case onA && a == nil:
			a = tn
		case !onA && b == nil:
			b = tn
		}
	}
	type world struct {
		tn         *dbtest.Tenant
		sub        string
		subscriber *models.Subscriber
		template   *models.Template
		msgs       []string
	}
	worlds := map[string]*world{}
	for name, tn := range map[string]*dbtest.Tenant{"A": a, "B": b} {
		sub := tn.Subscriber(t, "alice")
		tpl := tn.Template(t, "welcome")
		w := &world{tn: tn, sub: sub.SubscriberID, subscriber: sub, template: tpl}
		for range 5 {
			w.msgs = append(w.msgs, tn.Message(t, sub, tpl, nil).ID)
		}
		worlds[name] = w
	}
	A, B := worlds["A"], worlds["B"]

	t.Setenv("DATABASE_URL", os.Getenv("TEST_VITESS_URL"))
	t.Setenv("APP_ENV", "production")
	srv := start(t, "--request-timeout", requestTimeout.String(), "--rate-limit", "100000", "--rate-burst", "100000")
	list := srv.base + "/v1/messages?subscriberId=alice"

	// B's live events, over graphql-ws; each arrival is timed as it comes.
	type arrival struct {
		id string
		at time.Time
	}
	// events subscribes to a tenant's live events and returns what arrived in [from, to).
	events := func(tn *dbtest.Tenant) func(from, to time.Time) []arrival {
		var arrivedMu sync.Mutex
		var arrived []arrival
		sub := subscribeEvents(t, dialEvents(t, srv.base, "ApiKey "+tn.Key), nil)
		go func() {
			for r := range sub.Results() {
				var d struct {
					MessageEvents struct {
						Message struct {
							ID string `json:"_id"`
						}
					}
				}
				_ = json.Unmarshal(r.Data, &d)
				arrivedMu.Lock()
				arrived = append(arrived, arrival{d.MessageEvents.Message.ID, time.Now()})
				arrivedMu.Unlock()
			}
		}()
		return func(from, to time.Time) []arrival {
			arrivedMu.Lock()
			defer arrivedMu.Unlock()
			var out []arrival
			for _, a := range arrived {
				if !a.at.Before(from) && a.at.Before(to) {
					out = append(out, a)
				}
			}
			return out
		}
	}
	arrivals, aArrivals := events(B.tn), events(A.tn)

	// B's three request paths, each timed.
	bRound := func(t *testing.T, tag string, i int) (took map[string]time.Duration) {
		t.Helper()
		took = map[string]time.Duration{}
		r := send(t, http.MethodGet, list, B.tn.Key, "")
		if r.status != http.StatusOK {
			t.Fatalf("%s: B's list: %d %s%s", tag, r.status, r.body, causeOf(srv, r))
		}
		took["list"] = r.took
		m := mark{"primary", "done", fmt.Sprintf(`{"%s":%d}`, tag, i)}
		r = send(t, http.MethodPost, srv.base+m.path(B.sub, B.msgs[i%len(B.msgs)]), B.tn.Key, m.body())
		if r.status != http.StatusCreated {
			t.Fatalf("%s: B's mark: %d %s%s", tag, r.status, r.body, causeOf(srv, r))
		}
		took["mark"] = r.took
		r = countVia(t, srv.base, B.tn.Key)
		if n := totalCount(t, r); n != int64(len(B.msgs)) {
			t.Fatalf("%s: B's count %d, want %d", tag, n, len(B.msgs))
		}
		took["count"] = r.took
		return took
	}
	const rounds = 20
	measure := func(t *testing.T, tag string) map[string][]time.Duration {
		t.Helper()
		out := map[string][]time.Duration{}
		for i := range rounds {
			for path, d := range bRound(t, tag, i) {
				out[path] = append(out[path], d)
			}
		}
		return out
	}
	// Warm the connections and the key cache, then B's latencies with both shards up.
	measure(t, "warmup")
	healthy := measure(t, "healthy")
	if r := countVia(t, srv.base, A.tn.Key); totalCount(t, r) != int64(len(A.msgs)) {
		t.Fatalf("A's count before the outage: %s", r.body)
	}
	aBefore := storedMessage(t, st, A.msgs[0])
	time.Sleep(time.Second) // the marks' events are delivered before the outage

	release := takeDown(t, shardA)
	down := time.Now()

	// A's mark, in flight while the shard is down.
	aMark := mark{"secondary", "done", `{"inFlight":true}`}
	aMarkDone := make(chan reply, 1)
	go func() {
		aMarkDone <- send(t, http.MethodPost, srv.base+aMark.path(A.sub, A.msgs[0]), A.tn.Key, aMark.body())
	}()
	// B keeps working, at its usual latency.
	during := measure(t, "during")
	for _, path := range []string{"list", "mark", "count"} {
		h, d := percentile(healthy[path], 50), percentile(during[path], 50)
		t.Logf("B's %s with A's shard down: p50 %s, max %s (both shards up: p50 %s, max %s)",
			path, d.Round(100*time.Microsecond), percentile(during[path], 100).Round(100*time.Microsecond),
			h.Round(100*time.Microsecond), percentile(healthy[path], 100).Round(100*time.Microsecond))
		// Normal latency: within a few times the healthy p50 (the machine is shared),
		// never near the deadline A's requests wait for.
		if d > max(5*h, 100*time.Millisecond) {
			t.Errorf("B's %s p50 %s with A's shard down, healthy %s", path, d, h)
		}
	}
	if r := send(t, http.MethodGet, srv.base+"/readyz", "", ""); r.status != http.StatusOK {
		t.Errorf("/readyz with one shard down: %d %s, want 200 (the other shards' tenants are served)", r.status, r.body)
	}

	// A's requests: 503 with the documented body, at the deadline, not a hang or 500.
	for _, c := range []struct {
		what string
		do   func() reply
	}{
		{"list", func() reply { return send(t, http.MethodGet, list, A.tn.Key, "") }},
		{"graphql count", func() reply { return countVia(t, srv.base, A.tn.Key) }},
		{"mark in flight", func() reply { return <-aMarkDone }},
	} {
		r := c.do()
		unavailable503(t, "A's "+c.what, r)
		t.Logf("A's %s with its shard down: %d after %s", c.what, r.status, r.took.Round(time.Millisecond))
		if r.took > requestTimeout+time.Second {
			t.Errorf("A's %s answered after %s, past the %s deadline", c.what, r.took, requestTimeout)
		}
		if fast && r.took > time.Second {
			t.Errorf("A's %s answered after %s: a shard out of service is refused at once", c.what, r.took)
		}
	}

	// A store opened while A's shard is down, as a pool opens connections all the time,
	// reads B's rows: its connections set nothing vtgate checks on a shard of its choice
	// (a session time zone went to messages/-80 and failed there).
	{
		began := time.Now()
		fresh, err := store.Open(context.Background(), os.Getenv("TEST_VITESS_URL"), store.DefaultPool)
		if err != nil {
			t.Fatalf("open a store with A's shard down: %v", err)
		}
		var n int64
		if err := fresh.DB().Raw("SELECT COUNT(*) FROM messages WHERE environment_id = ?", B.tn.Env.ID).Scan(&n).Error; err != nil || n != int64(len(B.msgs)) {
			t.Fatalf("B's messages on a store opened with A's shard down: %d, %v", n, err)
		}
		t.Logf("a store opened with A's shard down read B's rows after %s", time.Since(began).Round(time.Millisecond))
		_ = fresh.Close()
	}

	// An instance started while A's shard is down serves B: its change feed starts with
	// the shards that answer, and reads A's once it does.
	{
		began := time.Now()
		second := start(t, "--request-timeout", requestTimeout.String(), "--rate-limit", "100000", "--rate-burst", "100000")
		listening := time.Since(began)
		if r := send(t, http.MethodGet, second.base+"/v1/messages?subscriberId=alice", B.tn.Key, ""); r.status != http.StatusOK {
			t.Errorf("B's list on an instance started with A's shard down: %d %s", r.status, r.body)
		}
		t.Logf("an instance started with A's shard down listened after %s", listening.Round(time.Millisecond))
		if listening > 20*time.Second {
			t.Errorf("an instance started with A's shard down listened only after %s", listening)
		}
	}

	// A's clients keep asking: more of A's requests in flight than the server's pool has
	// connections (20), while B's are timed again. A's requests hold at most their
	// shard's slots (three quarters of the pool) until their deadline, so B's keep the
	// rest of the pool and answer at their usual latency.
	{
		stop := make(chan struct{})
		var wg sync.WaitGroup
		var mu sync.Mutex
		statuses := map[int]int{}
		for range 30 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					r := send(t, http.MethodGet, list, A.tn.Key, "")
					mu.Lock()
					statuses[r.status]++
					mu.Unlock()
				}
			}()
		}
		time.Sleep(200 * time.Millisecond)
		var took []time.Duration
		failed := map[int]int{}
		for range 6 {
			r := send(t, http.MethodGet, list, B.tn.Key, "")
			if r.status != http.StatusOK {
				if failed[r.status]++; failed[r.status] == 1 {
					t.Logf("B's list with 30 of A's requests in flight: %d after %s: %s%s", r.status, r.took.Round(time.Millisecond), r.body, causeOf(srv, r))
				}
			}
			took = append(took, r.took)
		}
		close(stop)
		wg.Wait()
		t.Logf("B's list with 30 of A's requests in flight: p50 %s, max %s, non-200 %v; A's answers %v",
			percentile(took, 50).Round(100*time.Microsecond), percentile(took, 100).Round(100*time.Microsecond), failed, statuses)
		if len(failed) > 0 {
			t.Errorf("B's list with 30 of A's requests in flight answered %v", failed)
		}
		if p50, h := percentile(took, 50), percentile(healthy["list"], 50); p50 > max(20*h, 250*time.Millisecond) {
			t.Errorf("B's list with 30 of A's requests in flight: p50 %s (healthy %s)", p50, h)
		}
	}

	// B's live events while A's shard is down: B's marks above changed messages, and
	// a message is created for B now. They arrive while the shard is still down.
	created := B.tn.Message(t, B.subscriber, B.template, nil)
	createdAt := time.Now()
	eventually(t, 5*time.Second, "B's event for the message created while A's shard is down", func() bool {
		return slices.ContainsFunc(arrivals(down, time.Now()), func(a arrival) bool { return a.id == created.ID })
	})
	for _, a := range arrivals(down, time.Now()) {
		if a.id == created.ID {
			t.Logf("B's event for the message created with A's shard down: %s after it was created", a.at.Sub(createdAt).Round(time.Millisecond))
		}
	}
	// B's background work goes on too: a snooze whose time has come ends, and a bulk
	// change left to the server's workers (a job no instance holds) is claimed and done.
	{
		ctx := context.Background()
		if err := st.DB().Exec("UPDATE messages SET snoozed_until = ? WHERE id = ? AND environment_id = ?",
			time.Now().Add(-time.Minute).UTC(), B.msgs[1], B.tn.Env.ID).Error; err != nil {
			t.Fatal(err)
		}
		seen := true
		if err := st.Transaction(ctx, func(ctx context.Context) error {
			_, _, err := st.CreateStateJob(ctx, B.tn.Env.ID, models.StateTarget{SubscriberID: B.sub}, models.StateChange{Seen: &seen}, "test", time.Minute)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		eventually(t, 8*time.Second, "B's snooze ended and B's bulk change done while A's shard is down", func() bool {
			var snoozed, unseen int64
			if err := st.DB().Raw("SELECT COUNT(snoozed_until), COALESCE(SUM(seen = 0), 0) FROM messages WHERE environment_id = ?", B.tn.Env.ID).
				Row().Scan(&snoozed, &unseen); err != nil {
				t.Fatal(err)
			}
			jobs, err := st.StateJobs(ctx, B.tn.Env.ID)
			if err != nil {
				t.Fatal(err)
			}
			return snoozed == 0 && unseen == 0 && len(jobs) == 0
		})
	}
	released := time.Now()
	whileDown := arrivals(down, released)
	for _, id := range B.msgs { // every message B marked while A's shard was down
		if !slices.ContainsFunc(whileDown, func(a arrival) bool { return a.id == id }) {
			t.Errorf("no event for B's mark of %s while A's shard was down", id)
		}
	}
	t.Logf("B's events with A's shard down (%s, %d of B's marks and a new message): %d delivered while it was down",
		released.Sub(down).Round(time.Millisecond), rounds, len(whileDown))
	release()

	// Nothing half done: A's mark is applied whole or not at all, now and once the
	// statements that waited for the shard have run.
	for range 2 {
		wholeOrNothing(t, aBefore, storedMessage(t, st, A.msgs[0]), aMark)
		time.Sleep(time.Second)
	}
	t.Logf("A's mark in flight: %s", map[bool]string{true: "not applied", false: "applied whole"}[cmp.Equal(aBefore.CTA, storedMessage(t, st, A.msgs[0]).CTA)])

	// A works again, and no count drifted.
	eventually(t, 10*time.Second, "A's list once its shard is back", func() bool {
		return send(t, http.MethodGet, list, A.tn.Key, "").status == http.StatusOK
	})
	m := mark{"primary", "done", `{"back":true}`}
	back := time.Now()
	if r := send(t, http.MethodPost, srv.base+m.path(A.sub, A.msgs[1]), A.tn.Key, m.body()); r.status != http.StatusCreated {
		t.Fatalf("A's mark once its shard is back: %d %s", r.status, r.body)
	}
	// A's live events come again: the feed polls A's shard again once it answers.
	eventually(t, 10*time.Second, "A's event for its mark once its shard is back", func() bool {
		return slices.ContainsFunc(aArrivals(back, time.Now()), func(a arrival) bool { return a.id == A.msgs[1] })
	})
	B.msgs = append(B.msgs, created.ID)
	for name, w := range worlds {
		var n int64
		if err := st.DB().Raw("SELECT COUNT(*) FROM messages WHERE environment_id = ?", w.tn.Env.ID).Scan(&n).Error; err != nil {
			t.Fatal(err)
		}
		if n != int64(len(w.msgs)) {
			t.Errorf("%s holds %d messages, want %d", name, n, len(w.msgs))
		}
		if got := totalCount(t, countVia(t, srv.base, w.tn.Key)); got != n {
			t.Errorf("%s's count %d, COUNT(*) %d", name, got, n)
		}
	}
	if r := send(t, http.MethodGet, srv.base+"/readyz", "", ""); r.status != http.StatusOK {
		t.Errorf("/readyz once the shard is back: %d %s", r.status, r.body)
	}
}
