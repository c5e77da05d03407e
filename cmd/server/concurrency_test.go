package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"messages/models/dbtest"
)

// actionState is what a mark sets: cta.action.status, .result.type and .result.payload
// (raw bytes, as stored).
type actionState struct {
	Status, Type, Payload string
}

// record returns the fixture message as GET /v1/messages returns it.
func (e *e2eTenant) record(t *testing.T) []byte {
	t.Helper()
	var page struct {
		Data []json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(e.fixture(t), &page); err != nil || len(page.Data) != 1 {
		t.Fatalf("fixture page holds %d records (%v)", len(page.Data), err)
	}
	return page.Data[0]
}

// splitAction separates a message record into cta.action's state and buttons, and every
// other field as raw bytes. cta.action must hold nothing else.
func splitAction(t *testing.T, record []byte) (state actionState, buttons string, others map[string]string) {
	t.Helper()
	var top map[string]json.RawMessage
	if err := json.Unmarshal(record, &top); err != nil {
		t.Fatalf("record is not an object: %s", record)
	}
	var cta map[string]json.RawMessage
	if err := json.Unmarshal(top["cta"], &cta); err != nil {
		t.Fatalf("cta is not an object: %s", top["cta"])
	}
	var action map[string]json.RawMessage
	if err := json.Unmarshal(cta["action"], &action); err != nil {
		t.Fatalf("cta.action is not an object: %s", cta["action"])
	}
	var result map[string]json.RawMessage
	if r, ok := action["result"]; ok {
		if err := json.Unmarshal(r, &result); err != nil {
			t.Fatalf("cta.action.result is not an object: %s", r)
		}
	}
	for k := range action {
		if k != "status" && k != "buttons" && k != "result" {
			t.Errorf("cta.action holds %q: %s", k, cta["action"])
		}
	}
	for k := range result {
		if k != "type" && k != "payload" {
			t.Errorf("cta.action.result holds %q: %s", k, action["result"])
		}
	}
	str := func(raw json.RawMessage) string {
		var s string
		_ = json.Unmarshal(raw, &s)
		return s
	}
	state = actionState{Status: str(action["status"]), Type: str(result["type"]), Payload: string(result["payload"])}

	others = map[string]string{}
	for k, v := range top {
		if k != "cta" {
			others[k] = string(v)
		}
	}
	for k, v := range cta {
		if k != "action" {
			others["cta."+k] = string(v)
		}
	}
	return state, string(action["buttons"]), others
}

// withoutMessage drops one message's row from a database state.
func withoutMessage(s dbState, id string) dbState {
	s.Messages = slices.DeleteFunc(slices.Clone(s.Messages), func(row string) bool {
		return strings.HasPrefix(row, `{"_id":"`+id+`"`)
	})
	return s
}

// TestConcurrentMarks sends 50 different marks of one message at once: each succeeds,
// each answers with its own state, and the message ends in exactly one of the 50 states
// with every other field, and every other row, exactly as before.
func TestConcurrentMarks(t *testing.T) {
	for _, dialect := range dbtest.Dialects {
		t.Run(dialect, func(t *testing.T) {
			e := newE2ETenant(t, dialect)
			beforeState := withoutMessage(e.state(t), e.msg.ID)
			_, beforeButtons, beforeOthers := splitAction(t, e.record(t))

			wants := make([]actionState, 50)
			for i := range wants {
				wants[i] = actionState{Status: "done", Type: "primary", Payload: fmt.Sprintf(`{"i":%d,"who":"request %d","tags":["<&>"]}`, i, i)}
				if i%2 == 1 {
					wants[i].Type = "secondary"
				}
				if i%3 == 0 {
					wants[i].Status = "pending"
				}
			}
			replies := make([]e2eReply, len(wants))
			errs := make([]error, len(wants))
			var wg sync.WaitGroup
			ready := make(chan struct{})
			for i, w := range wants {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-ready
					replies[i], errs[i] = e.send(http.MethodPost, e.markPath(w.Type), http.Header{"Content-Type": {"application/json"}},
						[]byte(`{"status":"`+w.Status+`","payload":`+w.Payload+`}`))
				}()
			}
			close(ready)
			wg.Wait()

			for i, r := range replies {
				if errs[i] != nil {
					t.Fatalf("mark %d: %v", i, errs[i])
				}
				if r.status != http.StatusCreated {
					t.Fatalf("mark %d: %d, want 201: %s", i, r.status, r.body)
				}
				if got, _, _ := splitAction(t, r.body); got != wants[i] {
					t.Errorf("mark %d answered with state %+v, want its own %+v", i, got, wants[i])
				}
			}

			after, afterButtons, afterOthers := splitAction(t, e.record(t))
			if !slices.Contains(wants, after) {
				t.Errorf("final state %+v is none of the 50 requested", after)
			}
			if afterButtons != beforeButtons {
				t.Errorf("cta.action.buttons changed: %s -> %s", beforeButtons, afterButtons)
			}
			if diff := cmp.Diff(beforeOthers, afterOthers); diff != "" {
				t.Errorf("fields outside cta.action changed (-before +after):\n%s", diff)
			}
			if diff := cmp.Diff(beforeState, withoutMessage(e.state(t), e.msg.ID)); diff != "" {
				t.Errorf("other rows changed (-before +after):\n%s", diff)
			}
		})
	}
}

