package main

import (
	"bytes"
	"context"
	"net/http"
	"slices"
	"sync"
	"testing"

	"messages/models"
	"messages/models/cluster"
	"messages/models/dbtest"
	"messages/models/store"
)

// TestIdempotentMarkRunsAgainAfterDeadlock makes the first run of a keyed mark lose a real
// deadlock on MariaDB, inside the transaction that holds its Idempotency-Key: the whole
// transaction (claim, mark, stored response) runs again and the client gets 201, once;
// a retry replays those bytes. Over /v1 and over GraphQL.
func TestIdempotentMarkRunsAgainAfterDeadlock(t *testing.T) {
	hooks := &dbtest.MarkHooks{}
	e := newE2ETenant(t, store.DialectMySQL, store.WithMarkHook(hooks.Run))
	sqlDB, err := e.store.DB().DB()
	if err != nil {
		t.Fatal(err)
	}
	// The other transaction's rows: messages of the other tenant's subscriber.
	env := &models.Environment{ID: e.other.EnvironmentID}
	heavy := make([]string, 10)
	for i := range heavy {
		heavy[i] = dbtest.RawMessage(t, e.store.DB(), env, e.other.SubscriberID, nil)
	}
	var mu sync.Mutex
	var attempts []int
	ran := func() []int { mu.Lock(); defer mu.Unlock(); return slices.Clone(attempts) }
	defer hooks.Set(e.msg.ID, func(ctx context.Context) error {
		mu.Lock()
		attempts = append(attempts, cluster.Attempt(ctx))
		mu.Unlock()
		if cluster.Attempt(ctx) > 1 {
			return nil
		}
		return dbtest.Deadlock(t, sqlDB, e.msg.ID, heavy, func() error {
			_, err := e.store.MarkMessageAction(ctx, e.other.EnvironmentID, models.MarkAction{SubscriberID: "bob",
				MessageID: heavy[0], Type: models.ButtonPrimary, Status: models.ActionDone})
			return err
		})
	})()

	for _, tc := range []struct {
		name, path, key string
		body            []byte
	}{
		{"rest", e.markPath("secondary"), "deadlock-rest", []byte(`{"status":"done","payload":{"via":"rest"}}`)},
		{"graphql", "/graphql", "deadlock-graphql", []byte(`{"query":"mutation { markMessageAction(subscriberId: \"alice\", messageId: \"` +
			e.msg.ID + `\", type: primary, status: done, payload: {via: \"graphql\"}) { _id cta { action { status result { type payload } } } } }"}`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mu.Lock()
			attempts = nil
			mu.Unlock()
			header := http.Header{"Content-Type": {"application/json"}, "Idempotency-Key": {tc.key}}
			first := e.do(t, http.MethodPost, tc.path, header, tc.body)
			if first.status/100 != 2 || first.header.Get("Idempotency-Replay") != "" || bytes.Contains(first.body, []byte(`"errors"`)) {
				t.Fatalf("first: %d, replay %q, want 2xx run: %s", first.status, first.header.Get("Idempotency-Replay"), first.body)
			}
			if got := ran(); !slices.Equal(got, []int{1, 2}) {
				t.Errorf("the mark ran attempts %v, want [1 2]", got)
			}
			again := e.do(t, http.MethodPost, tc.path, header, tc.body)
			if again.status != first.status || again.header.Get("Idempotency-Replay") != "true" || !bytes.Equal(again.body, first.body) {
				t.Errorf("retry: %d, replay %q, want %d replayed with the first bytes:\n%s\n%s",
					again.status, again.header.Get("Idempotency-Replay"), first.status, again.body, first.body)
			}
			if got := ran(); len(got) != 2 {
				t.Errorf("the replay ran the mark again: attempts %v", got)
			}
		})
	}
	if n := e.state(t).Counts["idempotency_keys"]; n != 2 {
		t.Errorf("%d idempotency records, want 2", n)
	}
}
