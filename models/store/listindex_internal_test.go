package store

import (
	"messages/models"
	"testing"
)

// TestIndexFor picks, for each filter, the index whose columns before (created_at, id)
// the filter holds equal, the most of them, as MariaDB picks them itself.
func TestIndexFor(t *testing.T) {
	indexes := []listIndex{
		{"messages_environment_channel_created", []string{"environment_id", "channel"}},
		{"messages_environment_created", []string{"environment_id"}},
		{"messages_environment_subscriber_channel_created", []string{"environment_id", "subscriber_id", "channel"}},
		{"messages_environment_subscriber_created", []string{"environment_id", "subscriber_id"}},
		{"messages_environment_transaction_created", []string{"environment_id", "transaction_id"}},
		{"messages_inbox", []string{"environment_id", "subscriber_id", "channel", "archived"}},
	}
	sub, inApp, no := "s1", models.ChannelInApp, false
	tests := []struct {
		name string
		f    models.ListFilter
		want string
	}{
		{"everything", models.ListFilter{}, "messages_environment_created"},
		{"channel", models.ListFilter{Channel: &inApp}, "messages_environment_channel_created"},
		{"subscriber", models.ListFilter{SubscriberID: &sub}, "messages_environment_subscriber_created"},
		{"subscriberAndChannel", models.ListFilter{SubscriberID: &sub, Channel: &inApp}, "messages_environment_subscriber_channel_created"},
		{"inboxTab", models.ListFilter{SubscriberID: &sub, Channel: &inApp, StateFilter: models.StateFilter{Archived: &no}}, "messages_inbox"},
		{"inboxTabUnread", models.ListFilter{SubscriberID: &sub, Channel: &inApp, StateFilter: models.StateFilter{Archived: &no, Read: &no}}, "messages_inbox"},
		{"archivedWithoutChannel", models.ListFilter{SubscriberID: &sub, StateFilter: models.StateFilter{Archived: &no}}, "messages_environment_subscriber_created"},
		{"transactions", models.ListFilter{TransactionIDs: []string{"a", "b"}}, "messages_environment_transaction_created"},
		{"templatesOnly", models.ListFilter{TemplateIDs: []string{"t"}}, "messages_environment_created"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := indexFor(indexes, tt.f); got != tt.want {
				t.Errorf("indexFor = %q, want %q", got, tt.want)
			}
		})
	}
	if got := indexFor(nil, models.ListFilter{}); got != "" {
		t.Errorf("with no index of the list order, indexFor = %q, want none", got)
	}
}
