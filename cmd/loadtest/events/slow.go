package events

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"messages/cmd/loadtest/measure"
	"messages/cmd/loadtest/report"
	"messages/graph/gqlclient"
)

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
	before, err := measure.ReadMemoryStatus(b.c.serverPID)
	if err != nil {
		return nil, err
	}
	sampler, err := measure.StartRSSSampler(b.c.serverPID, 20*time.Millisecond)
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
	peakMB := measure.Round2(float64(sampler.TakePeak()) / 1024)
	_, _ = sampler.Stop()
	beforeMB := measure.Round2(float64(before.RSSKB) / 1024)

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
						code = "closed: " + report.Clip(err.Error(), 80)
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
