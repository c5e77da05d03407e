package store_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"messages/models"
	"messages/models/dbtest"
	"messages/models/store"
)

// workflowKey is one counter of message_workflow_counts, summed over the shards.
type workflowKey struct {
	Subscriber, Channel, Template string
	Month                         int
	State                         int
}

// checkWorkflowCounters compares every counter by workflow and month of an environment
// (message_workflow_counts, summed over the shards) with the messages themselves,
// grouped in Go: the month from created_at in UTC, the state from the flags, spelled
// apart from the triggers' SQL.
func checkWorkflowCounters(t testing.TB, s *store.Store, env string) {
	t.Helper()
	var rows []struct {
		SubscriberID, Channel, TemplateID, Severity string
		CreatedAt                                   time.Time
		Read, Seen, Archived                        bool
		SnoozedUntil                                *time.Time
	}
	if err := s.DB().Raw("SELECT subscriber_id, channel, template_id, severity, created_at, `read`, seen, archived, snoozed_until"+
		" FROM messages WHERE environment_id = ?", env).Scan(&rows).Error; err != nil {
		t.Fatal(err)
	}
	want := map[workflowKey]int64{}
	for _, m := range rows {
		if m.SubscriberID == "" {
			continue // no subscriber's count matches it
		}
		state := 0
		for bit, on := range []bool{m.Read, m.Seen, m.Archived, m.SnoozedUntil != nil} {
			if on {
				state |= 1 << bit
			}
		}
		state += 16 * map[string]int{"low": 1, "medium": 2, "high": 3}[m.Severity]
		at := m.CreatedAt.UTC()
		want[workflowKey{m.SubscriberID, m.Channel, m.TemplateID, at.Year()*100 + int(at.Month()), state}]++
	}
	var counters []struct {
		SubscriberID, Channel, TemplateID string
		CreatedMonth, State               int
		N                                 int64
	}
	if err := s.DB().Raw(`SELECT subscriber_id, channel, template_id, created_month, state, SUM(n) AS n
		FROM message_workflow_counts WHERE environment_id = ? GROUP BY 1, 2, 3, 4, 5`, env).Scan(&counters).Error; err != nil {
		t.Fatal(err)
	}
	got := map[workflowKey]int64{}
	for _, c := range counters {
		if c.N != 0 {
			got[workflowKey{c.SubscriberID, c.Channel, c.TemplateID, c.CreatedMonth, c.State}] = c.N
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the counters by workflow and month differ from the messages (-messages +counters):\n%s", diff)
	}
}

// Counts by workflow and creation range over messages spread across more than a year:
// every range shape (open at either end, on month boundaries, inside one month, across
// the new year, empty, ends at a message's own created_at) is exact for a subscriber
// in one statement, whichever end of a month it counts from, after plain-SQL moves of
// created_at, template_id and channel.
func TestCountEachByWorkflowAndMonth(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		f := newCountFixture(t, s, "months", "alice", "bob")
		templates := []*models.Template{f.tn.Template(t, "x"), f.tn.Template(t, "y"), f.tn.Template(t, "z")}
		rng := rand.New(rand.NewPCG(14, 1))
		start := time.Date(2024, 11, 3, 5, 0, 0, 0, time.UTC)
		var msgs []*models.Message
		for i := range 300 {
			sub, ch := "alice", models.ChannelInApp
			switch i % 7 {
			case 5:
				sub = "bob"
			case 6:
				ch = models.ChannelEmail
			}
			m := f.message(sub, ch)
			created := start.Add(time.Duration(i) * 31 * time.Hour)
			if i%25 == 0 {
				created = time.Date(created.Year(), created.Month(), 1, 0, 0, 0, 0, time.UTC) // on a month's first instant
			}
			m.CreatedAt = models.NewTime(created)
			m.ID = models.NewID(created)
			m.TemplateID = templates[rng.IntN(len(templates))].ID
			m.Read, m.Seen, m.Archived = rng.IntN(2) == 0, rng.IntN(2) == 0, rng.IntN(5) == 0
			m.Severity = []models.Severity{"", models.SeverityHigh, models.SeverityLow}[rng.IntN(3)]
			if rng.IntN(6) == 0 {
				until := models.NewTime(start.Add(time.Hour))
				m.SnoozedUntil = &until
			}
			msgs = append(msgs, m)
		}
		f.write(t, store.ConflictFail, msgs...)
		// Another writer moves a message to another month and workflow, one with no
		// workflow, and one to another channel.
		f.exec(t, "UPDATE messages SET created_at = ?, template_id = ? WHERE id = ?", models.NewTime(time.Date(2025, 7, 9, 0, 0, 0, 0, time.UTC)), templates[0].ID, msgs[3].ID)
		f.exec(t, "UPDATE messages SET template_id = '' WHERE id = ?", msgs[4].ID)
		f.exec(t, "UPDATE messages SET channel = 'chat' WHERE id = ?", msgs[7].ID)
		checkWorkflowCounters(t, s, f.tn.Env.ID)

		at := func(tm time.Time) *models.Time { v := models.NewTime(tm); return &v }
		bound := func() *models.Time {
			switch rng.IntN(6) {
			case 0:
				return nil
			case 1: // a month's first instant
				return at(time.Date(2024, time.Month(11+rng.IntN(16)), 1, 0, 0, 0, 0, time.UTC))
			case 2: // a message's own created_at
				return &msgs[rng.IntN(len(msgs))].CreatedAt
			case 3: // the last millisecond of a month
				return at(time.Date(2024, time.Month(12+rng.IntN(14)), 1, 0, 0, 0, 0, time.UTC).Add(-time.Millisecond))
			default:
				return at(start.Add(time.Duration(rng.Int64N(int64(420 * 24 * time.Hour)))))
			}
		}
		maybe := func() *bool {
			if rng.IntN(3) == 0 {
				return nil
			}
			return models.Bool(rng.IntN(2) == 0)
		}
		var filters []models.ListFilter
		for i := range 120 {
			q := models.ListFilter{StateFilter: models.StateFilter{Read: maybe(), Archived: maybe(), Snoozed: maybe()}}
			if i%4 == 1 {
				q.Severities = models.SeveritySet(1 + rng.IntN(15))
			}
			if i%3 != 0 {
				q.TemplateIDs = []string{templates[rng.IntN(3)].ID}
			}
			q.CreatedFrom, q.CreatedTo = bound(), bound()
			if i%10 == 0 { // inside one month
				m := time.Date(2025, time.Month(1+rng.IntN(12)), 1, 0, 0, 0, 0, time.UTC)
				q.CreatedFrom, q.CreatedTo = at(m.Add(time.Duration(rng.IntN(10))*24*time.Hour)), at(m.Add(time.Duration(10+rng.IntN(18))*24*time.Hour))
			}
			filters = append(filters, q)
		}
		inApp := models.ChannelInApp
		alice, nobody := "alice", "nobody"
		log := dbtest.RecordStatements(t, s)
		{
			for _, scope := range []struct {
				subscriber *string
				channel    *models.ChannelType
			}{{&alice, &inApp}, {&alice, nil}, {&nobody, &inApp}} {
				log.Take()
				got, err := s.CountEach(context.Background(), f.tn.Env.ID, scope.subscriber, scope.channel, filters)
				if err != nil {
					t.Fatal(err)
				}
				if n := len(log.Take()); n != 1 {
					t.Errorf("%d filters of one subscriber counted in %d statements, want 1", len(filters), n)
				}
				for i, q := range filters {
					q.SubscriberID, q.Channel = scope.subscriber, scope.channel
					if want := trueCountOf(t, s, f.tn.Env.ID, q); got[i] != want {
						t.Errorf("filter %d %s templates=%v from=%v to=%v: %d, want %d", i, describe(q),
							q.TemplateIDs, fmtTime(q.CreatedFrom), fmtTime(q.CreatedTo), got[i], want)
					}
				}
			}
		}
	})
}

