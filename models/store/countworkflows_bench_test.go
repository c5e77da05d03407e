package store_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"

	"messages/models"
	"messages/models/dbtest"
	"messages/models/store"
)

// BenchmarkWorkflowCountersWriteCost is what migration 15 (the counters by workflow and
// month, and the channel index holding the workflow and the state's columns) adds to
// writes on MariaDB: three databases side by side, one as migrated, one with the index as
// it was (old-index: what the counters alone cost) and one as the build before (the
// index as it was, the three triggers of migration 15 dropped), each given
// BULK_MESSAGES (default 20,000) more in-app messages of one subscriber, of four
// workflows, in the store's batches of 5,000 (as import writes them: insert), then all of
// the subscriber's messages read and then unread again, in the store's batches of 500 (a
// bulk job, twice: read-all-and-back), in alternation, three rounds, so the machine's
// load falls on both alike.
// BENCHMARKS.md ("Bulk state changes") has the command and the figures.
func BenchmarkWorkflowCountersWriteCost(b *testing.B) {
	n := 20_000
	if v, err := strconv.Atoi(os.Getenv("BULK_MESSAGES")); err == nil && v > 0 {
		n = v
	}
	type side struct {
		name string
		f    *countFixture
	}
	var sides []*side
	for _, name := range []string{"migrated", "old-index", "before"} {
		s := dbtest.Open(b, store.DialectMySQL)
		tn := dbtest.NewTenant(b, s, "bulk")
		sides = append(sides, &side{name: name, f: &countFixture{s: s, tn: tn, subs: map[string]*models.Subscriber{"alice": tn.Subscriber(b, "alice")}}})
	}
	oldIndex := "ALTER TABLE messages DROP KEY messages_environment_subscriber_channel_created," +
		" ADD KEY messages_environment_subscriber_channel_created (environment_id, subscriber_id, channel, created_at, id)"
	for i, sqls := range [][]string{1: {oldIndex}, 2: {oldIndex, "DROP TRIGGER messages_workflow_count_insert",
		"DROP TRIGGER messages_workflow_count_update", "DROP TRIGGER messages_workflow_count_delete"}} {
		for _, sql := range sqls {
			if err := sides[i].f.s.DB().Exec(sql).Error; err != nil {
				b.Fatal(err)
			}
		}
	}
	ctx := context.Background()
	inApp := models.ChannelInApp
	for round := range 3 {
		for _, sd := range sides {
			b.Run(fmt.Sprintf("%s/insert", sd.name), func(b *testing.B) {
				for range b.N {
					for done := 0; done < n; done += 5000 {
						var msgs []*models.Message
						for i := range min(5000, n-done) {
							m := sd.f.message("alice", models.ChannelInApp)
							m.TemplateID = fmt.Sprintf("workflow-%d", i%4)
							msgs = append(msgs, m)
						}
						sd.f.write(b, store.ConflictFail, msgs...)
					}
				}
			})
			b.Run(fmt.Sprintf("%s/read-all-and-back", sd.name), func(b *testing.B) {
				for range b.N {
					for _, read := range []bool{true, false} {
						out, err := sd.f.s.ChangeState(ctx, sd.f.tn.Env.ID, models.StateTarget{SubscriberID: "alice", Channel: &inApp}, models.StateChange{Read: flag(read)})
						if err != nil || out.Changed != n*(round+1) {
							b.Fatalf("changed %d of %d: %v", out.Changed, n*(round+1), err)
						}
					}
				}
			})
		}
	}
	checkWorkflowCounters(b, sides[0].f.s, sides[0].f.tn.Env.ID)
}
