package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"messages/models"
	"messages/models/dbtest"
)

// What a hostile client sends cannot drive the server's memory or CPU: caches and
// responses are bounded in bytes, and a document is measured before it is parsed or
// validated. The server runs in this process, so its heap is measured here: after a
// collection (what stays) and sampled while the attack runs (what it builds).

// heapWatch samples the live heap while an attack runs.
type heapWatch struct {
	base uint64
	mu   sync.Mutex
	peak uint64
	stop chan struct{}
	done chan struct{}
}

// watchHeap collects garbage, notes the heap, and samples it every few milliseconds.
func watchHeap() *heapWatch {
	h := &heapWatch{base: liveHeap(), stop: make(chan struct{}), done: make(chan struct{})}
	h.peak = h.base
	go func() {
		defer close(h.done)
		var m runtime.MemStats
		for {
			select {
			case <-h.stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
			runtime.ReadMemStats(&m)
			h.mu.Lock()
			h.peak = max(h.peak, m.HeapAlloc)
			h.mu.Unlock()
		}
	}()
	return h
}

// end stops sampling and returns, in MB, how far the heap rose at its peak and how much
// of it stays after a collection.
func (h *heapWatch) end() (peakMB, keptMB float64) {
	close(h.stop)
	<-h.done
	kept := liveHeap()
	mb := func(n, base uint64) float64 {
		if n < base {
			return 0
		}
		return float64(n-base) / (1 << 20)
	}
	return mb(h.peak, h.base), mb(kept, h.base)
}

// liveHeap is the heap in use after a collection.
func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// postJSON sends body to /graphql as key and returns the status and response body.
func postJSON(t *testing.T, base, key string, body any) (int, []byte) {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, base+"/graphql", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "ApiKey "+key)
	res, err := e2eClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, out
}

// codes are the extensions.code of a GraphQL response's errors.
func codes(t *testing.T, body []byte) []string {
	t.Helper()
	var r struct {
		Errors []struct {
			Extensions struct{ Code string }
		}
	}
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatalf("not JSON: %.300s", body)
	}
	var out []string
	for _, e := range r.Errors {
		out = append(out, e.Extensions.Code)
	}
	return out
}