func fmtTime(t *models.Time) string {
	if t == nil {
		return "-"
	}
	return fmt.Sprint(t.UTC().Format(time.RFC3339Nano))
}

// A count reads messages, and so takes a turn (models/service/countscan.go), only where
// the counters do not answer it all: a range that covers a month in part, transaction
// ids, or workflows and ranges across subscribers.
func TestCountReadsRows(t *testing.T) {
	alice := "alice"
	at := func(tm time.Time) *models.Time { v := models.NewTime(tm); return &v }
	month := at(time.Date(2025, 4, 1, 0, 0, 0, 0, time.UTC))
	mid := at(time.Date(2025, 4, 16, 3, 0, 0, 0, time.UTC))
	for _, tt := range []struct {
		name       string
		subscriber *string
		f          models.ListFilter
		want       bool
	}{
		{"countersStates", &alice, models.ListFilter{StateFilter: models.StateFilter{Read: models.Bool(false)}}, false},
		{"countersWorkflows", &alice, models.ListFilter{TemplateIDs: []string{"t"}}, false},
		{"countersFromMonth", &alice, models.ListFilter{TemplateIDs: []string{"t"}, CreatedFrom: month}, false},
		{"rowsFromMidMonth", &alice, models.ListFilter{CreatedFrom: mid}, true},
		{"rowsTo", &alice, models.ListFilter{CreatedTo: month}, true},
		{"rowsTransactions", &alice, models.ListFilter{TransactionIDs: []string{"x"}}, true},
		{"rowsWorkflowsOfAll", nil, models.ListFilter{TemplateIDs: []string{"t"}}, true},
		{"countersStatesOfAll", nil, models.ListFilter{}, false},
	} {
		if got := store.CountReadsRows(tt.subscriber, []models.ListFilter{{}, tt.f}); got != tt.want {
			t.Errorf("%s: reads rows %v, want %v", tt.name, got, tt.want)
		}
	}
}
