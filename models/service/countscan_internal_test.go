package service

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"messages/models"
)

// An environment runs MaxCountScans row-scanning counts at once: the next waits for a
// turn and is refused with 503 when none comes; another environment's count is not
// held up; and an environment with no count running keeps no entry.
func TestCountScansTakeTurns(t *testing.T) {
	var c countScans
	ctx := context.Background()
	var releases []func()
	for range MaxCountScans {
		release, err := c.take(ctx, "a")
		if err != nil {
			t.Fatal(err)
		}
		releases = append(releases, release)
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := c.take(short, "a"); models.ErrorCode(err) != models.EUNAVAILABLE {
		t.Fatalf("a count past the turns: %v, want unavailable", err)
	}
	other, err := c.take(ctx, "b")
	if err != nil {
		t.Fatalf("another environment's count: %v", err)
	}
	other()
	waited := make(chan error, 1)
	go func() {
		release, err := c.take(ctx, "a")
		if err == nil {
			release()
		}
		waited <- err
	}()
	releases[0]()
	if err := <-waited; err != nil {
		t.Fatalf("a count waiting for a turn given back: %v", err)
	}
	releases[1]()
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.slots) != 0 {
		t.Errorf("%d environments kept with no count running", len(c.slots))
	}
}

// Requests for the same count that wait for a turn together share one count, run after
// the last of them arrived; a different count, or one arriving after it started, runs
// its own.
func TestCountScansShareWaitingCounts(t *testing.T) {
	var c countScans
	ctx := context.Background()
	var held []func()
	for range MaxCountScans {
		release, err := c.take(ctx, "a")
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, release)
	}
	var runs atomic.Int32
	count := func(context.Context) ([]int, error) { return []int{int(runs.Add(1))}, nil }
	const requests = 10
	answers := make(chan []int, requests)
	for range requests {
		go func() {
			got, err := c.count(ctx, "a", "same", count)
			if err != nil {
				t.Error(err)
			}
			answers <- got
		}()
	}
	// Every request has joined the first one's count, which waits for a turn.
	deadline := time.Now().Add(10 * time.Second)
	for {
		c.mu.Lock()
		f := c.waiting["same"]
		joined := f != nil && f.joined == requests-1
		c.mu.Unlock()
		if joined {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the requests did not join one count")
		}
		time.Sleep(time.Millisecond)
	}
	held[0]()
	for range requests {
		if got := <-answers; len(got) != 1 || got[0] != 1 {
			t.Fatalf("an answer %v, want the one count's [1]", got)
		}
	}
	if n := runs.Load(); n != 1 {
		t.Errorf("%d requests waiting together ran %d counts, want 1", requests, n)
	}
	// Started, it is no longer joined: the next request counts again.
	if got, err := c.count(ctx, "a", "same", count); err != nil || got[0] != 2 {
		t.Errorf("a request after the count: %v %v, want a count of its own", got, err)
	}
	held[1]()
}
