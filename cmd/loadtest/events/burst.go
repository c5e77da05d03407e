package events

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"messages/cmd/loadtest/measure"
)

// allEventsQuery is an environment-wide subscription: every message of the environment.
const allEventsQuery = `subscription { messageEvents { kind cursor message { _id subscriber { subscriberId } } } }`

// burst opens one subscription (and socket) per subscriber for --burst-subscribers
// subscribers, plus one environment-wide subscription, writes --burst-per-subscriber
// messages to each in one transaction, and counts what every subscription receives.
// Then it measures the quiet that follows: the poll reads the burst again until a newer
// change moves its window.
func (b *eventsBench) burst(ctx context.Context) ([]eventsRow, error) {
	const name = "burst"
	subs := b.subscribers[:b.c.burstSubs]
	total := len(subs) * b.c.burstPer
	set := &socketSet{}
	defer set.closeAll(200)
	arrivals := make(chan time.Time, total*2)
	listeners, everyone, err := b.openBurst(ctx, set, subs, arrivals)
	if err != nil {
		return nil, err
	}
	time.Sleep(time.Second)

	started := time.Now()
	committed, err := b.insertRaw(ctx, newRawMessages(total, subs, ""))
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(b.log, "%d messages committed in %s\n", total, committed.Sub(started).Round(time.Millisecond))
	deadline := committed.Add(60 * time.Second)
	for {
		got, _, _ := countEvents(listeners, b.c.burstPer)
		if got >= total || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(time.Second) // duplicates, if any, arrive now
	got, complete, wrong := countEvents(listeners, b.c.burstPer)
	var lat measure.Latencies
	for len(arrivals) > 0 {
		lat = append(lat, (<-arrivals).Sub(committed))
	}
	s := measure.Summarize(lat)
	ended, _ := everyone.ended.Load().(string)
	if ended == "" {
		ended = "still open"
	}

	q, err := b.measureQuiet(ctx, min(b.c.idleWindow, 10*time.Second))
	if err != nil {
		return nil, err
	}
	return []eventsRow{
		{Scenario: name, Measure: "messages written, one transaction", Value: float64(total),
			Note: fmt.Sprintf("%d subscribers x %d, %d-row INSERTs; commit returned %s after the first statement began",
				len(subs), b.c.burstPer, rawChunk, fmtEventValue(measure.MS(committed.Sub(started)), "ms"))},
		{Scenario: name, Measure: "events received (one subscription per subscriber)", Value: float64(got), Expect: strconv.Itoa(total),
			OK:   boolPtr(got == total && complete == len(subs) && wrong == 0),
			Note: fmt.Sprintf("%d of %d subscribers got exactly %d; %d for the wrong subscriber", complete, len(subs), b.c.burstPer, wrong)},
		{Scenario: name, Measure: "commit to last event", Value: measure.MS(s.Max), Unit: "ms",
			Note: fmt.Sprintf("first %s, p50 %s, p99 %s", fmtEventValue(measure.MS(first(lat)), "ms"), fmtEventValue(measure.MS(s.P50), "ms"), fmtEventValue(measure.MS(s.P99), "ms"))},
		{Scenario: name, Measure: "environment-wide subscription (no filter): events", Value: float64(everyone.events.Load()), Expect: strconv.Itoa(total),
			OK: boolPtr(int(everyone.events.Load()) == total), Note: "its stream: " + ended},
		{Scenario: name, Measure: "after the burst, no traffic: server CPU", Value: q.cpu, Unit: "%", Target: 5,
			Note: fmt.Sprintf("%d subscriptions open; this instance: %.1f statements/s, %.0f KB/s from the database; global: %.0f index rows read/s; %d rows in the poll window",
				len(subs)+1, q.statements, q.kbFromDB, q.readNext, q.windowRows)},
	}, nil
}

// openBurst opens the burst's subscriptions: one a subscriber of subs, each on its own
// socket, whose listeners it returns, and the environment-wide one, whose listener it
// returns apart.
func (b *eventsBench) openBurst(ctx context.Context, set *socketSet, subs []subscriberRef, arrivals chan<- time.Time) ([]*listener, *listener, error) {
	listeners, opened, err := b.openSubscriptions(ctx, set, len(subs), subs, arrivals)
	if err != nil {
		return nil, nil, err
	}
	if opened != len(subs) {
		return nil, nil, fmt.Errorf("%d of %d subscriptions opened", opened, len(subs))
	}
	conn, err := b.dial(ctx, b.c.baseURL, b.ws)
	if err != nil {
		return nil, nil, err
	}
	set.add(conn)
	all, err := subscribe(ctx, conn, allEventsQuery, nil, 4096)
	if err != nil {
		return nil, nil, err
	}
	everyone := &listener{}
	go everyone.listen(all, "", nil)
	return listeners, everyone, nil
}

// first is the smallest of sorted samples.
func first(l measure.Latencies) time.Duration {
	if len(l) == 0 {
		return 0
	}
	return l[0]
}
