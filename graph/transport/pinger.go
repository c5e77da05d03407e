package transport

import (
	"sync"
	"time"
)

// pinger pings a transport's connections (acknowledged sockets, event streams) every
// interval, the connections spread over the interval's slots (a timing wheel): a tick
// visits one slot and pings its connections in turn, those the poller reads on the
// poller goroutine that reads them (relay), the others on the pinger's. Against a timer
// a connection, it starts no goroutine a ping and holds a map entry, not a timer, a
// connection. Its goroutine runs while connections are registered.
type pinger struct {
	tick time.Duration

	mu      sync.Mutex
	slots   []map[pingable]*relay // each connection, with the relay of its poller or nil
	next    int                   // the slot the next tick visits
	count   int
	running bool
	due     []pingable // the visited slot's connections not on the poller, reused
}

// pingable is a connection the pinger pings.
type pingable interface {
	// ping writes the keep-alive; it must not block (it may run on the poller).
	ping()
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
	p := &pinger{tick: interval / time.Duration(n), slots: make([]map[pingable]*relay, n)}
	for i := range p.slots {
		p.slots[i] = map[pingable]*relay{}
	}
	return p
}

// add registers s, which the poller goroutine of r reads (nil: none); its first ping
// comes a full interval later. It returns the slot, which remove takes.
func (p *pinger) add(s pingable, r *relay) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	// The slot visited last: its next visit is the whole wheel away.
	slot := (p.next + len(p.slots) - 1) % len(p.slots)
	p.slots[slot][s] = r
	p.count++
	if !p.running {
		p.running = true
		go p.run()
	}
	return slot
}

// remove unregisters s, registered in slot.
func (p *pinger) remove(s pingable, slot int) {
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
		var relayed map[*relay][]pingable
		for s, r := range p.slots[p.next] {
			if r == nil {
				due = append(due, s)
				continue
			}
			if relayed == nil {
				relayed = map[*relay][]pingable{}
			}
			relayed[r] = append(relayed[r], s)
		}
		p.next = (p.next + 1) % len(p.slots)
		p.mu.Unlock()
		for r, batch := range relayed {
			r.run(func() { pingAll(batch) })
		}
		pingAll(due)
		clear(due)
		p.mu.Lock()
		p.due = due
		p.mu.Unlock()
	}
}

// pingAll pings each of batch in turn.
func pingAll(batch []pingable) {
	for _, s := range batch {
		s.ping()
	}
}
