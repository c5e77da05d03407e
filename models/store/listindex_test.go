package store_test

import (
	"context"
	"messages/models"
	"messages/models/dbtest"
	"messages/models/seed"
	"messages/models/store"
	"strings"
	"testing"
)

// TestListIndexFollowsTheDatabase drops the index a page names while the store runs: the
// page that names it is read again without the name, the store reads the indexes again,
// and the pages after it name the index that is left.
func TestListIndexFollowsTheDatabase(t *testing.T) {
	s := dbtest.Open(t, store.DialectMySQL)
	stats := dbtest.Seed(t, s, seed.Options{Seed: 5, Messages: 200, Subscribers: 5, Templates: 3})
	env := stats.EnvironmentID
	queries := recordQueries(t, s)
	email := channel(models.ChannelEmail)
	page := func() []*models.Message {
		t.Helper()
		msgs, _, err := s.ListMessagesFrom(context.Background(), env, models.ListFilter{Channel: email}, 0, 10, models.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return msgs
	}
	named := func() []string {
		t.Helper()
		var out []string
		for _, q := range queries.take() {
			if _, rest, ok := strings.Cut(q.SQL, "USE INDEX (`"); ok {
				out = append(out, rest[:strings.IndexByte(rest, '`')])
			}
		}
		return out
	}

	want := page()
	if got := named(); len(got) != 1 || got[0] != "messages_environment_channel_created" {
		t.Fatalf("the channel's page named %v, want [messages_environment_channel_created]", got)
	}
	if err := s.DB().Exec("ALTER TABLE messages DROP INDEX messages_environment_channel_created").Error; err != nil {
		t.Fatal(err)
	}
	got := page()
	if idsOf(got) == nil || strings.Join(idsOf(got), ",") != strings.Join(idsOf(want), ",") {
		t.Fatalf("after the index was dropped the page is %v, want %v", idsOf(got), idsOf(want))
	}
	// The try that named the dropped index failed; the one after named none.
	if got := named(); len(got) != 1 || got[0] != "messages_environment_channel_created" {
		t.Errorf("the page after the drop named %v, want the dropped index once, then none", got)
	}
	page()
	if got := named(); len(got) != 1 || got[0] != "messages_environment_created" {
		t.Errorf("the next page named %v, want [messages_environment_created]", got)
	}
}
