package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"messages/models"
	"messages/models/dbtest"
	"messages/models/store"
)

// bulkMessages is the inbox the issue asked to handle in one call.
const bulkMessages = 100_000

// bulkInbox is a tenant whose subscriber alice has n unread in-app messages, written
// straight into the database, 5,000 a transaction, as import writes them.
func bulkInbox(t *testing.T, st *store.Store, n int) *dbtest.Tenant {
	t.Helper()
	tn := dbtest.NewTenant(t, st, "bulk")
	sub := tn.Subscriber(t, "alice")
	start := time.Now()
	for done := 0; done < n; {
		var msgs []*models.Message
		for range min(5000, n-done) {
			done++
			created := dbtest.Base.Add(time.Duration(done) * time.Second)
			msgs = append(msgs, &models.Message{ID: models.NewID(created), EnvironmentID: tn.Env.ID, OrganizationID: tn.Env.OrganizationID,
				SubscriberID: sub.ID, CreatedAt: models.NewTime(created), Channel: models.ChannelInApp,
				TransactionID: fmt.Sprintf("bulk-%d", done), Status: "sent"})
		}
		err := st.Transaction(context.Background(), func(ctx context.Context) error {
			return st.WriteBatch(ctx, store.Batch{Messages: msgs}, store.ConflictFail)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d messages written in %s", n, time.Since(start).Round(time.Millisecond))
	return tn
}

// inboxCounts are alice's in-app messages in each state: from the counters the API
// answers with, and from COUNT over the rows.
type inboxCounts struct{ Read, Unread, Seen, Archived int }

func countersOf(t *testing.T, st *store.Store, env string) inboxCounts {
	t.Helper()
	alice, inApp := "alice", models.ChannelInApp
	c, err := st.CountStates(context.Background(), env, &alice, &inApp)
	if err != nil {
		t.Fatal(err)
	}
	return inboxCounts{Read: c.Count(models.StateFilter{Read: models.Bool(true)}), Unread: c.Count(models.StateFilter{Read: models.Bool(false)}),
		Seen: c.Count(models.StateFilter{Seen: models.Bool(true)}), Archived: c.Count(models.StateFilter{Archived: models.Bool(true)})}
}

func rowsOf(t *testing.T, st *store.Store, env string) inboxCounts {
	t.Helper()
	var c inboxCounts
	err := st.DB().Raw("SELECT SUM(`read` <> 0) AS `read`, SUM(`read` = 0) AS unread, SUM(seen <> 0) AS seen, SUM(archived <> 0) AS archived "+
		"FROM messages WHERE environment_id = ? AND channel = 'in_app'", env).Scan(&c).Error
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// jobsLeft is how many bulk changes of the environment are not done yet.
func jobsLeft(t *testing.T, st *store.Store, env string) int {
	t.Helper()
	jobs, err := st.StateJobs(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	return len(jobs)
}

// marked is markAllMessages' answer.
type marked struct {
	Changed int
	Done    bool
	JobID   *string
}

// markAll sends markAllMessages for alice's in-app messages with the given change and
// returns the reply and, when it is 200 with data, the answer.
func markAll(t *testing.T, base, key, change string) (reply, *marked) {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"query": `mutation { markAllMessages(subscriberId: "alice", channel: in_app, ` + change + `) { changed done jobId } }`})
	r := send(t, http.MethodPost, base+"/graphql", key, string(body))
	var out struct {
		Data   *struct{ MarkAllMessages *marked }
		Errors []json.RawMessage
	}
	if r.status != http.StatusOK || json.Unmarshal(r.body, &out) != nil || len(out.Errors) > 0 || out.Data == nil {
		return r, nil
	}
	return r, out.Data.MarkAllMessages
}

// inboxToken opens an inbox session of the subscriber with the API key.
func inboxToken(t *testing.T, base, key, subscriberID string) string {
	t.Helper()
	r := send(t, http.MethodPost, base+"/v1/inbox/session", key, `{"subscriberId":"`+subscriberID+`"}`)
	var s struct{ Token string }
	if r.status != http.StatusCreated || json.Unmarshal(r.body, &s) != nil || s.Token == "" {
		t.Fatalf("inbox session: %d %s", r.status, r.body)
	}
	return s.Token
}

// inboxBulk sends POST /v1/inbox/notifications/{change} with the session's token and
// the body @novu/js sends when no tags are given (its readAll(), seenAll(), deleteAll()
// ...), and returns the reply and, when it is 200 or 202 with the documented body (the
// number changed, or deleted for a delete), the answer in markAllMessages' terms.
func inboxBulk(t *testing.T, base, token, change string) (reply, *marked) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+"/v1/inbox/notifications/"+change, strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	start := time.Now()
	res, err := faultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	r := reply{status: res.StatusCode, header: res.Header, body: b, took: time.Since(start)}
	var out struct {
		Data map[string]json.RawMessage
	}
	count := "changed"
	if change == "delete" {
		count = "deleted"
	}
	var n int
	if json.Unmarshal(b, &out) != nil || json.Unmarshal(out.Data[count], &n) != nil {
		return r, nil
	}
	var job *string
	if raw, ok := out.Data["jobId"]; ok && json.Unmarshal(raw, &job) != nil {
		return r, nil
	}
	switch {
	case res.StatusCode == http.StatusOK && job == nil:
		return r, &marked{Changed: n, Done: true}
	case res.StatusCode == http.StatusAccepted && job != nil:
		return r, &marked{Changed: n, JobID: job}
	}
	return r, nil
}

// v1MarkAll sends POST /v1/subscribers/alice/messages/mark-all with the API key and
// markAs, and returns the reply and, when it is 201 with a number (and a Job-Id header
// when the change carries on), the answer in markAllMessages' terms.
func v1MarkAll(t *testing.T, base, key, markAs string) (reply, *marked) {
	t.Helper()
	r := send(t, http.MethodPost, base+"/v1/subscribers/alice/messages/mark-all", key, `{"markAs":"`+markAs+`"}`)
	var n int
	if r.status != http.StatusCreated || json.Unmarshal(r.body, &n) != nil {
		return r, nil
	}
	if job := r.header.Get("Job-Id"); job != "" {
		return r, &marked{Changed: n, JobID: &job}
	}
	return r, &marked{Changed: n, Done: true}
}

// finished waits until the change an answer accepted is done, and returns how long that
// took after the answer.
func finished(t *testing.T, st *store.Store, env string, m *marked, within time.Duration) time.Duration {
	t.Helper()
	if m.Done {
		if m.JobID != nil {
			t.Errorf("a done change names a job: %s", *m.JobID)
		}
		return 0
	}
	if m.JobID == nil || *m.JobID == "" {
		t.Fatalf("an accepted change names no job: %+v", m)
	}
	start := time.Now()
	eventually(t, within, "the accepted change done", func() bool { return jobsLeft(t, st, env) == 0 })
	return time.Since(start)
}

// Bulk changes through a database that fails: one refused because the database is down
// is a 503 that changed nothing and left no job; one whose database goes away midway
// was accepted and completes once it is back; one whose instance dies midway (its
// database connection cut for good, so it can neither write nor give up its lease) is
// taken on by another instance once the lease has passed, and completes there.
func TestBulkChangeFaults(t *testing.T) {
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
	const n = 30_000
	tn := bulkInbox(t, st, n)
	env := tn.Env.ID
	upstream, err := url.Parse(direct)
	if err != nil {
		t.Fatal(err)
	}
	proxy := newFaultProxy(t, upstream.Host)
	t.Setenv("DATABASE_URL", withHost(t, direct, proxy.addr(), ""))
	t.Setenv("APP_ENV", "production")
	const lease = 2 * time.Second
	srv := start(t, "--request-timeout", requestTimeout.String(), "--bulk-job-lease", lease.String(), "--auth-cache-ttl", "1h")
	// The key is checked once, so that requests while the database is down reach the change.
	if r, m := markAll(t, srv.base, tn.Key, "archived: false"); m == nil {
		t.Fatalf("a change of nothing: %d %s", r.status, r.body)
	}

	t.Run("refused503WhenDown", func(t *testing.T) {
		before := rowsOf(t, st, env)
		proxy.down()
		r, _ := markAll(t, srv.base, tn.Key, "read: true")
		proxy.up(t)
		unavailable503(t, "graphql markAllMessages while the database is down", r)
		if got := rowsOf(t, st, env); got != before {
			t.Errorf("a refused change changed messages: %+v, before %+v", got, before)
		}
		if left := jobsLeft(t, st, env); left != 0 {
			t.Errorf("a refused change left %d jobs", left)
		}
	})

	t.Run("acceptedCompletesAfterOutage", func(t *testing.T) {
		// Slow answers, so the change is still running when the database goes away.
		removeLatency := proxy.toxic(t, "latency", map[string]any{"latency": 20})
		done := make(chan reply, 1)
		var m *marked
		go func() {
			var r reply
			r, m = markAll(t, srv.base, tn.Key, "read: true")
			done <- r
		}()
		eventually(t, 10*time.Second, "the change under way", func() bool { return rowsOf(t, st, env).Read > 0 })
		proxy.down()
		r := answeredBeforeDeadline(t, done, 2*requestTimeout)
		if m == nil || m.Done || m.JobID == nil {
			t.Fatalf("a change under way when the database went away: %d %s, want accepted", r.status, r.body)
		}
		time.Sleep(time.Second)
		removeLatency()
		proxy.up(t)
		finished(t, st, env, m, time.Minute)
		want := inboxCounts{Read: n}
		if got, counters := rowsOf(t, st, env), countersOf(t, st, env); got != want || counters != want {
			t.Errorf("after the outage: rows %+v, counters %+v, want %+v", got, counters, want)
		}
	})

	t.Run("takenOnWhenInstanceDies", func(t *testing.T) {
		// A second instance on the database directly; the first, through the proxy, dies
		// with its change under way.
		t.Setenv("DATABASE_URL", direct)
		start(t, "--request-timeout", requestTimeout.String(), "--bulk-job-lease", lease.String())
		removeLatency := proxy.toxic(t, "latency", map[string]any{"latency": 20})
		defer removeLatency()
		done := make(chan reply, 1)
		go func() {
			r, _ := markAll(t, srv.base, tn.Key, "seen: true")
			done <- r
		}()
		eventually(t, 10*time.Second, "the change under way", func() bool { return rowsOf(t, st, env).Seen > 0 })
		proxy.down()
		defer proxy.up(t)
		<-done
		died := time.Now()
		eventually(t, time.Minute, "the change taken on and done", func() bool { return jobsLeft(t, st, env) == 0 })
		t.Logf("taken on and done %s after the instance died (lease %s)", time.Since(died).Round(time.Millisecond), lease)
		want := inboxCounts{Read: n, Seen: n}
		if got, counters := rowsOf(t, st, env), countersOf(t, st, env); got != want || counters != want {
			t.Errorf("after the instance died: rows %+v, counters %+v, want %+v", got, counters, want)
		}
	})
}
