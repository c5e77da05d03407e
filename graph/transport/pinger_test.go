package transport

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// countingPing counts its pings.
type countingPing struct{ n atomic.Int32 }

func (c *countingPing) ping() { c.n.Add(1) }

// The pinger pings what it holds every interval, through the relay of the poller
// goroutine that reads it or on its own goroutine, and stops pinging what was removed.
func TestPingerPingsThroughRelays(t *testing.T) {
	pl, err := poller()
	if err != nil {
		t.Fatal(err)
	}
	p := newPinger(200 * time.Millisecond)
	relayed, direct, removed := make([]*countingPing, 300), make([]*countingPing, 10), &countingPing{}
	for i := range relayed {
		relayed[i] = &countingPing{}
		p.add(relayed[i], pl.relays[i%len(pl.relays)])
	}
	for i := range direct {
		direct[i] = &countingPing{}
		p.add(direct[i], nil)
	}
	p.remove(removed, p.add(removed, pl.relays[0]))

	deadline := time.Now().Add(10 * time.Second)
	for _, c := range append(relayed, direct...) {
		for c.n.Load() < 2 {
			if time.Now().After(deadline) {
				t.Fatalf("pinged %d times in 10 s at one ping every 200 ms", c.n.Load())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	if n := removed.n.Load(); n != 0 {
		t.Fatalf("removed, pinged %d times", n)
	}
}

// A relay runs what it is given on its poller goroutine, in order, however many callers
// give it work at once.
func TestRelayRunsInOrder(t *testing.T) {
	pl, err := poller()
	if err != nil {
		t.Fatal(err)
	}
	r := pl.relays[0]
	const callers, each = 8, 500
	var mu sync.Mutex
	got := make([][]int, callers)
	var wg sync.WaitGroup
	for c := range callers {
		wg.Go(func() {
			for i := range each {
				r.run(func() {
					mu.Lock()
					got[c] = append(got[c], i)
					mu.Unlock()
				})
			}
		})
	}
	wg.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		n := 0
		for _, g := range got {
			n += len(g)
		}
		mu.Unlock()
		if n == callers*each {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d functions ran in 10 s", n, callers*each)
		}
		time.Sleep(10 * time.Millisecond)
	}
	for c, g := range got {
		for i, v := range g {
			if v != i {
				t.Fatalf("caller %d: function %d ran as %d", c, v, i)
			}
		}
	}
}
