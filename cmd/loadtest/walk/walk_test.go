package walk

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/urfave/cli/v3"

	"messages/cmd/loadtest/cmdline"
	"messages/cmd/server/edge"
	"messages/models/dbtest"
	"messages/models/seed"
	"messages/models/service"
	"messages/models/store"
	"messages/rest"
)

// testKey is the API key the fake servers expect.
const testKey = "test-key"

// walk runs `loadtest walk` with args and returns its exit code, its report and what it
// printed.
func walk(t *testing.T, args ...string) (int, walkReport, string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "walk.json")
	var stdout, stderr bytes.Buffer
	root := &cli.Command{Name: "loadtest", Commands: []*cli.Command{Command(func(string) string { return "" }, &stdout, &stderr)}}
	code := cmdline.Run(t.Context(), root, append(append([]string{"walk"}, args...), "--json", out), &stderr)
	var rep walkReport
	if b, err := os.ReadFile(out); err == nil {
		if err := json.Unmarshal(b, &rep); err != nil {
			t.Fatal(err)
		}
	}
	return code, rep, stdout.String() + stderr.String()
}

// The walk of a real server (the /v1 routes behind the edge's authentication, as
// cmd/server mounts them) reads every seeded message once, in order, and ends on the
// page that says hasMore: false.
func TestWalkRealServer(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		tn := dbtest.NewTenant(t, s, "walk")
		dbtest.Seed(t, s, seed.Options{Seed: 5, EnvironmentID: tn.Env.ID, Messages: 1_050, Subscribers: 20, Templates: 3})
		svc := service.New(service.Options{Store: s})
		logger := slog.New(slog.DiscardHandler)
		rs := rest.NewServer(svc, logger, time.Now)
		e := edge.New(edge.Options{Logger: logger, Now: time.Now, Auth: svc, Errors: rs.Errors()})
		srv := httptest.NewServer(e.API(edge.Mount{Errors: rs.Errors()}, rs.Routes()))
		t.Cleanup(srv.Close)

		code, rep, out := walk(t, "--base-url", srv.URL, "--api-key", tn.Key, "--limit", "100", "--server-pid", strconv.Itoa(os.Getpid()))
		if code != 0 {
			t.Fatalf("exit %d:\n%s", code, out)
		}
		want := walkReport{Limit: 100, Complete: true, Pages: 11, Messages: 1_050, DistinctIDs: 1_050, TotalCount: 1_050}
		if diff := cmp.Diff(want, rep, cmpopts.IgnoreFields(walkReport{}, "StartedAt", "BaseURL", "Seconds", "PagesPerSecond",
			"MessagesPerSecond", "P50", "P95", "P99", "Mean", "SlowestPage", "SlowestPageMs", "FirstPageMs", "LastPageMs", "ByTenth", "Server")); diff != "" {
			t.Errorf("report (-want +got):\n%s", diff)
		}
		if len(rep.ByTenth) != 10 || rep.PagesPerSecond <= 0 || rep.Server == nil || rep.Server.PeakRSSMB <= 0 {
			t.Errorf("figures: by tenth %v, %v pages/s, server %+v", rep.ByTenth, rep.PagesPerSecond, rep.Server)
		}
	})
}

// fakePages serves /v1/messages from a fixed list of pages; a page past the list says
// hasMore: false with no data unless endless.
type fakePages struct {
	pages   []walkPage
	endless bool
	delay   time.Duration
}

func (f *fakePages) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "ApiKey "+testKey || r.URL.Path != "/v1/messages" {
		http.Error(w, "unexpected request", http.StatusBadRequest)
		return
	}
	n, err := strconv.Atoi(r.URL.Query().Get("page"))
	if err != nil || r.URL.Query().Get("limit") != "2" {
		http.Error(w, "bad page or limit", http.StatusBadRequest)
		return
	}
	time.Sleep(f.delay)
	p := walkPage{TotalCount: 4}
	switch {
	case n < len(f.pages):
		p = f.pages[n]
	case f.endless:
		p = page(4, true, msg(fmt.Sprintf("%024d", 1_000_000-2*n), n), msg(fmt.Sprintf("%024d", 1_000_000-2*n-1), n))
	}
	_ = json.NewEncoder(w).Encode(p)
}

// msg is a message created `second` seconds before a fixed instant.
func msg(id string, second int) struct {
	ID        string `json:"_id"`
	CreatedAt string `json:"createdAt"`
} {
	created := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(-time.Duration(second) * time.Second)
	return struct {
		ID        string `json:"_id"`
		CreatedAt string `json:"createdAt"`
	}{id, created.Format("2006-01-02T15:04:05.000Z")}
}

func page(total int, more bool, data ...struct {
	ID        string `json:"_id"`
	CreatedAt string `json:"createdAt"`
}) walkPage {
	return walkPage{TotalCount: total, HasMore: more, Data: data}
}

