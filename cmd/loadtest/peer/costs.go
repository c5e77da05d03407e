package peer

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"

	"messages/cmd/loadtest/measure"
)

// What one request costs each side besides its latency: CPU time of the side's processes
// (the application and its database, each with its child processes: PostgreSQL serves
// every connection from a child of its postmaster) and, for this server, SQL statements
// (its db_statements_total counter).

// costProbe reads the running totals of one side.
type costProbe struct {
	pids       []int
	metricsURL string // "" for a side without a statement counter
}

// costTotals are running totals at one instant.
type costTotals struct {
	cpuTicks   int64
	statements float64
}

// read takes the totals now. A process that has exited counts nothing.
func (p costProbe) read(ctx context.Context, client *http.Client) (costTotals, error) {
	var t costTotals
	if len(p.pids) > 0 {
		ticks, err := treeCPUTicks(p.pids)
		if err != nil {
			return t, err
		}
		t.cpuTicks = ticks
	}
	if p.metricsURL != "" {
		n, err := scrapeCounter(ctx, client, p.metricsURL, "db_statements_total")
		if err != nil {
			return t, err
		}
		t.statements = n
	}
	return t, nil
}

// perRequest turns the totals before and after n requests into CPU milliseconds and
// statements per request (-1 where the side has no probe for it).
func (p costProbe) perRequest(before, after costTotals, n int) (cpuMS, statements float64) {
	cpuMS, statements = -1, -1
	if n == 0 {
		return cpuMS, statements
	}
	if len(p.pids) > 0 {
		cpuMS = measure.Round2(float64(after.cpuTicks-before.cpuTicks) * 1000 / measure.ClockTicks / float64(n))
	}
	if p.metricsURL != "" {
		statements = measure.Round2((after.statements - before.statements) / float64(n))
	}
	return cpuMS, statements
}

// treeCPUTicks sums utime + stime of the processes pids and all their descendants, with
// what each has reaped of its exited children.
func treeCPUTicks(pids []int) (int64, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	parent := map[int]int{}
	ticks := map[int]int64{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // exited while listed
		}
		stat := string(b)
		t, err := measure.ParseCPUTicks(stat)
		if err != nil {
			continue
		}
		f := strings.Fields(stat[strings.LastIndexByte(stat, ')')+1:]) // f[1] is field 4, the parent
		if len(f) > 1 {
			parent[pid], _ = strconv.Atoi(f[1])
		}
		// And the children it has reaped (cutime and cstime, fields 16 and 17): a
		// PostgreSQL backend that exits (a pool closing an idle connection) moves its
		// time into its postmaster's, rather than out of the sum.
		if len(f) > 14 {
			cu, _ := strconv.ParseInt(f[13], 10, 64)
			cs, _ := strconv.ParseInt(f[14], 10, 64)
			t += cu + cs
		}
		ticks[pid] = t
	}
	roots := map[int]bool{}
	for _, pid := range pids {
		if _, ok := ticks[pid]; !ok {
			return 0, fmt.Errorf("process %d is not running", pid)
		}
		roots[pid] = true
	}
	var sum int64
	for pid, t := range ticks {
		for p := pid; p > 1; p = parent[p] {
			if roots[p] {
				sum += t
				break
			}
		}
	}
	return sum, nil
}

// scrapeCounter reads one counter from a Prometheus text endpoint.
func scrapeCounter(ctx context.Context, client *http.Client, url, name string) (float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	res, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return 0, err
	}
	if res.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("GET %s: status %d", url, res.StatusCode)
	}
	v, ok := measure.ParseGauges(string(b), name)[name]
	if !ok {
		return 0, fmt.Errorf("GET %s: no %s", url, name)
	}
	return v, nil
}

// parsePIDs reads a comma-separated list of process ids.
func parsePIDs(list string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(list, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		pid, err := strconv.Atoi(f)
		if err != nil || pid <= 1 {
			return nil, fmt.Errorf("process id %q", f)
		}
		out = append(out, pid)
	}
	return out, nil
}
