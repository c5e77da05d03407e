package migrate_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"messages/models"
	"messages/models/dbtest"
	"messages/models/migrate"
	"messages/models/store"
)

// leaseTable opens a store on a fresh MySQL database whose lease row is already held by
// holder on node until expires, as another migrator would have left it.
// testLease is the lease these tests run with: long enough for a migration on a shared
// machine, short enough to watch it expire.
const testLease = 900 * time.Millisecond

func leaseTable(t *testing.T, holder, node string, expires time.Duration) *store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), dbtest.URL(t, store.DialectMySQL), store.DefaultPool, store.WithMigrationLease(testLease))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if node == "" {
		if err := s.DB().Raw("SELECT CONCAT(@@hostname, ':', @@port)").Scan(&node).Error; err != nil {
			t.Fatal(err)
		}
	}
	if err := s.DB().Exec("CREATE TABLE " + migrate.LockTable +
		" (id TINYINT NOT NULL, holder VARCHAR(64) NOT NULL, node VARCHAR(255) NOT NULL, expires_at DATETIME(6) NOT NULL, PRIMARY KEY (id))").Error; err != nil {
		t.Fatal(err)
	}
	if err := s.DB().Exec("INSERT INTO "+migrate.LockTable+" VALUES (1, ?, ?, UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND)",
		holder, node, expires.Microseconds()).Error; err != nil {
		t.Fatal(err)
	}
	return s
}

// leaseHolder is who holds the lease now ("" when free).
func leaseHolder(t *testing.T, s *store.Store) string {
	t.Helper()
	var holder string
	if err := s.DB().Raw("SELECT holder FROM " + migrate.LockTable + " WHERE id = 1").Scan(&holder).Error; err != nil {
		t.Fatal(err)
	}
	return holder
}

// The lease is a row every node of a cluster sees; these tests play the other node by
// writing that row themselves. They change the lease's length, so none runs in parallel.
func TestMigrationLease(t *testing.T) {
	ctx := context.Background()

	t.Run("expiredOnAnotherNodeTakenOver", func(t *testing.T) {
		s := leaseTable(t, "crashed", "node2:3306", -time.Second)
		if err := s.Migrate(ctx); err != nil {
			t.Fatalf("migrate past an expired lease: %v", err)
		}
		if h := leaseHolder(t, s); h != "" {
			t.Errorf("lease held by %q after migrating, want it freed", h)
		}
	})

	t.Run("liveOnAnotherNodeWaitedFor", func(t *testing.T) {
		s := leaseTable(t, "busy", "node2:3306", 1500*time.Millisecond)
		short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		defer cancel()
		if err := s.Migrate(short); !errors.Is(err, context.DeadlineExceeded) || !models.IsUnavailable(err) {
			t.Errorf("migrate while another node holds the lease, 300 ms to wait: %v, want a deadline error", err)
		}
		start := time.Now()
		if err := s.Migrate(ctx); err != nil {
			t.Fatalf("migrate once the other node's lease expired: %v", err)
		}
		if waited := time.Since(start); waited < time.Second {
			t.Errorf("migrated after %s, before the other node's lease expired", waited)
		}
	})

	t.Run("leftOnThisServerTakenOverAtOnce", func(t *testing.T) {
		// A holder on this server would hold the named lock too: having it, the lease's
		// holder is gone (a crash), however long its lease had to run.
		s := leaseTable(t, "crashed", "", time.Hour)
		start := time.Now()
		if err := s.Migrate(ctx); err != nil {
			t.Fatalf("migrate past a lease left on this server: %v", err)
		}
		if took := time.Since(start); took > 5*time.Second {
			t.Errorf("took %s, want no wait for a dead holder on this server", took)
		}
	})

	t.Run("renewedWhileMigrating", func(t *testing.T) {
		s := leaseTable(t, "", "", -time.Second)
		conn, err := s.DB().DB()
		if err != nil {
			t.Fatal(err)
		}
		lost := make(chan error, 1)
		lock := migrate.NewMigrationLock(conn, testLease, func(cause error) { lost <- cause })
		c, err := conn.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if err := lock.SessionLock(ctx, c); err != nil {
			t.Fatal(err)
		}
		holder := leaseHolder(t, s)
		time.Sleep(2 * time.Second) // two leases: renewed, or another could take it
		if h := leaseHolder(t, s); h != holder || holder == "" {
			t.Errorf("lease held by %q after two leases, want still %q", h, holder)
		}
		// Another migrator takes it over (this one stalled): the migration is cancelled.
		if err := s.DB().Exec("UPDATE " + migrate.LockTable + " SET holder = 'other'").Error; err != nil {
			t.Fatal(err)
		}
		select {
		case cause := <-lost:
			if !errors.Is(cause, migrate.ErrMigrationLeaseLost) {
				t.Errorf("cancelled with %v, want ErrMigrationLeaseLost", cause)
			}
		case <-time.After(2 * time.Second):
			t.Error("the migration went on after its lease was taken over")
		}
		if err := lock.SessionUnlock(ctx, c); err != nil {
			t.Fatal(err)
		}
		if h := leaseHolder(t, s); h != "other" {
			t.Errorf("unlocking freed the lease another migrator holds (holder %q)", h)
		}
	})
}
