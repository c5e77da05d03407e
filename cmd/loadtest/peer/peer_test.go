package peer

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"messages/cmd/loadtest/measure"

	"github.com/google/go-cmp/cmp"
)

func TestSubscriberTokenVerifiesWithTheSecret(t *testing.T) {
	now := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	token, err := subscriberToken("s3cret", "msgpeer_subscriber", "sub-1", now)
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("token %q has %d parts, want 3", token, len(parts))
	}
	mac := hmac.New(sha256.New, []byte("s3cret"))
	mac.Write([]byte(parts[0] + "." + parts[1]))
	if got := base64.RawURLEncoding.EncodeToString(mac.Sum(nil)); got != parts[2] {
		t.Errorf("signature %s, want %s", parts[2], got)
	}
	var header, claims map[string]any
	for i, into := range []*map[string]any{&header, &claims} {
		b, err := base64.RawURLEncoding.DecodeString(parts[i])
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, into); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff(map[string]any{"alg": "HS256", "typ": "JWT"}, header); diff != "" {
		t.Errorf("header (-want +got):\n%s", diff)
	}
	want := map[string]any{"role": "msgpeer_subscriber", "subscriber_id": "sub-1", "aud": "postgraphile",
		"iat": float64(now.Unix()), "exp": float64(now.Add(24 * time.Hour).Unix())}
	if diff := cmp.Diff(want, claims); diff != "" {
		t.Errorf("claims (-want +got):\n%s", diff)
	}
	if _, err := subscriberToken("", "r", "s", now); err == nil {
		t.Error("a token without a secret was signed")
	}
}

