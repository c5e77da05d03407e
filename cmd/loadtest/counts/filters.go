package counts

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"messages/cmd/loadtest/measure"
)

// countFilters are n of the inbox client's filters that the counters by state cannot
// answer: by workflows' tags (the seed's), by creation (from the first of a month of the
// seed's year, plus offset), and both, each with a state.
func countFilters(n int, offset time.Duration) string {
	tags := []string{"billing", "security", "onboarding", "commerce"}
	var out []map[string]any
	for i := range n {
		from := time.Date(2025, time.Month(1+i%12), 1, 0, 0, 0, 0, time.UTC).Add(offset).UnixMilli()
		switch i % 3 {
		case 0:
			out = append(out, map[string]any{"read": false, "createdGte": from})
		case 1:
			out = append(out, map[string]any{"archived": false, "tags": []string{tags[i%len(tags)]}})
		default:
			out = append(out, map[string]any{"read": true, "tags": []string{tags[i%len(tags)]}, "createdGte": from})
		}
	}
	b, _ := json.Marshal(out)
	return string(b)
}

// filtersPart sends the count request one at a time, then in bursts beside another
// tenant's lists.
func (b *bench) filtersPart(ctx context.Context, stdout io.Writer) error {
	token, err := b.session(ctx)
	if err != nil {
		return err
	}
	target := b.c.baseURL + "/v1/inbox/notifications/count?filters=" + url.QueryEscape(countFilters(b.c.filters, b.c.createdOffset))
	count := func() (int, time.Duration, error) {
		start := time.Now()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
		if err != nil {
			return 0, 0, err
		}
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := b.client.Do(req)
		if err != nil {
			return 0, 0, err
		}
		_, _ = io.Copy(io.Discard, res.Body)
		_ = res.Body.Close()
		return res.StatusCode, time.Since(start), nil
	}
	if _, _, err := count(); err != nil {
		return fmt.Errorf("a count request: %w", err)
	}
	stmts0, err := b.statements(ctx)
	if err != nil {
		return err
	}
	selects0 := b.comSelect(ctx)
	dbTime0, serverTimed, err := b.metric(ctx, "db_statement_seconds_total")
	if err != nil {
		return err
	}
	queryTime0 := b.globalStatus(ctx, "Query_time")
	var alone measure.Latencies
	aloneStatuses := map[int]int{}
	for range b.c.requests {
		status, d, err := count()
		if err != nil {
			return fmt.Errorf("a count request: %w", err)
		}
		aloneStatuses[status]++
		alone = append(alone, d)
	}
	stmts1, err := b.statements(ctx)
	if err != nil {
		return err
	}
	selects1 := b.comSelect(ctx)
	dbTime1, _, err := b.metric(ctx, "db_statement_seconds_total")
	if err != nil {
		return err
	}
	queryTime1 := b.globalStatus(ctx, "Query_time")
	one := measure.Summarize(alone)

	// Bursts beside another tenant's lists.
	var quiet, during measure.Latencies
	if b.c.otherKey != "" {
		if quiet, err = b.otherLists(ctx, 40, nil); err != nil {
			return err
		}
	}
	statuses := map[int]int{}
	var burstLat measure.Latencies
	var mu sync.Mutex
	for range b.c.bursts {
		var wg sync.WaitGroup
		done := make(chan struct{})
		var other measure.Latencies
		var otherErr error
		if b.c.otherKey != "" {
			wg.Add(1)
			go func() { defer wg.Done(); other, otherErr = b.otherLists(ctx, 0, done) }()
		}
		var reqs sync.WaitGroup
		for range b.c.burst {
			reqs.Add(1)
			go func() {
				defer reqs.Done()
				status, d, err := count()
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					status = -1
				}
				statuses[status]++
				burstLat = append(burstLat, d)
			}()
		}
		reqs.Wait()
		close(done)
		wg.Wait()
		if otherErr != nil {
			return otherErr
		}
		during = append(during, other...)
		time.Sleep(time.Second) // the session's bucket refills a little between bursts
	}

	tw := tabwriter.NewWriter(stdout, 2, 8, 2, ' ', 0)
	fmt.Fprintf(tw, "%d-filter count request\tanswers\tone at a time p50\tp90\tstatements/request\tCom_select/request\tstatement time/request\tQuery_time/request\n", b.c.filters)
	perSelect, perStatementTime, perQueryTime := "-", "-", "-"
	if selects0 >= 0 && selects1 >= 0 {
		perSelect = fmt.Sprintf("%.1f", float64(selects1-selects0)/float64(b.c.requests))
	}
	if serverTimed {
		perStatementTime = fmt.Sprintf("%.1f ms", 1000*(dbTime1-dbTime0)/float64(b.c.requests))
	}
	if queryTime0 >= 0 && queryTime1 >= 0 {
		perQueryTime = fmt.Sprintf("%.1f ms", 1000*(queryTime1-queryTime0)/float64(b.c.requests))
	}
	fmt.Fprintf(tw, "%d requests\t%s\t%.1f ms\t%.1f ms\t%.1f\t%s\t%s\t%s\n", b.c.requests, answers(aloneStatuses), measure.MS(one.P50),
		measure.MS(measure.Percentile(alone, 90)), (stmts1-stmts0)/float64(b.c.requests), perSelect, perStatementTime, perQueryTime)
	if err := tw.Flush(); err != nil {
		return err
	}
	if b.c.bursts > 0 {
		bl := measure.Summarize(burstLat)
		fmt.Fprintf(stdout, "%d bursts of %d at once: answers %s; p50 %.1f ms, max %.1f ms\n", b.c.bursts, b.c.burst,
			answers(statuses), measure.MS(bl.P50), measure.MS(bl.Max))
		if b.c.otherKey != "" {
			q, d := measure.Summarize(quiet), measure.Summarize(during)
			fmt.Fprintf(stdout, "another tenant's list: p50 %.1f ms alone, %.1f ms during the bursts (%d requests, %d not 200)\n",
				measure.MS(q.P50), measure.MS(d.P50), d.N, b.otherFailed)
		}
	}
	return nil
}

