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

// TestListPlansAmongManyTenants runs the plan checks of TestMessagesAfterSeededList on a
// table where the seeded environment is the largest of several hundred, as a shared
// database is: InnoDB's statistics then give an environment a few rows. The pages'
// plans must not lean on them: a page that took them instead of the index's own
// estimate (eq_range_index_dive_limit, tried) and named no index read the largest
// environment's deep pages by whichever of its indexes MariaDB liked, sorting them all.
func TestListPlansAmongManyTenants(t *testing.T) {
	s := dbtest.Open(t, store.DialectMySQL)
	stats := dbtest.Seed(t, s, seed.Options{Seed: 11, Messages: 3000, Subscribers: 40, Templates: 8})
	env := stats.EnvironmentID
	var columns []string
	if err := s.DB().Raw(`SELECT column_name FROM information_schema.columns
		WHERE table_schema = ` + schemaOf(t, s, "messages") + ` AND table_name = 'messages' ORDER BY ordinal_position`).Scan(&columns).Error; err != nil {
		t.Fatal(err)
	}
	// Copies of 2,000 of its messages, spread over 1,000 other environments.
	selected := make([]string, len(columns))
	for i, c := range columns {
		switch c {
		case "id":
			selected[i] = "LEFT(MD5(CONCAT(id, 'crowd')), 24)"
		case "environment_id":
			selected[i] = "LPAD(CONV(1 + CRC32(id) % 1000, 10, 16), 24, 'c')"
		default:
			selected[i] = "`" + c + "`"
		}
		columns[i] = "`" + c + "`"
	}
	err := s.DB().Exec("INSERT INTO messages ("+strings.Join(columns, ", ")+") SELECT "+strings.Join(selected, ", ")+
		" FROM messages WHERE environment_id = ? ORDER BY id LIMIT 2000", env).Error
	if err != nil {
		t.Fatal(err)
	}
	var tenants int
	if err := s.DB().Raw("SELECT COUNT(DISTINCT environment_id) FROM messages").Scan(&tenants).Error; err != nil {
		t.Fatal(err)
	}
	if tenants < 500 { // 2,000 copies over 1,000 ids leave about 870 of them
		t.Fatalf("%d environments, want the seeded one among hundreds", tenants)
	}
	testPlans(t, s, env)
}