func TestParseConnections(t *testing.T) {
	tests := []struct {
		name, in string
		want     []int
		wantErr  bool
	}{
		{name: "default", in: "1,4", want: []int{1, 4}},
		{name: "sortedAndDeduplicated", in: " 8, 1,8 ,", want: []int{1, 8}},
		{name: "errZero", in: "0,4", wantErr: true},
		{name: "errWord", in: "one", wantErr: true},
		{name: "errEmpty", in: " , ", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseConnections(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestParsePeerShapes(t *testing.T) {
	tests := []struct {
		name, in string
		rls      bool
		want     []string
		wantErr  bool
	}{
		{name: "allWithRLS", rls: true, want: []string{"inbox", "inbox-rls", "mark", "first-page-count", "offset", "cursor"}},
		{name: "allWithoutRLS", want: []string{"inbox", "mark", "first-page-count", "offset", "cursor"}},
		{name: "tableOrder", in: "cursor,inbox", want: []string{"inbox", "cursor"}},
		{name: "rlsBringsItsServerShape", in: "inbox-rls", rls: true, want: []string{"inbox", "inbox-rls"}},
		{name: "errRLSWithoutPeer", in: "inbox-rls", wantErr: true},
		{name: "errUnknown", in: "inbox,nope", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parsePeerShapes(tt.in, tt.rls)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestPeerShapesReadTheSameRows(t *testing.T) {
	pg4 := newPeerEngine("pg4", "PostGraphile 4", "http://127.0.0.1:2/graphql", "", postgraphile4Keys)
	tg := &peerTarget{serverURL: "http://127.0.0.1:1", apiKey: "k", peers: []*peerEngine{pg4},
		environmentID: "env", subscriber: "user-1", subscriberKey: "row-1", pageSize: 10, depth: 500_000,
		markIDs: []string{"a", "b", "c"}}
	server, peer := serverOffset(tg, 0), peerOffset(tg, pg4, 0)
	if got, want := server.vars["page"].(int)*server.vars["limit"].(int), peer.vars["offset"].(int); got != want || got != 500_000 {
		t.Errorf("server skips %d rows, peer %d; want both 500,000", got, want)
	}
	if got := serverInbox(tg, 0).header.Get("Authorization"); got != "ApiKey k" {
		t.Errorf("server Authorization %q", got)
	}
	if got := peerInbox(tg, pg4, 0).vars["subscriberId"]; got != "row-1" {
		t.Errorf("the peer's inbox filters by %v, want the row id", got)
	}
	// Both sides mark the same message with the same status for the same i.
	for i := range int64(6) {
		s, p := serverMark(tg, i), peerMark(tg, pg4, i)
		if s.vars["messageId"] != p.vars["id"] || s.vars["status"] != p.vars["status"] {
			t.Errorf("mark %d: server %v, peer %v", i, s.vars, p.vars)
		}
		if want := []string{"done", "pending"}[i%2]; s.vars["status"] != want {
			t.Errorf("mark %d: status %v, want %s", i, s.vars["status"], want)
		}
	}
}

func TestMessageIDs(t *testing.T) {
	server := `{"messages":{"hasMore":true,"data":[
		{"_id":"m2","createdAt":"t","subscriber":{"_id":"s1"},"template":{"_id":"t1"}},
		{"_id":"m1","createdAt":"t","subscriber":{"_id":"s1"},"template":{"_id":"t1"}}]}}`
	peer := `{"allMessages":{"edges":[
		{"cursor":"c2","node":{"id":"m2","createdAt":"t","subscriberBySubscriberId":{"id":"s1"}}},
		{"cursor":"c1","node":{"id":"m1","createdAt":"t","templateByTemplateId":{"id":"t1"}}}],
		"pageInfo":{"hasNextPage":true}}}`
	for name, c := range map[string]struct{ data, key string }{"server": {server, "_id"}, "peer": {peer, "id"}} {
		got, err := messageIDs(json.RawMessage(c.data), c.key)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"m2", "m1"}, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
}

func TestPeerRowsMediansAndRatios(t *testing.T) {
	var samples []peerSample
	for round, p50 := range []float64{4, 2, 3} {
		samples = append(samples,
			peerSample{Shape: "inbox", Side: "server", Connections: 1, Round: round + 1, Requests: 100, P50: p50, PerSecond: 100 * p50},
			peerSample{Shape: "inbox", Side: "pg4", Connections: 1, Round: round + 1, Requests: 100, P50: 2 * p50, PerSecond: 50 * p50},
			peerSample{Shape: "inbox", Side: "pg5", Connections: 1, Round: round + 1, Requests: 100, P50: 1, PerSecond: 1},
			peerSample{Shape: "inbox-rls", Side: "pg4", Connections: 1, Round: round + 1, Requests: 100, P50: 4 * p50, PerSecond: 25 * p50})
	}
	// A round in which every request failed counts its errors, not its figures.
	samples = append(samples, peerSample{Shape: "inbox", Side: "pg4", Connections: 1, Round: 4, Requests: 7, Errors: 7})
	got := peerRows([]string{"inbox", "inbox-rls"}, []int{1}, samples, "pg4")
	want := []peerRow{
		{Shape: "inbox", About: "a subscriber's first page", Cells: []peerCell{{Connections: 1,
			Server:   &peerFigures{Rounds: 3, P50: 3, PerSecond: 300},
			Peer:     &peerFigures{Rounds: 3, Errors: 7, P50: 6, PerSecond: 150},
			P50Ratio: 0.5, PerSecRatio: 2}}},
		{Shape: "inbox-rls", About: "same, the peer with JWT + row-level security", Cells: []peerCell{{Connections: 1,
			Server:   &peerFigures{Rounds: 3, P50: 3, PerSecond: 300},
			Peer:     &peerFigures{Rounds: 3, P50: 12, PerSecond: 75},
			P50Ratio: 0.25, PerSecRatio: 4, ServerSameAs: "inbox"}}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestPeerTableNamesTheDepth(t *testing.T) {
	rep := &peerReport{Depth: 500_000, Rounds: 1, Connections: []int{1, 4}, Duration: "10s", Warmup: "1s",
		Tables: []peerTable{{Peer: "pg5", Label: "PostGraphile 5", Rows: peerRows([]string{"offset"}, []int{1, 4}, []peerSample{
			{Shape: "offset", Side: "server", Connections: 1, Requests: 10, P50: 100, PerSecond: 10},
			{Shape: "offset", Side: "pg5", Connections: 4, Requests: 10, P50: 400, PerSecond: 5},
			{Shape: "offset", Side: "pg4", Connections: 4, Requests: 10, P50: 800, PerSecond: 1},
		}, "pg5")}}}
	var b bytes.Buffer
	rep.writeTable(&b)
	out := b.String()
	for _, want := range []string{"this server and PostGraphile 5", "offset 500,000", "server p50 @1", "peer req/s @4", "100.0 ms", "400.0 ms"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

func TestGroupThousands(t *testing.T) {
	for in, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 500_000: "500,000", 1_000_000: "1,000,000", -1234: "-1,234"} {
		if got := groupThousands(in); got != want {
			t.Errorf("groupThousands(%d) = %q, want %q", in, got, want)
		}
	}
}

// A side's CPU includes its processes' children: PostgreSQL serves each connection from
// a child of its postmaster.
func TestTreeCPUTicksCountsChildren(t *testing.T) {
	child := exec.Command("sh", "-c", `i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done; sleep 30`)
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = child.Process.Kill(); _ = child.Wait() })
	deadline := time.Now().Add(20 * time.Second)
	for {
		own, err := measure.ReadCPUTicks(os.Getpid())
		if err != nil {
			t.Fatal(err)
		}
		childTicks, err := measure.ReadCPUTicks(child.Process.Pid)
		if err != nil {
			t.Fatal(err)
		}
		tree, err := treeCPUTicks([]int{os.Getpid()})
		if err != nil {
			t.Fatal(err)
		}
		if childTicks >= 5 {
			if tree < own+childTicks {
				t.Fatalf("tree %d ticks, want at least own %d + child %d", tree, own, childTicks)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the child spun %d ticks only", childTicks)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := treeCPUTicks([]int{1 << 30}); err == nil {
		t.Error("a process that does not run was measured")
	}
	p := costProbe{pids: []int{os.Getpid()}}
	cpu, statements := p.perRequest(costTotals{cpuTicks: 100}, costTotals{cpuTicks: 150}, 25)
	if cpu != 20 || statements != -1 {
		t.Errorf("perRequest = %v ms, %v statements; want 20 ms (50 ticks of 10 ms over 25) and -1 (not measured)", cpu, statements)
	}
}

// PostGraphile 5's queries name the row key rowId, and order and update by it; version
// 4's name it id.
func TestPeerQueriesInEachReleasesNames(t *testing.T) {
	v4, v5 := newPeerQueries(postgraphile4Keys), newPeerQueries(postgraphile5Keys)
	for _, c := range []struct {
		name, query string
		want, not   []string
	}{
		{"v4Mark", v4.mark, []string{"updateMessageById(input: {id: $id", "subscriberBySubscriberId { id subscriberId"}, []string{"rowId", "KEY"}},
		{"v5Mark", v5.mark, []string{"updateMessageByRowId(input: {rowId: $id", "subscriberBySubscriberId { rowId subscriberId", "templateByTemplateId { rowId name }"}, []string{"KEY", " id "}},
		{"v4Inbox", v4.inbox, []string{"[CREATED_AT_DESC, ID_DESC]"}, []string{"ROW_ID"}},
		{"v5Inbox", v5.inbox, []string{"[CREATED_AT_DESC, ROW_ID_DESC]"}, []string{"KEY"}},
		{"v5MarkTargets", v5.markTargets, []string{"nodes { rowId }"}, []string{"KEY"}},
	} {
		for _, w := range c.want {
			if !strings.Contains(c.query, w) {
				t.Errorf("%s lacks %q:\n%s", c.name, w, c.query)
			}
		}
		for _, n := range c.not {
			if strings.Contains(c.query, n) {
				t.Errorf("%s has %q:\n%s", c.name, n, c.query)
			}
		}
	}
	ids, err := nodeIDs(json.RawMessage(`{"allMessages":{"nodes":[{"rowId":"m1"},{"rowId":"m2"}]}}`), "rowId")
	if err != nil || !slices.Equal(ids, []string{"m1", "m2"}) {
		t.Errorf("nodeIDs = %v, %v", ids, err)
	}
}

// Round trips per request are the proxy's commands over the measured requests only, the
// unmeasured ones before them left out.
func TestCountRoundTripsReadsTheProxyAroundTheRequests(t *testing.T) {
	var commands atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("/graphql", func(w http.ResponseWriter, r *http.Request) {
		commands.Add(2)
		_, _ = w.Write([]byte(`{"data":{"ok":true}}`))
	})
	mux.HandleFunc("/stats", func(w http.ResponseWriter, r *http.Request) {
		_, _ = fmt.Fprintf(w, `{"commands":%d,"queries":0}`, commands.Load())
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	// The instance's background: 50 commands a second, with or without requests.
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-tick.C:
				commands.Add(1)
			case <-stop:
				return
			}
		}
	}()
	c := peerConfig{shapes: []string{"inbox", "inbox-rls", "mark"}, countedServerURL: srv.URL, proxyStatsURL: srv.URL + "/stats"}
	tg := peerTarget{apiKey: "k", subscriber: "s", pageSize: 10, markIDs: []string{"a"}}
	got, err := countRoundTrips(context.Background(), srv.Client(), tg, c, 50)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Shape != "inbox" || got[1].Shape != "mark" {
		t.Fatalf("shapes counted: %+v, want inbox and mark", got)
	}
	for _, r := range got {
		// The background comes out at its idle rate; a tick more or less is timing.
		if r.Requests != 50 || r.RoundTrips < 1.7 || r.RoundTrips > 2.3 || r.Background < 40 || r.Background > 60 {
			t.Errorf("%+v, want 50 requests of 2 round trips and a background of about 50 a second", r)
		}
	}
}

// A child that exited and was reaped still counts, in its parent's cutime: PostgreSQL's
// pool closes idle backends, and their time must not leave the sum mid-measurement.
func TestTreeCPUTicksKeepsReapedChildren(t *testing.T) {
	parent := exec.Command("sh", "-c", `(i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done); echo spun; sleep 30`)
	out, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = parent.Process.Kill(); _ = parent.Wait() })
	buf := make([]byte, 5)
	if _, err := io.ReadFull(out, buf); err != nil {
		t.Fatal(err)
	}
	own, err := measure.ReadCPUTicks(parent.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	tree, err := treeCPUTicks([]int{parent.Process.Pid})
	if err != nil {
		t.Fatal(err)
	}
	if tree < own+5 {
		t.Errorf("tree %d ticks after the spinning child exited, the shell's own %d: the child's time is lost", tree, own)
	}
}