func TestDoorsMemoryBoundedInBytes(t *testing.T) {
	w := newDoorsWorld(t)

	t.Run("persistedQueriesOverTheLimitAreNotKept", func(t *testing.T) {
		// Before: each 1 MB query with its hash was stored by the persisted-query cache,
		// which counted entries; 200 of them kept 260 MB.
		h := watchHeap()
		for i := range 60 {
			query := fmt.Sprintf("# %d\n{ messages { totalCount } }", i) + strings.Repeat(" ", 1_000_000)
			sum := sha256.Sum256([]byte(query))
			status, body := postJSON(t, w.srv.base, w.key, map[string]any{"query": query,
				"extensions": map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": hex.EncodeToString(sum[:])}}})
			if got := codes(t, body); status != http.StatusOK || len(got) != 1 || got[0] != "QUERY_TOO_LARGE" {
				t.Fatalf("%d %v", status, got)
			}
		}
		peak, kept := h.end()
		t.Logf("60 persisted queries of 1 MB: heap peak +%.1f MB, kept +%.1f MB", peak, kept)
		if kept > 8 {
			t.Errorf("60 refused 1 MB persisted queries kept %.1f MB", kept)
		}
	})

	t.Run("documentCacheBoundedInBytes", func(t *testing.T) {
		// Distinct valid documents that each parse into about 170 KB of syntax tree: kept
		// by count (1,000 entries) they would hold 130 MB; the cache is bounded at 16 MiB
		// and the list plans at 8 MiB.
		h := watchHeap()
		for i := range 800 {
			query := fmt.Sprintf("query Q%d { messages(limit: 1) { data { %s} } } fragment F on Message { _id }", i, strings.Repeat("...F ", 985))
			if status, body := postJSON(t, w.srv.base, w.key, map[string]any{"query": query}); status != http.StatusOK || len(codes(t, body)) > 0 {
				t.Fatalf("%d %.300s", status, body)
			}
		}
		peak, kept := h.end()
		t.Logf("800 distinct documents: heap peak +%.1f MB, kept +%.1f MB", peak, kept)
		if kept > 48 {
			t.Errorf("800 distinct documents kept %.1f MB, more than the caches' 24 MiB and some", kept)
		}
	})

	t.Run("largeRecordsAreNotBuiltIntoOneResponse", func(t *testing.T) {
		// Another writer stored 900 KB payloads on 30 messages; ten aliases of a
		// 1,000-message page would build 270 MB. The request's byte budget (16 MiB) stops
		// the reads at the row that crosses it.
		tn := dbtest.NewTenant(t, w.store, "large")
		sub, tpl := tn.Subscriber(t, "big"), tn.Template(t, "big")
		payload := models.JSON(`{"blob":"` + strings.Repeat("x", 900_000) + `"}`)
		for range 30 {
			m := tn.Message(t, sub, tpl, nil)
			if err := w.store.DB().Exec("UPDATE messages SET payload = ? WHERE id = ?", string(payload), m.ID).Error; err != nil {
				t.Fatal(err)
			}
		}
		var q strings.Builder
		q.WriteString("{")
		for i := range 10 {
			fmt.Fprintf(&q, " a%d: messages(limit: 1000) { data { _id payload } }", i)
		}
		q.WriteString(" }")
		h := watchHeap()
		status, body := postJSON(t, w.srv.base, tn.Key, map[string]any{"query": q.String()})
		peak, kept := h.end()
		t.Logf("ten aliases over 27 MB of payloads: %d bytes answered, heap peak +%.1f MB, kept +%.1f MB", len(body), peak, kept)
		if got := codes(t, body); status != http.StatusOK || len(got) == 0 || got[0] != "RESPONSE_TOO_LARGE" || len(body) > 8<<10 {
			t.Errorf("answered %d %v (%d bytes), want RESPONSE_TOO_LARGE in a short body", status, got, len(body))
		}
		// The heap's peak counts garbage the collector has not reached yet: a bound well
		// above the budget, and far below the hundreds of megabytes of the unbounded reads.
		if peak > 128 {
			t.Errorf("the refused query raised the heap by %.1f MB", peak)
		}
		// /v1 reads its page under the same budget.
		code, rest := get(t, w.srv.base+"/v1/messages?limit=100", tn.Key)
		if code != http.StatusUnprocessableEntity || !strings.Contains(string(rest), "larger than this server's limit") {
			t.Errorf("/v1 answered %d %.300s", code, rest)
		}
		// A page within the budget still reads.
		if code, _ := get(t, w.srv.base+"/v1/messages?limit=5", tn.Key); code != http.StatusOK {
			t.Errorf("a 5-message page answered %d", code)
		}
	})

	t.Run("markPayloadBounded", func(t *testing.T) {
		big := `{"blob":"` + strings.Repeat("x", models.MaxActionPayloadBytes) + `"}`
		r := w.call(t, http.MethodPost, "/v1/subscribers/alice/messages/"+w.alice1.ID+"/actions/primary", "ApiKey "+w.key, `{"status":"done","payload":`+big+`}`)
		if r.status != http.StatusUnprocessableEntity || !strings.Contains(string(r.body), "payload must be at most") {
			t.Errorf("/v1 mark with a %d-byte payload: %d %.300s", len(big), r.status, r.body)
		}
		_, body := postJSON(t, w.srv.base, w.key, map[string]any{
			"query":     `mutation($p: JSON) { markMessageAction(subscriberId: "alice", messageId: "` + w.alice1.ID + `", type: primary, status: done, payload: $p) { _id } }`,
			"variables": map[string]any{"p": json.RawMessage(big)}})
		if got := codes(t, body); len(got) != 1 || got[0] != "BAD_USER_INPUT" {
			t.Errorf("GraphQL mark with a %d-byte payload: %v", len(big), got)
		}
	})
}

// processCPU is the CPU time this process has used, user and system.
func processCPU(t *testing.T) time.Duration {
	t.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Documents built to make the validator work for seconds are refused by what the lexer
// counts before parsing: each costs milliseconds and is answered in a short body.
func TestDoorsHostileDocumentsCostLittle(t *testing.T) {
	w := newDoorsWorld(t)
	distinct := func(n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, " f%d", i)
		}
		return b.String()
	}
	docs := map[string]struct{ query, code string }{
		// Before: 2.5 s of CPU in gqlparser's pairwise check of fields of one name.
		"8,000 repeated fields in 32 KiB": {"{ messages { data {" + strings.Repeat(" _id", 8_000) + " } } }", "QUERY_TOO_COMPLEX"},
		// Before: an error per field, 1.3 MB of them.
		"9,000 unknown fields":      {"{" + distinct(9_000)[:31_000] + " }", "QUERY_TOO_COMPLEX"},
		"repeated conflicting args": {"{" + strings.Repeat(" messages(limit: 1) { totalCount } messages(limit: 2) { totalCount }", 480)[:32_000] + " }", "QUERY_TOO_COMPLEX"},
		"deep nesting":              {strings.Repeat("{ a ", 4_000) + strings.Repeat("}", 4_000), "DEPTH_LIMIT_EXCEEDED"},
		"many directives":           {"{ messages { totalCount" + strings.Repeat(" @skip(if: false)", 1_500) + " } }", "DIRECTIVE_LIMIT_EXCEEDED"},
		"many tokens":               {"{ messages(transactionId: [" + strings.Repeat(`"a",`, 7_000) + "]) { totalCount } }", "TOKEN_LIMIT_EXCEEDED"},
	}
	const rounds = 5
	cpu := processCPU(t)
	for name, d := range docs {
		if len(d.query) > 32<<10 {
			t.Fatalf("%s: %d bytes, over the size limit", name, len(d.query))
		}
		for range rounds {
			status, body := postJSON(t, w.srv.base, w.key, map[string]any{"query": d.query})
			if got := codes(t, body); status != http.StatusOK || len(got) != 1 || got[0] != d.code || len(body) > 2<<10 {
				t.Fatalf("%s: %d %v (%d bytes), want %s in a short body", name, status, got, len(body), d.code)
			}
		}
	}
	used := processCPU(t) - cpu
	each := used / time.Duration(len(docs)*rounds)
	t.Logf("%d hostile documents of up to 32 KiB: %s of CPU, %s each (server and client)", len(docs)*rounds, used.Round(time.Millisecond), each.Round(time.Microsecond))
	if each > 100*time.Millisecond {
		t.Errorf("a hostile document cost %s of CPU, want well under 100 ms (it was 2.5 s)", each)
	}
}
