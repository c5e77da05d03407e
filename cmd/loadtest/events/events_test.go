package events

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/urfave/cli/v3"

	"messages/cmd/loadtest/cmdline"
	"messages/graph/gqlclient"
)

// A raw insert has six placeholders a row and binds them in the columns' order.
func TestRawInsert(t *testing.T) {
	at := time.Date(2026, 11, 22, 23, 0, 0, 0, time.UTC)
	q, args := rawInsert("env", "org", at, []rawMessage{{id: "a", subscriberID: "s1"}, {id: "b", subscriberID: "s2", payload: `{"x":1}`}})
	if n := strings.Count(q, "?"); n != 12 || len(args) != 12 {
		t.Fatalf("%d placeholders, %d args; want 12 each:\n%s", n, len(args), q)
	}
	want := []any{"a", "env", "org", "s1", at, nil, "b", "env", "org", "s2", at, `{"x":1}`}
	if diff := cmp.Diff(want, args); diff != "" {
		t.Errorf("args (-want +got):\n%s", diff)
	}
	if !strings.HasPrefix(q, "INSERT INTO messages (id, environment_id,") || strings.Count(q, "'events-bench'") != 2 {
		t.Errorf("statement:\n%s", q)
	}
}

func TestDecodeEvent(t *testing.T) {
	tests := []struct {
		name    string
		result  gqlclient.Result
		want    receivedEvent
		wantErr bool
	}{
		{"created", gqlclient.Result{Data: json.RawMessage(`{"messageEvents":{"kind":"created","cursor":"c","message":{"_id":"m1","subscriber":{"subscriberId":"u1"}}}}`)},
			receivedEvent{kind: "created", id: "m1", subscriber: "u1"}, false},
		{"noSubscriber", gqlclient.Result{Data: json.RawMessage(`{"messageEvents":{"kind":"updated","message":{"_id":"m2","subscriber":null}}}`)},
			receivedEvent{kind: "updated", id: "m2"}, false},
		{"slowConsumer", gqlclient.Result{Errors: []gqlclient.Error{{Message: "closed", Extensions: map[string]any{"code": "SLOW_CONSUMER"}}}},
			receivedEvent{code: "SLOW_CONSUMER"}, false},
		{"errorWithoutCode", gqlclient.Result{Errors: []gqlclient.Error{{Message: "boom"}}}, receivedEvent{code: "UNKNOWN"}, false},
		{"noMessage", gqlclient.Result{Data: json.RawMessage(`{"messageEvents":null}`)}, receivedEvent{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodeEvent(tt.result)
			if (err != nil) != tt.wantErr {
				t.Fatalf("error %v, want error %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(receivedEvent{})); diff != "" {
				t.Errorf("event (-want +got):\n%s", diff)
			}
		})
	}
}

// awaitEvent skips other messages' events and other kinds, and gives up after timeout.
func TestAwaitEvent(t *testing.T) {
	in := make(chan arrival, 4)
	at := time.Now()
	in <- arrival{ev: receivedEvent{kind: "created", id: "m1"}, at: at.Add(-time.Second)}
	in <- arrival{ev: receivedEvent{kind: "updated", id: "m2"}, at: at.Add(-time.Second)}
	in <- arrival{ev: receivedEvent{kind: "updated", id: "m1"}, at: at}
	if got, ok := awaitEvent(in, "m1", "updated", time.Second); !ok || !got.Equal(at) {
		t.Errorf("awaitEvent = %v, %v; want %v", got, ok, at)
	}
	if _, ok := awaitEvent(in, "m1", "updated", 10*time.Millisecond); ok {
		t.Error("awaitEvent found an event that never came")
	}
	close(in)
	if _, ok := awaitEvent(in, "m1", "updated", time.Second); ok {
		t.Error("awaitEvent on an ended stream")
	}
}

func TestEventsRowVerdict(t *testing.T) {
	tests := []struct {
		name         string
		row          eventsRow
		verdict      string
		ratio        float64
		target, text string
	}{
		{"underTarget", eventsRow{Value: 50, Unit: "ms", Target: 200}, "met", 0.25, "< 200.0 ms", "50.0 ms"},
		{"atTargetIsNotUnder", eventsRow{Value: 300, Unit: "MB", Target: 300}, "NOT MET", 1, "< 300.0 MB", "300.0 MB"},
		{"count", eventsRow{Value: 9999, Expect: "10000", OK: boolPtr(false)}, "NOT MET", 0, "10000", "9999"},
		{"noTarget", eventsRow{Value: 12.04, Unit: "/s"}, "", 0, "", "12.0/s"},
		{"ratio", eventsRow{Value: 1.5, Unit: "x", Expect: "no growth", OK: boolPtr(true)}, "met", 0, "no growth", "1.50x"},
		{"percent", eventsRow{Value: 2.345, Unit: "%", Target: 5}, "met", 0.47, "< 5.00%", "2.35%"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.row
			got := []any{r.verdict(), r.ratio(), r.target(), fmtEventValue(r.Value, r.Unit)}
			want := []any{tt.verdict, tt.ratio, tt.target, tt.text}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("verdict, ratio, target, value (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseEventScenarios(t *testing.T) {
	got, err := parseEventScenarios(" burst, raw-insert ,burst")
	if err != nil || !cmp.Equal(got, []string{"raw-insert", "burst"}) {
		t.Errorf("parseEventScenarios = %v, %v; want the run order [raw-insert burst]", got, err)
	}
	if got, _ := parseEventScenarios(""); !cmp.Equal(got, eventScenarioNames) {
		t.Errorf("empty list = %v, want all", got)
	}
	for _, bad := range []string{"nope", " , "} {
		if _, err := parseEventScenarios(bad); err == nil {
			t.Errorf("parseEventScenarios(%q) accepted", bad)
		}
	}
}

// The events command refuses bad settings with a usage error (exit code 2) before it
// connects to anything.
func TestEventsUsageErrors(t *testing.T) {
	base := []string{"events", "--api-key", "k", "--database-url", "mysql://root@127.0.0.1:3306/x", "--server-pid", "1"}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"offLoopback", append(base, "--writer-url", "http://10.0.0.1:8080"), "not loopback"},
		{"proxyOffLoopback", append(base, "--db-proxy-stats", "http://example.com/"), "not loopback"},
		{"noDatabase", []string{"events", "--api-key", "k"}, "--database-url is required"},
		{"noKey", []string{"events", "--database-url", "mysql://root@127.0.0.1:3306/x", "--scenarios", "raw-insert"}, "--api-key"},
		{"idleNeedsPID", []string{"events", "--api-key", "k", "--database-url", "mysql://root@127.0.0.1:3306/x", "--scenarios", "idle"}, "--server-pid"},
		{"unknownScenario", append(base, "--scenarios", "everything"), "unknown scenario"},
		{"tooManyRuns", append(base, "--runs", "0"), "--runs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			root := &cli.Command{Name: "loadtest", Commands: []*cli.Command{Command(func(string) string { return "" }, &bytes.Buffer{}, &stderr)}}
			code := cmdline.Run(t.Context(), root, tt.args, &stderr)
			if code != 2 || !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr.String(), tt.want)
			}
		})
	}
}
