package models_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"messages/models"
)

// A notification is built from what the record has: the body from its text blocks or
// else its title, no workflow without a template, an action completed only when the
// action is done with that button's result, timestamps only while their state holds.
func TestNewInboxNotification(t *testing.T) {
	at := models.NewTime(time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC))
	buttons := []models.CTAButton{{Type: models.ButtonPrimary, Content: "Yes"}, {Type: models.ButtonSecondary, Content: "No"}}
	for _, tt := range []struct {
		name string
		m    models.Message
		want map[string]any
	}{
		{"bareRecord", models.Message{ID: "m1", Channel: models.ChannelInApp, Title: "Only a title", CreatedAt: at},
			map[string]any{"id": "m1", "transactionId": "", "body": "Only a title", "to": map[string]any{"subscriberId": ""},
				"isRead": false, "isSeen": false, "isArchived": false, "isSnoozed": false, "snoozedUntil": nil,
				"createdAt": at.String(), "readAt": nil, "firstSeenAt": nil, "archivedAt": nil,
				"channelType": "in_app", "tags": []any{}, "severity": "none"}},
		{"secondaryDone", models.Message{ID: "m2", Channel: models.ChannelInApp, CreatedAt: at, Read: true, LastReadDate: &at,
			Archived: true, ArchivedAt: &at, SnoozedUntil: &at, Seen: true, FirstSeenDate: &at,
			Content: []models.ContentBlock{{Type: "button", Content: "Open"}, {Type: "text", Content: "a"}, {Type: "text", Content: "b"}},
			CTA: models.CTA{Type: "redirect", Action: &models.CTAAction{Status: models.ActionDone, Buttons: buttons,
				Result: &models.CTAResult{Type: models.ButtonSecondary}}}},
			map[string]any{"id": "m2", "transactionId": "", "body": "a\nb", "to": map[string]any{"subscriberId": ""},
				"isRead": true, "isSeen": true, "isArchived": true, "isSnoozed": true, "snoozedUntil": at.String(),
				"createdAt": at.String(), "readAt": at.String(), "firstSeenAt": at.String(), "archivedAt": at.String(),
				"primaryAction": map[string]any{"label": "Yes", "isCompleted": false}, "secondaryAction": map[string]any{"label": "No", "isCompleted": true},
				"channelType": "in_app", "tags": []any{}, "severity": "none"}},
		{"staleStamps", models.Message{ID: "m3", Channel: models.ChannelInApp, CreatedAt: at, LastReadDate: &at, ArchivedAt: &at,
			CTA:      models.CTA{Action: &models.CTAAction{Status: models.ActionPending, Buttons: buttons[:1], Result: &models.CTAResult{Type: models.ButtonPrimary}}},
			Template: &models.Template{ID: "t1", Name: "Welcome", Tags: []string{"a"}}, TemplateIdentifier: "welcome-id"},
			map[string]any{"id": "m3", "transactionId": "", "body": "", "to": map[string]any{"subscriberId": ""},
				"isRead": false, "isSeen": false, "isArchived": false, "isSnoozed": false, "snoozedUntil": nil,
				"createdAt": at.String(), "readAt": nil, "firstSeenAt": nil, "archivedAt": nil,
				"primaryAction": map[string]any{"label": "Yes", "isCompleted": false},
				"workflow":      map[string]any{"id": "t1", "identifier": "welcome-id", "name": "Welcome", "critical": false, "tags": []any{"a"}, "severity": "none"},
				"channelType":   "in_app", "tags": []any{"a"}, "severity": "none"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(models.NewInboxNotification(&tt.m))
			if err != nil {
				t.Fatal(err)
			}
			var got map[string]any
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("notification (-want +got):\n%s", diff)
			}
		})
	}
}
