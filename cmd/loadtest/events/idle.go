package events

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"messages/cmd/loadtest/measure"
)

// idleFigures are what the idle scenario measured, for its rows.
type idleFigures struct {
	want, opened int // subscriptions asked for, and opened
	openTime     time.Duration
	q0, q1       quietCosts // without and with the subscriptions
	peakMB       float64    // the server's RSS peak while they opened
	runtime      string     // the Go runtime's view of the server's memory, from /metrics
	// The fan-out: one message to each of subscribers, the events received in all, the
	// subscriptions that got exactly one, those for the wrong subscriber, and when.
	subscribers          int
	got, complete, wrong int
	fanout               measure.Summary
}

// idle measures the server and the database with no traffic, first without
// subscriptions and then with --idle-subscriptions, one socket each; then one message to
// each subscriber checks every subscription is live.
func (b *eventsBench) idle(ctx context.Context) ([]eventsRow, error) {
	fig := idleFigures{want: b.c.idleSubs}
	if err := b.settleWindow(ctx); err != nil {
		return nil, err
	}
	var err error
	if fig.q0, err = b.measureQuiet(ctx, b.c.idleWindow); err != nil {
		return nil, err
	}
	sampler, err := measure.StartRSSSampler(b.c.serverPID, 100*time.Millisecond)
	if err != nil {
		return nil, err
	}
	defer sampler.Stop()
	set := &socketSet{}
	defer set.closeAll(200)
	subs := b.subscribers[:min(len(b.subscribers), 1000)]
	start := time.Now()
	arrivals := make(chan time.Time, 2*fig.want)
	listeners, opened, err := b.openSubscriptions(ctx, set, fig.want, subs, arrivals)
	if err != nil {
		return nil, err
	}
	fig.opened, fig.openTime = opened, time.Since(start)
	fmt.Fprintf(b.log, "%d subscriptions open in %s\n", opened, fig.openTime.Round(100*time.Millisecond))
	if err := b.settleWindow(ctx); err != nil {
		return nil, err
	}
	if fig.q1, err = b.measureQuiet(ctx, b.c.idleWindow); err != nil {
		return nil, err
	}
	fig.peakMB = measure.Round2(float64(sampler.TakePeak()) / 1024)
	if fig.runtime, err = b.goRuntime(ctx); err != nil {
		fmt.Fprintf(b.log, "reading /metrics: %v\n", err)
	}
	if err := b.fanOut(ctx, &fig, listeners, subs, arrivals); err != nil {
		return nil, err
	}
	return b.idleRows(fig), nil
}

// fanOut writes one message to every subscriber of subs in one INSERT and counts what
// the subscriptions receive: each exactly one (the counts start again here;
// settleWindow's message reached one subscriber).
func (b *eventsBench) fanOut(ctx context.Context, fig *idleFigures, listeners []*listener, subs []subscriberRef, arrivals chan time.Time) error {
	for _, l := range listeners {
		if l != nil {
			l.events.Store(0)
			l.wrong.Store(0)
		}
	}
	for len(arrivals) > 0 {
		<-arrivals
	}
	committed, err := b.insertRaw(ctx, newRawMessages(len(subs), subs, ""))
	if err != nil {
		return err
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		fig.got, fig.complete, fig.wrong = countEvents(listeners, 1)
		if fig.got >= fig.opened || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond) // duplicates, if any, arrive now
	fig.got, _, _ = countEvents(listeners, 1)
	var fanout measure.Latencies
	for len(arrivals) > 0 {
		fanout = append(fanout, (<-arrivals).Sub(committed))
	}
	fig.subscribers, fig.fanout = len(subs), measure.Summarize(fanout)
	return nil
}

// idleRows are the idle scenario's rows of the report.
func (b *eventsBench) idleRows(fig idleFigures) []eventsRow {
	const name = "idle"
	q0, q1, opened, f := fig.q0, fig.q1, fig.opened, fig.fanout
	// With the proxy, the base URL's server's own statements; without, the database
	// server's Questions (every client's).
	dbRate := func(q quietCosts) float64 { return q.questions }
	dbWhat := "Questions of the whole database server (both instances and any other client)"
	if b.c.proxyStats != "" {
		dbRate = func(q quietCosts) float64 { return q.statements }
		dbWhat = "statements of this instance, counted by the proxy"
	}
	growth := 0.0
	if dbRate(q0) > 0 {
		growth = measure.Round2(dbRate(q1) / dbRate(q0))
	}
	perSub := 0.0
	if opened > 0 {
		perSub = measure.Round2((q1.rssMB - q0.rssMB) * 1024 / float64(opened))
	}
	others := ""
	if q0.otherClients+q1.otherClients > 0 {
		others = fmt.Sprintf("; other databases' connections were busy (%d, %d) and are in the global counters", q0.otherClients, q1.otherClients)
	}
	dbNote := func(q quietCosts) string {
		return fmt.Sprintf("%.1f KB/s back; global: Questions %.1f/s, Com_select %.1f/s, index rows read %.0f/s; %d row(s) in the poll window",
			q.kbFromDB, q.questions, q.selects, q.readNext, q.windowRows)
	}
	window := fmt.Sprintf("%s each", b.c.idleWindow)
	return []eventsRow{
		{Scenario: name, Measure: "subscriptions open (one socket each)", Value: float64(opened), Expect: strconv.Itoa(fig.want), OK: boolPtr(opened == fig.want),
			Note: fmt.Sprintf("opened in %s, %d at a time", fig.openTime.Round(100*time.Millisecond), b.c.dialers)},
		{Scenario: name, Measure: fmt.Sprintf("server RSS with %d subscriptions", opened), Value: q1.rssMB, Unit: "MB", Target: 300,
			Note: fmt.Sprintf("%.1f MB without; %.1f KB a subscription; peak while opening %.1f MB; %s", q0.rssMB, perSub, fig.peakMB, fig.runtime)},
		{Scenario: name, Measure: fmt.Sprintf("server CPU, no traffic, %d subscriptions", opened), Value: q1.cpu, Unit: "%", Target: 5,
			Note: fmt.Sprintf("%.2f%% without; %s, percent of one core", q0.cpu, window)},
		{Scenario: name, Measure: "database statements/s, no subscriptions", Value: dbRate(q0), Unit: "/s",
			Note: dbWhat + "; " + dbNote(q0) + others},
		{Scenario: name, Measure: fmt.Sprintf("database statements/s, %d subscriptions", opened), Value: dbRate(q1), Unit: "/s",
			Note: dbNote(q1)},
		{Scenario: name, Measure: "database statements, with / without subscriptions", Value: growth, Unit: "x",
			Expect: "no growth (< 1.25x)", OK: boolPtr(growth > 0 && growth < 1.25)},
		{Scenario: name, Measure: "one message to each subscriber: events received", Value: float64(fig.got), Expect: strconv.Itoa(opened),
			OK: boolPtr(fig.got == opened && fig.complete == opened && fig.wrong == 0),
			Note: fmt.Sprintf("%d messages in one INSERT; %d subscriptions got exactly one; %d for the wrong subscriber; after the commit: p50 %s, p99 %s, last %s",
				fig.subscribers, fig.complete, fig.wrong, fmtEventValue(measure.MS(f.P50), "ms"), fmtEventValue(measure.MS(f.P99), "ms"), fmtEventValue(measure.MS(f.Max), "ms"))},
	}
}