// Every way a walk can go wrong is counted, the report written and the exit code 1.
func TestWalkFindsProblems(t *testing.T) {
	tests := []struct {
		name  string
		pages []walkPage
		want  func(r walkReport) string // "" when the report says what it should
	}{
		{"walk0Clean", []walkPage{page(4, true, msg("d", 1), msg("c", 2)), page(4, false, msg("b", 3), msg("a", 4))},
			func(r walkReport) string {
				return ifNot(r.Complete && r.DistinctIDs == 4 && r.Pages == 2, "clean walk")
			}},
		{"walk1Duplicate", []walkPage{page(4, true, msg("d", 1), msg("c", 2)), page(4, false, msg("c", 2), msg("a", 4))},
			func(r walkReport) string {
				return ifNot(r.Duplicates == 1 && r.Missing == 1 && r.OutOfOrder == 1, "one duplicate, so one missing, and out of order")
			}},
		{"walk1Missing", []walkPage{page(5, true, msg("e", 1), msg("d", 2)), page(5, false, msg("c", 3), msg("a", 5))},
			func(r walkReport) string {
				return ifNot(r.Missing == 1 && r.Duplicates == 0 && r.OutOfOrder == 0, "one missing")
			}},
		{"walk1OutOfOrder", []walkPage{page(4, true, msg("d", 2), msg("c", 1)), page(4, false, msg("b", 3), msg("a", 4))},
			func(r walkReport) string { return ifNot(r.OutOfOrder == 1 && r.Missing == 0, "one out of order") }},
		{"walk1TieOutOfOrder", []walkPage{page(4, true, msg("c", 1), msg("d", 1)), page(4, false, msg("b", 3), msg("a", 4))},
			func(r walkReport) string { return ifNot(r.OutOfOrder == 1, "a tie must be _id descending") }},
		{"walk1ShortPage", []walkPage{page(3, true, msg("c", 1)), page(3, false, msg("b", 3), msg("a", 4))},
			func(r walkReport) string { return ifNot(cmp.Equal(r.ShortPages, []int{0}), "page 0 short") }},
		{"walk1Extra", []walkPage{page(3, true, msg("d", 1), msg("c", 2)), page(4, false, msg("b", 3), msg("a", 4))},
			func(r walkReport) string {
				return ifNot(r.Extra == 1 && r.TotalCountChanged == 1, "one beyond the first totalCount")
			}},
		{"walk1BadTimestamp", []walkPage{page(2, false, msg("b", 1), struct {
			ID        string `json:"_id"`
			CreatedAt string `json:"createdAt"`
		}{"a", "yesterday"})},
			func(r walkReport) string { return ifNot(r.BadTimestamps == 1, "one unreadable createdAt") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(&fakePages{pages: tt.pages})
			t.Cleanup(srv.Close)
			code, rep, out := walk(t, "--base-url", srv.URL, "--api-key", testKey, "--limit", "2")
			if wantCode := map[bool]int{true: 0, false: 1}[strings.HasPrefix(tt.name, "walk0")]; code != wantCode {
				t.Errorf("exit %d, want %d:\n%s", code, wantCode, out)
			}
			if why := tt.want(rep); why != "" {
				t.Errorf("report does not say %s: %+v", why, rep)
			}
		})
	}
}

func ifNot(ok bool, what string) string {
	if ok {
		return ""
	}
	return what
}

// The walk is bounded: --max-pages and --timeout stop it short (exit 1, with the report),
// and it loads nothing but loopback (exit 2).
func TestWalkBounds(t *testing.T) {
	endless := httptest.NewServer(&fakePages{endless: true})
	t.Cleanup(endless.Close)
	code, rep, out := walk(t, "--base-url", endless.URL, "--api-key", testKey, "--limit", "2", "--max-pages", "7")
	if code != 1 || rep.Pages != 7 || rep.Complete || !strings.Contains(rep.StoppedShort, "--max-pages 7") || rep.Missing != 0 {
		t.Errorf("--max-pages 7: exit %d, %+v\n%s", code, rep, out)
	}

	slow := httptest.NewServer(&fakePages{endless: true, delay: 30 * time.Millisecond})
	t.Cleanup(slow.Close)
	code, rep, out = walk(t, "--base-url", slow.URL, "--api-key", testKey, "--limit", "2", "--timeout", "200ms")
	if code != 1 || rep.Complete || !strings.Contains(rep.StoppedShort, "--timeout 200ms") || rep.Pages == 0 || rep.Pages > 7 {
		t.Errorf("--timeout 200ms: exit %d, %+v\n%s", code, rep, out)
	}

	for _, args := range [][]string{
		{"--base-url", "http://192.0.2.1:8080", "--api-key", testKey},
		{"--base-url", endless.URL},
		{"--base-url", endless.URL, "--api-key", testKey, "--limit", "1001"},
		{"--base-url", endless.URL, "--api-key", testKey, "--max-pages", "0"},
	} {
		if code, _, out := walk(t, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2:\n%s", args, code, out)
		}
	}
}
