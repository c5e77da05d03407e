package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"messages/graph/gqlclient"
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
	listeners, opened, err := b.openSubscriptions(ctx, set, len(subs), subs, arrivals)
	if err != nil {
		return nil, err
	}
	if opened != len(subs) {
		return nil, fmt.Errorf("%d of %d subscriptions opened", opened, len(subs))
	}
	conn, err := b.dial(ctx, b.c.baseURL, b.ws)
	if err != nil {
		return nil, err
	}
	set.add(conn)
	all, err := subscribe(ctx, conn, allEventsQuery, nil, 4096)
	if err != nil {
		return nil, err
	}
	everyone := &listener{}
	go everyone.listen(all, "", nil)
	time.Sleep(time.Second)

	started := time.Now()
	committed, err := b.insertRaw(ctx, newRawMessages(total, subs, ""))
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(b.log, "%d messages committed in %s\n", total, committed.Sub(started).Round(time.Millisecond))
	count := func() (got, complete, wrong int) {
		for _, l := range listeners {
			e := int(l.events.Load())
			got += e
			if e == b.c.burstPer {
				complete++
			}
			wrong += int(l.wrong.Load())
		}
		return
	}
	deadline := committed.Add(60 * time.Second)
	for {
		got, _, _ := count()
		if got >= total || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(time.Second) // duplicates, if any, arrive now
	got, complete, wrong := count()
	var lat latencies
	for len(arrivals) > 0 {
		lat = append(lat, (<-arrivals).Sub(committed))
	}
	s := summarize(lat)
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
				len(subs), b.c.burstPer, rawChunk, fmtEventValue(msOf(committed.Sub(started)), "ms"))},
		{Scenario: name, Measure: "events received (one subscription per subscriber)", Value: float64(got), Expect: strconv.Itoa(total),
			OK:   boolPtr(got == total && complete == len(subs) && wrong == 0),
			Note: fmt.Sprintf("%d of %d subscribers got exactly %d; %d for the wrong subscriber", complete, len(subs), b.c.burstPer, wrong)},
		{Scenario: name, Measure: "commit to last event", Value: msOf(s.max), Unit: "ms",
			Note: fmt.Sprintf("first %s, p50 %s, p99 %s", fmtEventValue(msOf(lat.first()), "ms"), fmtEventValue(msOf(s.p50), "ms"), fmtEventValue(msOf(s.p99), "ms"))},
		{Scenario: name, Measure: "environment-wide subscription (no filter): events", Value: float64(everyone.events.Load()), Expect: strconv.Itoa(total),
			OK: boolPtr(int(everyone.events.Load()) == total), Note: "its stream: " + ended},
		{Scenario: name, Measure: "after the burst, no traffic: server CPU", Value: q.cpu, Unit: "%", Target: 5,
			Note: fmt.Sprintf("%d subscriptions open; this instance: %.1f statements/s, %.0f KB/s from the database; global: %.0f index rows read/s; %d rows in the poll window",
				len(subs)+1, q.statements, q.kbFromDB, q.readNext, q.windowRows)},
	}, nil
}

// first is the smallest of sorted samples.
func (l latencies) first() time.Duration {
	if len(l) == 0 {
		return 0
	}
	return l[0]
}

// slowQuery selects a payload, so each event is a few kilobytes and a client that stops
// reading fills the socket buffers with fewer of them.
const slowQuery = `subscription($s: String) {
  messageEvents(subscriberId: $s) { kind cursor message { _id subscriber { subscriberId } payload } }
}`

// slowPayload is the payload of the slow-consumer messages: about 4 KB.
var slowPayload = `{"blob":"` + strings.Repeat("x", 4000) + `"}`

// slowBatch and slowEvery pace the slow-consumer writes: slowBatch messages every
// slowEvery, fewer than the buffer per poll, so a client that reads keeps up.
const (
	slowBatch = 400
	slowEvery = 150 * time.Millisecond
	// slowStall is how long the stalled client reads nothing after the last write: longer
	// than the server's EVENTS_SLOW_TIMEOUT (10 s by default), after which it gives up.
	slowStall = 15 * time.Second
	// slowRcvBuf is the receive buffer of the client that stops reading.
	slowRcvBuf = 4096
)