// TestConcurrentIdempotencyKey sends one mark 20 times at once under one Idempotency-Key:
// it runs once; every answer is that run's 201, byte for byte, or 409 with Retry-After: 1;
// and a later retry replays the stored answer without touching the message.
func TestConcurrentIdempotencyKey(t *testing.T) {
	for _, dialect := range dbtest.Dialects {
		t.Run(dialect, func(t *testing.T) {
			e := newE2ETenant(t, dialect)
			const key = "order-7f3a-concurrent"
			want := actionState{Status: "done", Type: "secondary", Payload: `{"idempotent":true,"n":1}`}
			header := http.Header{"Content-Type": {"application/json"}, "Idempotency-Key": {key}}
			body := []byte(`{"status":"done","payload":{"idempotent":true,"n":1}}`)
			path := e.markPath("secondary")

			replies := make([]e2eReply, 20)
			errs := make([]error, len(replies))
			var wg sync.WaitGroup
			ready := make(chan struct{})
			for i := range replies {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-ready
					replies[i], errs[i] = e.send(http.MethodPost, path, header, body)
				}()
			}
			close(ready)
			wg.Wait()

			var executed, replayed, busy int
			var first []byte
			for i, r := range replies {
				if errs[i] != nil {
					t.Fatalf("request %d: %v", i, errs[i])
				}
				if got := r.header.Get("Idempotency-Key"); got != key {
					t.Errorf("request %d: Idempotency-Key echoed %q, want %q", i, got, key)
				}
				switch r.status {
				case http.StatusCreated:
					if r.header.Get("Idempotency-Replay") == "true" {
						replayed++
					} else {
						executed++
					}
					if first == nil {
						first = r.body
					} else if !bytes.Equal(first, r.body) {
						t.Errorf("request %d: 201 differs from another 201:\n%s\n%s", i, first, r.body)
					}
				case http.StatusConflict:
					busy++
					if got := r.header.Get("Retry-After"); got != "1" {
						t.Errorf("request %d: 409 with Retry-After %q, want 1", i, got)
					}
					refused(http.StatusConflict, "")(t, path, r)
				default:
					t.Errorf("request %d: %d, want 201 or 409: %s", i, r.status, r.body)
				}
			}
			t.Logf("%d executed, %d replayed, %d busy", executed, replayed, busy)
			if executed != 1 {
				t.Fatalf("%d requests executed, want exactly 1", executed)
			}
			if got, _, _ := splitAction(t, first); got != want {
				t.Errorf("the 201 holds state %+v, want %+v", got, want)
			}
			if got, _, _ := splitAction(t, e.record(t)); got != want {
				t.Errorf("stored state %+v, want the key's %+v", got, want)
			}
			if n := e.state(t).Counts["idempotency_keys"]; n != 1 {
				t.Errorf("%d idempotency records, want 1", n)
			}

			// Another mark without the key moves the message on; a retry with the key then
			// replays the stored answer and leaves the message where it is.
			between := actionState{Status: "pending", Type: "primary", Payload: `{"between":true}`}
			if r := e.do(t, http.MethodPost, e.markPath("primary"), http.Header{"Content-Type": {"application/json"}},
				[]byte(`{"status":"pending","payload":{"between":true}}`)); r.status != http.StatusCreated {
				t.Fatalf("mark without a key: %d %s", r.status, r.body)
			}
			r := e.do(t, http.MethodPost, path, header, body)
			if r.status != http.StatusCreated || r.header.Get("Idempotency-Replay") != "true" || !bytes.Equal(r.body, first) {
				t.Errorf("retry: %d, Idempotency-Replay %q, want 201 true and the first answer's bytes:\n%s\n%s",
					r.status, r.header.Get("Idempotency-Replay"), r.body, first)
			}
			if got, _, _ := splitAction(t, e.record(t)); got != between {
				t.Errorf("the replay touched the message: state %+v, want %+v", got, between)
			}
		})
	}
}
