package edge_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"messages/cmd/server/edge"
	"messages/models"
)

// revocations is a KeyChecker whose revoked keys the test sets.
type revocations struct {
	mu      sync.Mutex
	revoked []string
}

func (r *revocations) RevokedKeys(_ context.Context, keyIDs []string) ([]string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, k := range keyIDs {
		if slices.Contains(r.revoked, k) {
			out = append(out, k)
		}
	}
	return out, nil
}

// setClock is a clock the test sets.
type setClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *setClock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *setClock) set(t time.Time) { c.mu.Lock(); c.now = t; c.mu.Unlock() }

// ends records the doors a watch ended, with their reasons.
type ends struct {
	mu  sync.Mutex
	why map[string]string
}

func (e *ends) end(name string) func(error) {
	return func(err error) {
		e.mu.Lock()
		defer e.mu.Unlock()
		e.why[name] = models.ErrorMessage(err)
	}
}

// waitFor waits until the ended doors are want, then checks none more ends for a while.
func (e *ends) waitFor(t *testing.T, want map[string]string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		e.mu.Lock()
		got := len(e.why)
		e.mu.Unlock()
		if got >= len(want) || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond) // ten more checks
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.why) != len(want) {
		t.Fatalf("ended %v, want %v", e.why, want)
	}
	for k, v := range want {
		if e.why[k] != v {
			t.Fatalf("ended %v, want %v", e.why, want)
		}
	}
}

// A watch ends each session as it expires, not before, skips the doors it stopped
// watching, and ends every door of a revoked key.
func TestWatchEndsExpiredAndRevoked(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := &setClock{now: start}
	keys := &revocations{}
	w := edge.NewWatch(keys, c.Now, 10*time.Millisecond, nil)
	e := &ends{why: map[string]string{}}
	for _, name := range []string{"key1", "key2", "key3"} {
		stop := w.Add(models.Caller{KeyID: "A"}, e.end(name))
		t.Cleanup(stop)
	}
	session := func(name string, after time.Duration) func() {
		stop := w.Add(models.Caller{KeyID: "B", SubscriberID: "alice", ExpiresAt: start.Add(after)}, e.end(name))
		t.Cleanup(stop)
		return stop
	}
	session("s3", 3*time.Second)
	session("s1", time.Second)
	stop2 := session("s2", 2*time.Second)
	if n := w.Len(); n != 6 {
		t.Fatalf("watching %d doors, want 6", n)
	}

	e.waitFor(t, map[string]string{})
	c.set(start.Add(1500 * time.Millisecond))
	e.waitFor(t, map[string]string{"s1": "session expired"})
	stop2()
	c.set(start.Add(2500 * time.Millisecond))
	e.waitFor(t, map[string]string{"s1": "session expired"})
	c.set(start.Add(3 * time.Second))
	e.waitFor(t, map[string]string{"s1": "session expired", "s3": "session expired"})

	keys.mu.Lock()
	keys.revoked = []string{"A"}
	keys.mu.Unlock()
	e.waitFor(t, map[string]string{"s1": "session expired", "s3": "session expired",
		"key1": "API key was revoked", "key2": "API key was revoked", "key3": "API key was revoked"})
	if n := w.Len(); n != 0 {
		t.Fatalf("watching %d doors after all ended, want 0", n)
	}
}
