package transport

import (
	"sync"
	"time"
)

// pinger pings a transport's acknowledged sockets every interval from one goroutine, the
// sockets spread over the interval's slots (a timing wheel): a tick visits one slot and
// pings its sockets in turn. Against a timer per socket, it starts no goroutine per ping
// and holds a map entry, not a timer, per socket. Its goroutine runs while sockets are
// registered.
type pinger struct {
	tick time.Duration

	mu      sync.Mutex
	slots   []map[*socket]struct{}
	next    int // the slot the next tick visits
	count   int
	running bool
	due     []*socket // the visited slot's sockets, reused
}

// pingSlot is about how long one slot of the wheel spans: the sockets of a slot are
// pinged together, every interval, and their pongs come back together, read in a few
// wakes of the poller rather than one each (at 10,000 sockets and 12 s, about 2,500
// pings every 3 s). At most maxPingSlots slots.
const (
	pingSlot     = 3 * time.Second
	maxPingSlots = 60
)

// newPinger returns the pinger of sockets pinged every interval.
func newPinger(interval time.Duration) *pinger {
	n := min(max(int(interval/pingSlot), 1), maxPingSlots)
	p := &pinger{tick: interval / time.Duration(n), slots: make([]map[*socket]struct{}, n)}
	for i := range p.slots {
		p.slots[i] = map[*socket]struct{}{}
	}
	return p
}

// add registers s; its first ping comes a full interval later. It returns the slot,
// which remove takes.
func (p *pinger) add(s *socket) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	// The slot visited last: its next visit is the whole wheel away.
	slot := (p.next + len(p.slots) - 1) % len(p.slots)
	p.slots[slot][s] = struct{}{}
	p.count++
	if !p.running {
		p.running = true
		go p.run()
	}
	return slot
}

// remove unregisters s, registered in slot.
func (p *pinger) remove(s *socket, slot int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.slots[slot][s]; ok {
		delete(p.slots[slot], s)
		p.count--
	}
}

// run visits a slot each tick until no socket is registered.
func (p *pinger) run() {
	t := time.NewTicker(p.tick)
	defer t.Stop()
	for range t.C {
		p.mu.Lock()
		if p.count == 0 {
			p.running = false
			p.mu.Unlock()
			return
		}
		due := p.due[:0]
		for s := range p.slots[p.next] {
			due = append(due, s)
		}
		p.next = (p.next + 1) % len(p.slots)
		p.mu.Unlock()
		for _, s := range due {
			s.ping()
		}
		clear(due)
		p.mu.Lock()
		p.due = due
		p.mu.Unlock()
	}
}
