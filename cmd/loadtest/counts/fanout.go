package counts

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"messages/cmd/loadtest/measure"
	"messages/graph/gqlclient"
)

// countsSubscription is the live badge of one subscriber's in-app messages.
const countsSubscription = `subscription($s: String) { messageCounts(subscriberId: $s, channel: in_app) { unread } }`

// fanout opens the subscriptions, makes the changes one after the other and reports what
// each cost.
func (b *bench) fanout(ctx context.Context, stdout io.Writer) error {
	var page struct {
		Messages struct {
			Data []struct {
				ID   string `json:"_id"`
				Read bool   `json:"read"`
			} `json:"data"`
		} `json:"messages"`
	}
	if err := b.graphql(ctx, `query($s: String) { messages(subscriberId: $s, channel: in_app, limit: 1) { data { _id read } } }`,
		map[string]any{"s": b.c.subscriber}, &page); err != nil {
		return err
	}
	if len(page.Messages.Data) == 0 {
		return fmt.Errorf("subscriber %s has no in-app message to change", b.c.subscriber)
	}
	target := page.Messages.Data[0]

	// unread[i] is the newest unread count subscription i received.
	unread := make([]atomic.Int64, b.c.subscriptions)
	for i := range unread {
		unread[i].Store(-1)
	}
	var conns []*gqlclient.Conn
	defer func() {
		for _, c := range conns {
			_ = c.Close()
		}
	}()
	wsURL := "ws" + strings.TrimPrefix(b.c.baseURL, "http") + "/graphql"
	var wg sync.WaitGroup
	var failed atomic.Value
	opened := time.Now()
	for i := 0; i < b.c.subscriptions; i++ {
		if i%b.c.perSocket == 0 {
			dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			conn, err := gqlclient.DialWith(dctx, wsURL, gqlclient.DialOptions{Payload: map[string]any{"Authorization": "ApiKey " + b.c.apiKey}})
			cancel()
			if err != nil {
				return fmt.Errorf("socket %d: %w", len(conns), err)
			}
			conns = append(conns, conn)
		}
		sub, err := conns[len(conns)-1].Subscribe(ctx, gqlclient.Request{Query: countsSubscription, Variables: map[string]any{"s": b.c.subscriber}}, 4)
		if err != nil {
			return fmt.Errorf("subscription %d: %w", i, err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range sub.Results() {
				var d struct {
					MessageCounts struct{ Unread int64 } `json:"messageCounts"`
				}
				if len(r.Errors) > 0 || json.Unmarshal(r.Data, &d) != nil {
					failed.Store(fmt.Sprintf("subscription %d: %v", i, r.Errors))
					return
				}
				unread[i].Store(d.MessageCounts.Unread)
			}
		}()
	}
	if _, err := waitAll(ctx, unread, func(n int64) bool { return n >= 0 }, &failed); err != nil {
		return fmt.Errorf("the first counts: %w", err)
	}
	fmt.Fprintf(stdout, "%d messageCounts subscriptions of %s over %d sockets, all with their first counts in %v\n",
		b.c.subscriptions, b.c.subscriber, len(conns), time.Since(opened).Round(time.Millisecond))

	read := target.Read
	stmts0, err := b.statements(ctx)
	if err != nil {
		return err
	}
	selects0 := b.comSelect(ctx)
	ticks0 := b.cpuTicks()
	began := time.Now()
	var waits measure.Latencies
	for range b.c.changes {
		read = !read
		want := unread[0].Load() - 1
		if !read {
			want = unread[0].Load() + 1
		}
		var changed struct {
			MarkMessages []struct{} `json:"markMessages"`
		}
		if err := b.graphql(ctx, `mutation($s: String!, $id: ID!, $r: Boolean) { markMessages(subscriberId: $s, messageIds: [$id], read: $r) { _id } }`,
			map[string]any{"s": b.c.subscriber, "id": target.ID, "r": read}, &changed); err != nil {
			return err
		}
		start := time.Now()
		if _, err := waitAll(ctx, unread, func(n int64) bool { return n == want }, &failed); err != nil {
			return fmt.Errorf("the count after a change: %w", err)
		}
		waits = append(waits, time.Since(start))
	}
	wall := time.Since(began)
	stmts1, err := b.statements(ctx)
	if err != nil {
		return err
	}
	selects1 := b.comSelect(ctx)
	ticks1 := b.cpuTicks()
	for _, c := range conns {
		_ = c.Close()
	}
	conns = nil
	wg.Wait()

	sum := measure.Summarize(waits)
	tw := tabwriter.NewWriter(stdout, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "changes\tstatements/change\tCom_select/change\tserver CPU\tlast subscription told p50\tmax")
	perSelect := "-"
	if selects0 >= 0 && selects1 >= 0 {
		perSelect = fmt.Sprintf("%.1f", float64(selects1-selects0)/float64(b.c.changes))
	}
	cpu := "-"
	if ticks0 >= 0 && ticks1 >= 0 {
		cpu = fmt.Sprintf("%.0f%%", measure.CPUPercent(ticks1-ticks0, wall))
	}
	fmt.Fprintf(tw, "%d\t%.1f\t%s\t%s\t%.1f ms\t%.1f ms\n", b.c.changes, (stmts1-stmts0)/float64(b.c.changes), perSelect, cpu,
		measure.MS(sum.P50), measure.MS(sum.Max))
	return tw.Flush()
}

// cpuTicks is the server's CPU time in clock ticks, or -1 without its pid.
func (b *bench) cpuTicks() int64 {
	if b.c.serverPID <= 0 {
		return -1
	}
	t, err := measure.ReadCPUTicks(b.c.serverPID)
	if err != nil {
		return -1
	}
	return t
}

// waitAll waits until every subscription's count meets ok, up to a minute.
func waitAll(ctx context.Context, counts []atomic.Int64, ok func(int64) bool, failed *atomic.Value) (time.Duration, error) {
	start := time.Now()
	deadline := start.Add(time.Minute)
	for {
		if f := failed.Load(); f != nil {
			return 0, errors.New(f.(string))
		}
		done := 0
		for i := range counts {
			if ok(counts[i].Load()) {
				done++
			}
		}
		if done == len(counts) {
			return time.Since(start), nil
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("%d of %d subscriptions have it after a minute", done, len(counts))
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(2 * time.Millisecond):
		}
	}
}
