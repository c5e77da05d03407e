package inboxsocket

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"messages/models"
	"messages/models/wire"
)

func decodeObject(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("not a JSON object: %v\n%s", err, b)
	}
	return v
}

// The counts as the client's PartySocketClient reads them: data.counts for the badge,
// data.unseenCount for the unseen count.
func TestCountEvents(t *testing.T) {
	want := map[string]any{"event": "unread_count_changed", "data": map[string]any{"counts": map[string]any{
		"total": 117.0, "severity": map[string]any{"high": 3.0, "medium": 0.0, "low": 14.0, "none": 100.0}}}}
	if diff := cmp.Diff(want, decodeObject(t, unreadCountChanged(models.UnreadCounts{Total: 117, BySeverity: [4]int{3, 0, 14, 100}}))); diff != "" {
		t.Errorf("unread_count_changed (-want +got):\n%s", diff)
	}
	want = map[string]any{"event": "unseen_count_changed", "data": map[string]any{"unseenCount": 0.0}}
	if diff := cmp.Diff(want, decodeObject(t, unseenCountChanged(0))); diff != "" {
		t.Errorf("unseen_count_changed (-want +got):\n%s", diff)
	}
}

// notification_received carries the message's /v1 form, but for content, the body the
// client shows, and the fields the client copies that /v1 has not, as the inbox API's
// list has them.
func TestNotificationReceived(t *testing.T) {
	at := models.NewTime(time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC))
	tpl := &models.Template{ID: "67c2be400000000000000002", Name: "Welcome", Tags: []string{"onboarding"},
		Triggers: []models.Trigger{{Type: "event", Identifier: "welcome"}}}
	m := &models.Message{ID: "67c2be400000000000000001", EnvironmentID: "env", OrganizationID: "org", SubscriberID: "sub",
		Subscriber: &models.Subscriber{ID: "sub", SubscriberID: "ada"}, Template: tpl, CreatedAt: at, Channel: models.ChannelInApp,
		TransactionID: "txn", Subject: "Hi <there>", Status: "sent",
		Content: []models.ContentBlock{{Type: "text", Content: "First & foremost"}, {Type: "button", Content: "Open"}, {Type: "text", Content: "Second"}},
		CTA: models.CTA{Type: "redirect", Data: &models.CTAData{URL: "/x"}, Action: &models.CTAAction{Status: models.ActionPending,
			Buttons: []models.CTAButton{{Type: models.ButtonPrimary, Content: "Accept"}}}}}
	b, err := notificationReceived(m)
	if err != nil {
		t.Fatal(err)
	}
	got := decodeObject(t, b)
	v1, err := wire.Message(m)
	if err != nil {
		t.Fatal(err)
	}
	message := decodeObject(t, v1)
	n := models.NewInboxNotification(m)
	message["content"] = "First & foremost\nSecond"
	message["tags"] = []any{"onboarding"}
	message["severity"] = "none"
	workflow, _ := json.Marshal(n.Workflow)
	message["workflow"] = decodeObject(t, workflow)
	want := map[string]any{"event": "notification_received", "data": map[string]any{"message": message}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("notification_received (-want +got):\n%s", diff)
	}
}

// A socket announces a message once, remembering the last maxAnnounced.
func TestAnnounceOnce(t *testing.T) {
	s := &socket{}
	for i := range maxAnnounced + 2 {
		if !s.announce(fmt.Sprint(i)) {
			t.Fatalf("message %d announced before", i)
		}
	}
	if s.announce(fmt.Sprint(maxAnnounced + 1)) {
		t.Error("the newest message was announced twice")
	}
	if !s.announce("0") {
		t.Error("the oldest id is remembered past maxAnnounced")
	}
	if len(s.announced) != maxAnnounced {
		t.Errorf("remembers %d ids", len(s.announced))
	}
}
