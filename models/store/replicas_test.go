package store_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"messages/models"
	"messages/models/dbtest"
	"messages/models/store"
)

// replicaWorld is a primary and a replica (MariaDB's own replication) with two tenants: a
// writer, whose messages the tests mark, and a probe, which only reads and has one
// message on the replica alone (marker). A probe's list that holds marker was read from
// the replica; one without it, from the primary. The probe's environment is never written
// on the primary afterwards, so the row the primary lacks breaks no replicated change.
type replicaWorld struct {
	rep    *dbtest.Replication
	name   string
	store  *store.Store // on the primary, without replicas: fixtures and direct reads
	writer *dbtest.Tenant
	probe  *dbtest.Tenant
	sub    *models.Subscriber
	msgs   []*models.Message
	marker string
}

func startReplicaWorld(t *testing.T) *replicaWorld {
	t.Helper()
	w := &replicaWorld{rep: dbtest.StartReplication(t)}
	w.name = w.rep.CreateDatabase()
	ctx := context.Background()
	var err error
	if w.store, err = store.Open(ctx, w.rep.PrimaryURL(w.name), store.DefaultPool); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.store.Close() })
	if err := w.store.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	w.writer = dbtest.NewTenant(t, w.store, "writer")
	w.sub = w.writer.Subscriber(t, "ada")
	tpl := w.writer.Template(t, "welcome")
	for range 3 {
		w.msgs = append(w.msgs, w.writer.Message(t, w.sub, tpl, nil))
	}
	w.probe = dbtest.NewTenant(t, w.store, "probe")
	probeSub := w.probe.Subscriber(t, "bob")
	w.probe.Message(t, probeSub, w.probe.Template(t, "digest"), nil)
	w.rep.Sync()

	replica, err := store.Open(ctx, w.rep.ReplicaURL(w.name), store.DefaultPool)
	if err != nil {
		t.Fatal(err)
	}
	defer replica.Close()
	w.marker = dbtest.RawMessage(t, replica.DB(), w.probe.Env, probeSub.ID, nil)
	return w
}

// withReplica opens a store on the primary that reads lists from the replica.
func (w *replicaWorld) withReplica(t *testing.T, o store.ReplicaOptions) *store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), w.rep.PrimaryURL(w.name), store.DefaultPool)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	o.URLs = []string{w.rep.ReaderURL(w.name)}
	if o.CheckInterval == 0 {
		o.CheckInterval = 100 * time.Millisecond
	}
	o.Pool = store.DefaultPool
	if err := s.UseReplicas(o); err != nil {
		t.Fatal(err)
	}
	waitReplicaState(t, s, store.ReplicaReady, 10*time.Second)
	return s
}

// waitReplicaState waits until the store's check finds the replica in state.
func waitReplicaState(t *testing.T, s *store.Store, state string, within time.Duration) {
	t.Helper()
	waitCheckedSince(t, s, state, time.Time{}, within)
}

