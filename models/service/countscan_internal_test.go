package service

import (
	"context"
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
