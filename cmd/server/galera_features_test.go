package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"messages/models"
	"messages/models/dbtest"
	"messages/models/store"
)

// galeraCountsAndEvents checks, on the cluster TestGalera runs, what issues 11 and 12
// added: the counter rows that give totalCount are kept by triggers on whichever node
// writes and replicated with the rows they count, so every instance's exact count agrees
// with the rows; and the change feed of an instance on node 1 sees a mark made through
// node 3 and a row inserted with plain SQL on node 3, though their commits reach node 1
// after they were stamped.
func galeraCountsAndEvents(t *testing.T, store1 *store.Store, url3 string, instances []*running, apiKey, env, messageID, subscriberID string) {
	store3, err := store.Open(context.Background(), url3, store.DefaultPool)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store3.Close() })

	conn := dialEvents(t, instances[0].base, "ApiKey "+apiKey)
	events := subscribeEvents(t, conn, map[string]any{"s": subscriberID})

	// A mark through node 3's instance, to the status the message does not have.
	var current string
	if err := store1.DB().Raw(`SELECT action_status FROM messages WHERE id = ?`, messageID).Scan(&current).Error; err != nil {
		t.Fatal(err)
	}
	next := "done"
	if current == "done" {
		next = "pending"
	}
	markVia(t, instances[1].base, apiKey, subscriberID, messageID, next)
	// The import's last writes of this message, stamped on node 2 before the stream began,
	// may reach node 1 after it began: node 1's stream then carries them first, as older
	// states of the message, in the order of its changes.
	for {
		e := readEvent(t, events, 15*time.Second)
		if e.Kind == "updated" && e.ID == messageID && e.Status == next {
			break
		}
		if e.ID != messageID {
			t.Fatalf("node 1's stream after a mark through node 3: %+v, want updated %s %s", e, messageID, next)
		}
		t.Logf("node 1's stream: an earlier state of the message first: %+v", e)
	}

	// A row another writer inserts with plain SQL on node 3.
	var sub models.Subscriber
	if err := store3.DB().Where("environment_id = ? AND subscriber_id = ?", env, subscriberID).Take(&sub).Error; err != nil {
		t.Fatal(err)
	}
	environment := &models.Environment{ID: env, OrganizationID: sub.OrganizationID}
	raw := dbtest.RawMessage(t, store3.DB(), environment, sub.ID, nil)
	if e := readEvent(t, events, 15*time.Second); e.Kind != "created" || e.ID != raw {
		t.Fatalf("node 1's stream after a plain INSERT on node 3: %+v, want created %s", e, raw)
	}

	// Every instance's exact totalCount, for the environment and for the subscriber, is
	// the number of rows, once node 1 holds them all.
	want := func(where string, args ...any) int64 {
		var n int64
		if err := store1.DB().Model(&models.Message{}).Where(where, args...).Count(&n).Error; err != nil {
			t.Fatal(err)
		}
		return n
	}
	var all, mine int64
	eventually(t, 10*time.Second, "node 1 holds the row inserted on node 3", func() bool {
		all, mine = want("environment_id = ?", env), want("environment_id = ? AND subscriber_id = ?", env, sub.ID)
		var n int64
		_ = store1.DB().Model(&models.Message{}).Where("id = ?", raw).Count(&n).Error
		return n == 1
	})
	for i, in := range instances[:2] {
		for _, c := range []struct {
			args string
			want int64
		}{{"limit: 1", all}, {fmt.Sprintf("subscriberId: %q, limit: 1", subscriberID), mine}} {
			got := galeraTotalCount(t, in.base, apiKey, c.args)
			if got != c.want {
				t.Errorf("instance %d: messages(%s) totalCount %d, want %d (the rows)", i+1, c.args, got, c.want)
			}
		}
	}
}

// galeraTotalCount asks an instance for messages(args) { totalCount }.
func galeraTotalCount(t *testing.T, base, apiKey, args string) int64 {
	t.Helper()
	code, body := postGraphQL(t, base, apiKey, fmt.Sprintf(`{ messages(%s) { totalCount } }`, args))
	var r struct {
		Data struct{ Messages struct{ TotalCount int64 } }
	}
	if code != http.StatusOK || json.Unmarshal(body, &r) != nil {
		t.Fatalf("totalCount: %d %s", code, body)
	}
	return r.Data.Messages.TotalCount
}