// otherLists lists another tenant's messages one at a time: n of them, or until done.
func (b *bench) otherLists(ctx context.Context, n int, done <-chan struct{}) (measure.Latencies, error) {
	var out measure.Latencies
	for i := 0; n == 0 || i < n; i++ {
		if done != nil {
			select {
			case <-done:
				return out, nil
			default:
			}
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.c.baseURL+"/v1/messages?limit=10", nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Authorization", "ApiKey "+b.c.otherKey)
		start := time.Now()
		res, err := b.client.Do(req)
		if err != nil {
			return nil, err
		}
		_, _ = io.Copy(io.Discard, res.Body)
		_ = res.Body.Close()
		if res.StatusCode != http.StatusOK {
			b.otherFailed++
		}
		out = append(out, time.Since(start))
	}
	return out, nil
}

// session opens the subscriber's inbox session as the platform's client does.
func (b *bench) session(ctx context.Context) (string, error) {
	body, _ := json.Marshal(map[string]any{"applicationIdentifier": b.c.application,
		"subscriberHash": subscriberHash(b.c.apiKey, b.c.subscriber), "subscriber": map[string]any{"subscriberId": b.c.subscriber}})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.c.baseURL+"/v1/inbox/session", strings.NewReader(string(body)))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := b.client.Do(req)
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	var out struct {
		Data struct {
			Token string `json:"token"`
		} `json:"data"`
	}
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil || out.Data.Token == "" {
		return "", fmt.Errorf("inbox session: %s %v", res.Status, err)
	}
	return out.Data.Token, nil
}

// answers lists how many requests got each status, as "18×200, 2×503".
func answers(statuses map[int]int) string {
	var out []string
	for _, status := range slices.Sorted(maps.Keys(statuses)) {
		out = append(out, fmt.Sprintf("%d×%d", statuses[status], status))
	}
	return strings.Join(out, ", ")
}