// waitCheckedSince waits until a check made after since finds the replica in state.
func waitCheckedSince(t *testing.T, s *store.Store, state string, since time.Time, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for st := s.Replicas()[0]; st.State != state || st.CheckedAt.Before(since); st = s.Replicas()[0] {
		if time.Now().After(deadline) {
			t.Fatalf("replica not %s within %s: %+v", state, within, s.Replicas()[0])
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// probeList lists the probe's messages through s and reports whether the replica served
// them (marker is in the page), checking that the page and its count agree.
func (w *replicaWorld) probeList(t *testing.T, s *store.Store) bool {
	t.Helper()
	page, err := s.ListMessages(w.probe.Context(), w.probe.Env.ID, models.ListFilter{}, models.Page{Size: 10}, models.Everything)
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	conn, err := s.MessagesAfter(w.probe.Context(), w.probe.Env.ID, models.ListFilter{}, nil, 1, models.Everything)
	if err != nil {
		t.Fatalf("connection page: %v", err)
	}
	onReplica := slices.ContainsFunc(page.Data, func(m *models.Message) bool { return m.ID == w.marker })
	want := 1
	if onReplica {
		want = 2
	}
	if page.TotalCount != want || len(page.Data) != want || conn.TotalCount != want || (conn.Messages[0].ID == w.marker) != onReplica {
		t.Fatalf("one page, one database: list has %d messages, totalCount %d; connection's first %s of %d (marker %s)",
			len(page.Data), page.TotalCount, conn.Messages[0].ID, conn.TotalCount, w.marker)
	}
	return onReplica
}

// TestReadReplicas routes lists, cursors and counts to a real replica and away from it
// when it stops applying changes, lags beyond the bound, or its caller just wrote.
func TestReadReplicas(t *testing.T) {
	w := startReplicaWorld(t)

	t.Run("listsReadTheReplica", func(t *testing.T) {
		s := w.withReplica(t, store.ReplicaOptions{MaxLag: 2 * time.Second})
		before := s.ReplicaReads().Replica.Load()
		if !w.probeList(t, s) {
			t.Fatal("the list was read from the primary while the replica was ready")
		}
		if got := s.ReplicaReads().Replica.Load() - before; got != 2 {
			t.Fatalf("reads served by the replica: %d, want 2", got)
		}
		// The store without replicas, and a list inside a transaction, read the primary.
		if w.probeList(t, w.store) {
			t.Fatal("a store without replicas listed a row the primary lacks")
		}
		// What a page costs on each: the replica's adds a read-only transaction's BEGIN and COMMIT.
		for _, via := range []struct {
			name  string
			store *store.Store
		}{{"replica", s}, {"primary", w.store}} {
			start := time.Now()
			for range 200 {
				if _, err := via.store.ListMessages(w.probe.Context(), w.probe.Env.ID, models.ListFilter{}, models.Page{Size: 10}, models.Everything); err != nil {
					t.Fatal(err)
				}
			}
			t.Logf("a list page read from the %s: %s", via.name, time.Since(start)/200)
		}
		err := s.Transaction(w.probe.Context(), func(ctx context.Context) error {
			page, err := s.ListMessages(ctx, w.probe.Env.ID, models.ListFilter{}, models.Page{Size: 10}, models.Everything)
			if err == nil && page.TotalCount != 1 {
				t.Errorf("a list inside a transaction read the replica: %d messages", page.TotalCount)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	})

	t.Run("replicaStatementsTraced", func(t *testing.T) {
		s := w.withReplica(t, store.ReplicaOptions{MaxLag: 2 * time.Second})
		exp := tracetest.NewInMemoryExporter()
		if err := s.Trace(sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))); err != nil {
			t.Fatal(err)
		}
		if !w.probeList(t, s) {
			t.Fatal("the list was read from the primary")
		}
		if !slices.ContainsFunc(exp.GetSpans(), func(sp tracetest.SpanStub) bool {
			return sp.InstrumentationScope.Name == store.TraceScope && strings.HasPrefix(sp.Name, "select")
		}) {
			t.Fatalf("no span of the replica's statements: %v", exp.GetSpans())
		}
	})

	t.Run("notApplyingIsSkipped", func(t *testing.T) {
		s := w.withReplica(t, store.ReplicaOptions{MaxLag: 2 * time.Second})
		w.rep.StopApplying()
		waitReplicaState(t, s, store.ReplicaStopped, 5*time.Second)
		before := s.ReplicaReads().NoReplica.Load()
		if w.probeList(t, s) {
			t.Fatal("a replica that applies nothing served a list")
		}
		if s.ReplicaReads().NoReplica.Load() == before {
			t.Fatal("the primary's read was not counted as no replica ready")
		}
		w.rep.StartApplying()
		waitReplicaState(t, s, store.ReplicaReady, 5*time.Second)
		if !w.probeList(t, s) {
			t.Fatal("the replica was not used again once it applied changes")
		}
	})

	t.Run("laggingIsSkipped", func(t *testing.T) {
		s := w.withReplica(t, store.ReplicaOptions{MaxLag: time.Second})
		w.rep.Delay(4 * time.Second)
		t.Cleanup(func() { w.rep.Delay(0) })
		// A write on the primary that the replica applies 4 s late: its lag climbs past 1 s.
		w.writer.Message(t, w.sub, w.writer.Template(t, "lag"), nil)
		wrote := time.Now()
		waitReplicaState(t, s, store.ReplicaLagging, 6*time.Second)
		t.Logf("skipped as lagging %s after the write", time.Since(wrote).Round(10*time.Millisecond))
		if w.probeList(t, s) {
			t.Fatalf("a replica %s behind served a list (bound 1s)", s.Replicas()[0].Lag)
		}
		waitReplicaState(t, s, store.ReplicaReady, 10*time.Second)
		t.Logf("ready again %s after the write", time.Since(wrote).Round(10*time.Millisecond))
		if !w.probeList(t, s) {
			t.Fatal("the replica was not used again once it caught up")
		}
	})

	t.Run("readYourWrites", func(t *testing.T) {
		// Two instances whose replica applies changes 3 s late, within their bound.
		opts := store.ReplicaOptions{MaxLag: 30 * time.Second, ReadAfterWrite: 2 * time.Second}
		a, b := w.withReplica(t, opts), w.withReplica(t, opts)
		w.rep.Delay(3 * time.Second)
		t.Cleanup(func() { w.rep.Delay(0) })
		delayed := time.Now()
		waitCheckedSince(t, a, store.ReplicaReady, delayed, 5*time.Second)
		waitCheckedSince(t, b, store.ReplicaReady, delayed, 5*time.Second)
		ctx := w.writer.Context()
		target := w.msgs[0]
		marked, err := a.MarkMessageAction(ctx, w.writer.Env.ID, models.MarkAction{MessageID: target.ID, SubscriberID: "ada",
			Type: models.ButtonPrimary, Status: models.ActionDone})
		if err != nil {
			t.Fatal(err)
		}
		markedAt := time.Now()
		if marked.CTA.Action.Status != models.ActionDone {
			t.Fatalf("the mark answered %s: its record must come from the primary", marked.CTA.Action.Status)
		}
		statusAs := func(s *store.Store, ctx context.Context) models.MessageActionStatus {
			t.Helper()
			page, err := s.ListMessages(ctx, w.writer.Env.ID, models.ListFilter{}, models.Page{Size: 10}, models.Everything)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range page.Data {
				if m.ID == target.ID {
					return m.CTA.Action.Status
				}
			}
			t.Fatalf("message %s missing from the list", target.ID)
			return ""
		}
		status := func(s *store.Store) models.MessageActionStatus { return statusAs(s, ctx) }
		// fromReplica lists through s until the replica serves the list: under load a check
		// can time out and leave s without a ready replica for a moment, and s then reads
		// the primary, which proves nothing. Such a read is taken again once a check finds
		// the replica ready, while the replica is still behind.
		fromReplica := func(s *store.Store, ctx context.Context) models.MessageActionStatus {
			t.Helper()
			for {
				replicaReads := s.ReplicaReads().Replica.Load()
				got := statusAs(s, ctx)
				if s.ReplicaReads().Replica.Load() == replicaReads+1 {
					return got
				}
				if time.Since(markedAt) > 2*time.Second {
					t.Fatal("no ready replica within the replica's delay; the test proves nothing")
				}
				waitCheckedSince(t, s, store.ReplicaReady, time.Now(), 2*time.Second)
			}
		}
		afterWrite := a.ReplicaReads().AfterWrite.Load()
		if got := status(a); got != models.ActionDone {
			t.Fatalf("the instance that marked listed %s right after: its caller's lists must read the primary", got)
		}
		if a.ReplicaReads().AfterWrite.Load() != afterWrite+1 {
			t.Fatal("the read after the write was not counted as such")
		}
		// What docs/operating.md (Read replicas) warns of: another instance reads the replica, 3 s behind.
		if got := fromReplica(b, ctx); got != models.ActionPending {
			t.Fatalf("another instance listed %s from the replica within its delay", got)
		}
		// Another caller of the same instance (a session of the subscriber) reads the replica too.
		session := models.WithCaller(context.Background(), models.Caller{EnvironmentID: w.writer.Env.ID, SubscriberID: "ada"})
		if got := fromReplica(a, session); got != models.ActionPending {
			t.Fatalf("another caller's list, from the replica, shows %s", got)
		}
		// Past the window, the writer reads the replica again.
		time.Sleep(opts.ReadAfterWrite)
		replicaReads := a.ReplicaReads().Replica.Load()
		status(a)
		if a.ReplicaReads().Replica.Load() != replicaReads+1 {
			t.Fatal("the writer still read the primary after the window")
		}
	})

	t.Run("withoutReplicaMonitorIsSkipped", func(t *testing.T) {
		// docs/operating.md: the replica's user needs REPLICA MONITOR to read its lag; without it
		// every check is refused and lists read the primary.
		w.rep.Primary("CREATE USER 'selectonly'@'127.0.0.1'", "GRANT SELECT ON *.* TO 'selectonly'@'127.0.0.1'")
		w.rep.Sync()
		s, err := store.Open(context.Background(), w.rep.PrimaryURL(w.name), store.DefaultPool)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		selectOnly := strings.Replace(w.rep.ReaderURL(w.name), dbtest.ReaderUser+"@", "selectonly@", 1)
		if err := s.UseReplicas(store.ReplicaOptions{URLs: []string{selectOnly}, CheckInterval: 100 * time.Millisecond, Pool: store.DefaultPool}); err != nil {
			t.Fatal(err)
		}
		waitReplicaState(t, s, store.ReplicaDown, 5*time.Second)
		if w.probeList(t, s) {
			t.Fatal("a replica whose lag cannot be read served a list")
		}
	})

	t.Run("silentReplicaIsReadFromPrimaryInTime", func(t *testing.T) {
		s := w.withReplica(t, store.ReplicaOptions{MaxLag: 2 * time.Second, CheckInterval: time.Hour})
		w.rep.PauseReplica()
		t.Cleanup(w.rep.ResumeReplica)
		// A request's deadline, as the edge sets one: the replica gets half of it.
		ctx, cancel := context.WithTimeout(w.probe.Context(), 2*time.Second)
		defer cancel()
		start := time.Now()
		page, err := s.ListMessages(ctx, w.probe.Env.ID, models.ListFilter{}, models.Page{Size: 10}, models.Everything)
		if err != nil {
			t.Fatalf("a list with a silent replica failed after %s: %v", time.Since(start), err)
		}
		t.Logf("a list with a silent replica answered from the primary in %s (deadline 2s)", time.Since(start).Round(10*time.Millisecond))
		if page.TotalCount != 1 || s.ReplicaReads().Failed.Load() != 1 || s.Replicas()[0].State != store.ReplicaDown {
			t.Fatalf("want the primary's page (1 message) and the replica down: %d messages, %+v", page.TotalCount, s.Replicas()[0])
		}
		w.rep.ResumeReplica()
	})

	t.Run("readFailingOnReplicaIsReadFromPrimary", func(t *testing.T) {
		// Checked once at start, not again: the kill is found by the read itself.
		s := w.withReplica(t, store.ReplicaOptions{MaxLag: 2 * time.Second, CheckInterval: time.Hour})
		if !w.probeList(t, s) {
			t.Fatal("the replica did not serve the first list")
		}
		w.rep.KillReplica()
		if w.probeList(t, s) {
			t.Fatal("a killed replica served a list")
		}
		if got := s.ReplicaReads().Failed.Load(); got != 1 {
			t.Fatalf("reads that failed on the replica: %d, want 1", got)
		}
		if st := s.Replicas()[0]; st.State != store.ReplicaDown {
			t.Fatalf("a replica whose read failed is %s, want down until a check finds it ready", st.State)
		}
		// probeList reads twice: a list and a connection page.
		noReplica := s.ReplicaReads().NoReplica.Load()
		if w.probeList(t, s) || s.ReplicaReads().NoReplica.Load() != noReplica+2 || s.ReplicaReads().Failed.Load() != 1 {
			t.Fatal("the replica found down was tried again before a check")
		}
		w.rep.RestartReplica()
	})
}

// TestReplicaOptionsRefused: a replica on SQLite, or a URL that is not MySQL's, is a
// configuration mistake reported at start.
func TestReplicaOptionsRefused(t *testing.T) {
	s := dbtest.Open(t, store.DialectSQLite)
	if err := s.UseReplicas(store.ReplicaOptions{URLs: []string{"mysql://root@127.0.0.1:3306/x"}}); err == nil || !strings.Contains(err.Error(), "SQLite") {
		t.Fatalf("replicas of SQLite: %v", err)
	}
	m := dbtest.Open(t, store.DialectMySQL)
	for _, u := range []string{"sqlite:./x.db", "mysql://root@127.0.0.1:3306"} {
		if err := m.UseReplicas(store.ReplicaOptions{URLs: []string{u}}); err == nil {
			t.Fatalf("replica URL %q accepted", u)
		}
	}
}

// TestParseReadURLs: DATABASE_READ_URLS is mysql:// URLs separated by commas, each one
// host, each host once.
func TestParseReadURLs(t *testing.T) {
	for _, tc := range []struct {
		name, list string
		want       []string
		refused    string
	}{
		{name: "two", list: "mysql://r:p@db2:3306/m, mysql://r:p@db3/m", want: []string{"mysql://r:p@db2:3306/m", "mysql://r:p@db3/m"}},
		{name: "emptyPieces", list: ",mysql://r@db2/m,", want: []string{"mysql://r@db2/m"}},
		{name: "severalHostsRefused", list: "mysql://r@db2:3306,db3:3306/m", refused: "several hosts"},
		{name: "sqliteRefused", list: "sqlite:./x.db", refused: "not a mysql:// URL"},
		{name: "noDatabaseRefused", list: "mysql://r@db2:3306", refused: "names no database"},
		{name: "twiceRefused", list: "mysql://r@db2/m,mysql://s@db2/m", refused: "twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := store.ParseReadURLs(tc.list)
			if tc.refused != "" {
				if err == nil || !strings.Contains(err.Error(), tc.refused) {
					t.Fatalf("ParseReadURLs(%q) = %v, %v; want an error saying %q", tc.list, got, err, tc.refused)
				}
				return
			}
			if err != nil || !slices.Equal(got, tc.want) {
				t.Fatalf("ParseReadURLs(%q) = %q, %v; want %q", tc.list, got, err, tc.want)
			}
		})
	}
}