// slowConsumer subscribes twice to one subscriber: one client reads everything, the
// other (a small receive buffer) stops reading its socket after the first event. It
// writes --slow-messages messages to that subscriber, watches the server's RSS, then
// reads what the stalled client was sent: the stream must end with SLOW_CONSUMER.
func (b *eventsBench) slowConsumer(ctx context.Context) ([]eventsRow, error) {
	const name = "slow-consumer"
	sub := b.subscribers[len(b.subscribers)-2]
	vars := map[string]any{"s": sub.external}
	set := &socketSet{}
	defer set.closeAll(10)
	healthyConn, err := b.dial(ctx, b.c.baseURL, b.ws)
	if err != nil {
		return nil, err
	}
	set.add(healthyConn)
	healthySub, err := subscribe(ctx, healthyConn, slowQuery, vars, 1024)
	if err != nil {
		return nil, err
	}
	healthy := &listener{}
	go healthy.listen(healthySub, sub.external, nil)
	stalledConn, err := b.dial(ctx, b.c.baseURL, newWebSocketClient(slowRcvBuf))
	if err != nil {
		return nil, err
	}
	set.add(stalledConn)
	// A results buffer of one: once it holds an event, the client's reader waits and
	// the socket is not read any more.
	stalled, err := subscribe(ctx, stalledConn, slowQuery, vars, 1)
	if err != nil {
		return nil, err
	}
	before, err := readMemoryStatus(b.c.serverPID)
	if err != nil {
		return nil, err
	}
	sampler, err := startRSSSampler(b.c.serverPID, 20*time.Millisecond)
	if err != nil {
		return nil, err
	}
	written := 0
	for written < b.c.slowRows && ctx.Err() == nil {
		n := min(slowBatch, b.c.slowRows-written)
		if _, err := b.insertRaw(ctx, newRawMessages(n, []subscriberRef{sub}, slowPayload)); err != nil {
			_, _ = sampler.Stop()
			return nil, err
		}
		written += n
		time.Sleep(slowEvery)
	}
	lastWrite := time.Now()
	deadline := time.Now().Add(30 * time.Second)
	for int(healthy.events.Load()) < written && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(time.Until(lastWrite.Add(slowStall)))
	peakMB := round2(float64(sampler.takePeak()) / 1024)
	_, _ = sampler.Stop()
	beforeMB := round2(float64(before.rssKB) / 1024)

	// Now read what the stalled client was sent, up to the end of its stream.
	received, code := drain(stalled, 15*time.Second)
	healthyGot := int(healthy.events.Load())
	healthyEnd, _ := healthy.ended.Load().(string)
	return []eventsRow{
		{Scenario: name, Measure: "client that stops reading: stream ends with", Value: float64(received), Expect: "SLOW_CONSUMER",
			OK:   boolPtr(code == "SLOW_CONSUMER"),
			Note: fmt.Sprintf("ended: %s, after %d of %d events (4 KB each; EVENTS_BUFFER plus what the sockets held)", code, received, written)},
		{Scenario: name, Measure: "server RSS while it does not read (peak)", Value: peakMB, Unit: "MB",
			Expect: fmt.Sprintf("bounded (< %.0f MB, start + 50)", beforeMB+50), OK: boolPtr(peakMB < beforeMB+50),
			Note: fmt.Sprintf("%.1f MB before; %d messages written, %d every %s", beforeMB, written, slowBatch, slowEvery)},
		{Scenario: name, Measure: "client that reads, same subscriber: events", Value: float64(healthyGot), Expect: strconv.Itoa(written),
			OK: boolPtr(healthyGot == written && healthyEnd == ""), Note: "stream: " + orDefault(healthyEnd, "still open")},
	}, nil
}

// drain reads s until it ends or nothing comes for idle, and returns the events read and
// the code of the error that ended it ("" when it did not end, "complete" when it ended
// without an error).
func drain(s *gqlclient.Subscription, idle time.Duration) (int, string) {
	n := 0
	code := ""
	for {
		select {
		case r, ok := <-s.Results():
			if !ok {
				if code == "" {
					code = "complete"
					if err := s.Err(); err != nil {
						code = "closed: " + clipText(err.Error(), 80)
					}
				}
				return n, code
			}
			ev, err := decodeEvent(r)
			if err == nil && ev.code != "" {
				code = ev.code
				continue
			}
			n++
		case <-time.After(idle):
			return n, orDefault(code, "nothing for "+idle.String()+", not ended")
		}
	}
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
