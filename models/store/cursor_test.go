package store_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"messages/models"
	"messages/models/dbtest"
	"messages/models/seed"
	"messages/models/store"
)

// after calls MessagesAfter, failing the test on error.
func after(t testing.TB, s *store.Store, environmentID string, f models.ListFilter, from *models.Keyset, first int, o models.ListOptions) *models.MessagesConnectionPage {
	t.Helper()
	page, err := s.MessagesAfter(context.Background(), environmentID, f, from, first, o)
	if err != nil {
		t.Fatalf("MessagesAfter(%+v, %+v, %d): %v", f, from, first, err)
	}
	return page
}

// walkPage is what a test checks of one page of a cursor walk.
type walkPage struct {
	Len         int
	HasNextPage bool
	TotalCount  int
}

// walk pages through a list from the start with pages of first messages, each page
// starting after the last message of the one before, until a page says nothing follows.
// It returns the ids in the order walked and what each page said.
func walk(t testing.TB, s *store.Store, environmentID string, f models.ListFilter, first int, o models.ListOptions) ([]string, []walkPage) {
	t.Helper()
	ids := []string{}
	var pages []walkPage
	var from *models.Keyset
	for {
		page := after(t, s, environmentID, f, from, first, o)
		pages = append(pages, walkPage{Len: len(page.Messages), HasNextPage: page.HasNextPage, TotalCount: page.TotalCount})
		for _, m := range page.Messages {
			ids = append(ids, m.ID)
		}
		if !page.HasNextPage {
			return ids, pages
		}
		if len(pages) > 10_000 {
			t.Fatal("the walk does not end")
		}
		k := models.KeysetOf(page.Messages[len(page.Messages)-1])
		from = &k
	}
}

// wantPages is what a walk over n messages with pages of first must say: full pages, a
// last page holding the rest (a single empty page when n is 0), hasNextPage on all but
// the last, and n as the total.
func wantPages(n, first int) []walkPage {
	out := []walkPage{}
	for left := n; ; left -= first {
		out = append(out, walkPage{Len: min(left, first), HasNextPage: left > first, TotalCount: n})
		if left <= first {
			return out
		}
	}
}

// listAll returns the ids of every message ListMessages lists for f, in its order.
func listAll(t testing.TB, s *store.Store, environmentID string, f models.ListFilter) []string {
	t.Helper()
	ids := []string{}
	for number := 0; ; number++ {
		page := list(t, s, environmentID, f, models.Page{Number: number, Size: models.MaxPageSize}, models.ListOptions{})
		for _, m := range page.Data {
			ids = append(ids, m.ID)
		}
		if !page.HasMore {
			return ids
		}
	}
}

// TestMessagesAfterWalksEveryPage walks lists where groups of four messages share one
// createdAt and ids are in no particular order of insertion, with every filter shape:
// every page size must give exactly the order of ListMessages, with no duplicate and no
// gap, and say exactly whether more follows.
func TestMessagesAfterWalksEveryPage(t *testing.T) {
	const total = 30
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		tn := dbtest.NewTenant(t, s, "walk")
		other := dbtest.NewTenant(t, s, "other")
		subs := []*models.Subscriber{tn.Subscriber(t, "sub-0"), tn.Subscriber(t, "sub-1"), tn.Subscriber(t, "sub-2")}
		tpl := tn.Template(t, "walk")
		channels := []models.ChannelType{models.ChannelInApp, models.ChannelEmail, models.ChannelSMS, models.ChannelInApp}
		for i := range total {
			tn.Message(t, subs[i%3], tpl, func(m *models.Message) {
				m.ID = scrambledID(i)
				m.CreatedAt = models.NewTime(dbtest.Base.Add(time.Duration(i/4) * time.Second))
				m.Channel = channels[i%len(channels)]
				m.TransactionID = fmt.Sprintf("txn-%d", i%5)
			})
		}
		// The other tenant's messages share the timestamps, subscriber and transaction ids.
		otherSub, otherTpl := other.Subscriber(t, "sub-1"), other.Template(t, "walk")
		for i := range 8 {
			other.Message(t, otherSub, otherTpl, func(m *models.Message) {
				m.ID = scrambledID(1000 + i)
				m.CreatedAt = models.NewTime(dbtest.Base.Add(time.Duration(i) * time.Second))
				m.TransactionID = "txn-1"
			})
		}

		filters := []struct {
			name   string
			filter models.ListFilter
		}{
			{"all", models.ListFilter{}},
			{"channel", models.ListFilter{Channel: channel(models.ChannelInApp)}},
			{"channelWithoutMessages", models.ListFilter{Channel: channel(models.ChannelPush)}},
			{"subscriber", models.ListFilter{SubscriberID: ptr("sub-1")}},
			{"subscriberAndChannel", models.ListFilter{SubscriberID: ptr("sub-1"), Channel: channel(models.ChannelInApp)}},
			{"transactionIds", models.ListFilter{TransactionIDs: []string{"txn-1", "txn-3"}}},
			{"everyFilter", models.ListFilter{SubscriberID: ptr("sub-2"), Channel: channel(models.ChannelInApp), TransactionIDs: []string{"txn-0", "txn-1", "txn-2"}}},
			{"unknownSubscriber", models.ListFilter{SubscriberID: ptr("sub-nobody")}},
		}
		for _, fl := range filters {
			want := listAll(t, s, tn.Env.ID, fl.filter)
			for _, first := range []int{1, 3, 7, 1000} {
				t.Run(fmt.Sprintf("cursor200Walk_%s_first%d", fl.name, first), func(t *testing.T) {
					got, pages := walk(t, s, tn.Env.ID, fl.filter, first, models.ListOptions{Count: true})
					if diff := cmp.Diff(want, got); diff != "" {
						t.Errorf("walked ids (-ListMessages +walk):\n%s", diff)
					}
					if diff := cmp.Diff(wantPages(len(want), first), pages); diff != "" {
						t.Errorf("pages (-want +got):\n%s", diff)
					}
				})
			}
		}

		t.Run("cursor200NothingAfterTheLast", func(t *testing.T) {
			all := after(t, s, tn.Env.ID, models.ListFilter{}, nil, 1000, models.ListOptions{})
			last := models.KeysetOf(all.Messages[len(all.Messages)-1])
			page := after(t, s, tn.Env.ID, models.ListFilter{}, &last, 10, models.ListOptions{Count: true})
			if diff := cmp.Diff(walkPage{TotalCount: total}, walkPage{Len: len(page.Messages), HasNextPage: page.HasNextPage, TotalCount: page.TotalCount}); diff != "" {
				t.Errorf("page after the last message (-want +got):\n%s", diff)
			}
		})

		t.Run("cursor200PositionNeedNotExist", func(t *testing.T) {
			// A position between two messages of the same createdAt: the message it named
			// may have been deleted since.
			all := listAll(t, s, tn.Env.ID, models.ListFilter{})
			k := models.Keyset{CreatedAt: models.NewTime(dbtest.Base.Add(7 * time.Second)), ID: "8"}
			var want []string
			for _, id := range all {
				m := loadOne(t, s, id)
				if m.CreatedAt.Before(k.CreatedAt.Time) || (m.CreatedAt.Equal(k.CreatedAt.Time) && id < k.ID) {
					want = append(want, id)
				}
			}
			page := after(t, s, tn.Env.ID, models.ListFilter{}, &k, 1000, models.ListOptions{})
			var got []string
			for _, m := range page.Messages {
				got = append(got, m.ID)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("ids after %+v (-want +got):\n%s", k, diff)
			}
		})

		t.Run("cursor200OnlyOwnMessages", func(t *testing.T) {
			got, _ := walk(t, s, other.Env.ID, models.ListFilter{TransactionIDs: []string{"txn-1"}}, 3, models.ListOptions{})
			if diff := cmp.Diff(listAll(t, s, other.Env.ID, models.ListFilter{}), got); diff != "" {
				t.Errorf("other tenant's walk (-want +got):\n%s", diff)
			}
		})
	})
}

func wire(t testing.TB, msgs []*models.Message) []byte {
	t.Helper()
	b, err := json.Marshal(msgs)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func idsOf(msgs []*models.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.ID
	}
	return out
}

func loadOne(t testing.TB, s *store.Store, id string) *models.Message {
	t.Helper()
	var m models.Message
	if err := s.DB().Where("id = ?", id).Take(&m).Error; err != nil {
		t.Fatal(err)
	}
	return &m
}

// TestMessagesAfterSeededList walks 3,000 realistic messages: pages of 1,000 must be
// exactly ListMessages' pages of 1,000, and pages of 1,000 and small pages over every
// filter shape must give its order. Then it checks the query plans (testPlans) on the
// same data.
func TestMessagesAfterSeededList(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		stats := dbtest.Seed(t, s, seed.Options{Seed: 11, Messages: 3000, Subscribers: 40, Templates: 8})
		env := stats.EnvironmentID
		shapes := seededShapes(t, s, env)

		t.Run("cursor200PagesOfAThousandAreListPages", func(t *testing.T) {
			var from *models.Keyset
			for number := 0; ; number++ {
				want := list(t, s, env, models.ListFilter{}, models.Page{Number: number, Size: 1000}, models.Everything)
				got := after(t, s, env, models.ListFilter{}, from, 1000, models.Everything)
				// Compared in their wire form: cmp over 1,000 records with their embedded
				// subscribers and templates takes seconds.
				if !bytes.Equal(wire(t, want.Data), wire(t, got.Messages)) {
					t.Fatalf("page %d differs from ListMessages' (ids -ListMessages +MessagesAfter):\n%s", number, cmp.Diff(idsOf(want.Data), idsOf(got.Messages)))
				}
				if got.HasNextPage != want.HasMore || got.TotalCount != want.TotalCount || want.TotalCount != 3000 {
					t.Fatalf("page %d: hasNextPage %v, totalCount %d; ListMessages says hasMore %v, totalCount %d (of 3000)",
						number, got.HasNextPage, got.TotalCount, want.HasMore, want.TotalCount)
				}
				if !got.HasNextPage {
					if number != 2 {
						t.Fatalf("the walk ended at page %d, want 2", number)
					}
					break
				}
				k := models.KeysetOf(got.Messages[len(got.Messages)-1])
				from = &k
			}
		})

		for _, sh := range shapes {
			want := listAll(t, s, env, sh.filter)
			if len(want) < 10 {
				t.Fatalf("shape %s matches %d messages; the test needs more", sh.name, len(want))
			}
			// Small pages cross many pages' worth of boundaries; at most about fifty of them
			// keep the test quick on SQLite under the race detector.
			for _, first := range []int{max(7, len(want)/50), 1000} {
				t.Run(fmt.Sprintf("cursor200Walk_%s_first%d", sh.name, first), func(t *testing.T) {
					got, pages := walk(t, s, env, sh.filter, first, models.ListOptions{})
					if diff := cmp.Diff(want, got); diff != "" {
						t.Errorf("walked ids (-ListMessages +walk):\n%s", diff)
					}
					if len(pages) != (len(want)+first-1)/first {
						t.Errorf("%d pages for %d messages in pages of %d", len(pages), len(want), first)
					}
				})
			}
		}
		testPlans(t, s, env)
	})
}

// shape is one filter shape over seeded data and the index that serves it on MySQL.
type shape struct {
	name   string
	filter models.ListFilter
	index  string
	// sorts says the ids must be sorted after the index read: several transaction ids
	// are several ranges of their index.
	sorts bool
}

// seededShapes returns a filter of each shape over a seeded environment: the busiest
// subscriber and the transaction ids of the first twenty messages.
func seededShapes(t testing.TB, s *store.Store, env string) []shape {
	t.Helper()
	var sub string
	if err := s.DB().Raw(`SELECT s.subscriber_id FROM subscribers s JOIN messages m ON m.subscriber_id = s.id
		WHERE m.environment_id = ? GROUP BY s.subscriber_id ORDER BY COUNT(*) DESC, s.subscriber_id LIMIT 1`, env).Scan(&sub).Error; err != nil {
		t.Fatal(err)
	}
	var txns []string
	if err := s.DB().Raw(`SELECT transaction_id FROM messages WHERE environment_id = ? ORDER BY created_at, id LIMIT 20`, env).
		Scan(&txns).Error; err != nil {
		t.Fatal(err)
	}
	return []shape{
		{"all", models.ListFilter{}, "messages_environment_created", false},
		{"channel", models.ListFilter{Channel: channel(models.ChannelEmail)}, "messages_environment_channel_created", false},
		{"subscriber", models.ListFilter{SubscriberID: &sub}, "messages_environment_subscriber_created", false},
		{"subscriberAndChannel", models.ListFilter{SubscriberID: &sub, Channel: channel(models.ChannelInApp)}, "messages_environment_subscriber_channel_created", false},
		{"transactionIds", models.ListFilter{TransactionIDs: txns}, "messages_environment_transaction_created", true},
	}
}

// TestMessagesAfterQueryCount checks that a page deep in the list costs the same
// statements as the first, that the count runs only when asked for and not derivable,
// and that a page with its embedded records is one statement once its templates are
// cached.
func TestMessagesAfterQueryCount(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		stats := dbtest.Seed(t, s, seed.Options{Seed: 3, Messages: 700, Subscribers: 20, Templates: 4})
		env := stats.EnvironmentID
		log := dbtest.RecordStatements(t, s)
		deep := after(t, s, env, models.ListFilter{}, nil, 500, models.ListOptions{})
		k := models.KeysetOf(deep.Messages[499])
		for _, sh := range seededShapes(t, s, env) {
			t.Run("cursor200DeepPageCostsTheFirstPage_"+sh.name, func(t *testing.T) {
				log.Take()
				first := after(t, s, env, sh.filter, nil, 3, models.Everything)
				firstCost := dbtest.CountStatements(log.Take())
				later := after(t, s, env, sh.filter, &k, 3, models.Everything)
				laterCost := dbtest.CountStatements(log.Take())
				if len(first.Messages) != 3 || len(later.Messages) == 0 {
					t.Fatalf("pages of %d and %d messages; the test needs fuller pages", len(first.Messages), len(later.Messages))
				}
				// Both pages have more after them, or the deep one has none and still counts.
				// Subscribers and templates come from the caches once read: a page reads
				// those it has not seen yet, one statement for each kind.
				for _, c := range []*dbtest.StatementCounts{&firstCost, &laterCost} {
					if c.Subscribers > 1 || c.Templates > 1 {
						t.Errorf("a page read subscribers in %d statements and templates in %d, want at most 1 each", c.Subscribers, c.Templates)
					}
					c.All -= c.Count + c.Subscribers + c.Templates
					c.Count, c.Subscribers, c.Templates = 0, 0, 0
				}
				if diff := cmp.Diff(firstCost, laterCost); diff != "" {
					t.Errorf("statements (-first page +page after 500 messages):\n%s", diff)
				}
				if firstCost.All != 1 {
					t.Errorf("a page costs %d statements besides the count, subscribers and templates, want 1", firstCost.All)
				}
			})
		}

		// Every template is cached once a page showed it.
		after(t, s, env, models.ListFilter{}, nil, 700, models.Everything)
		tests := []struct {
			name    string
			from    *models.Keyset
			first   int
			options models.ListOptions
			want    dbtest.StatementCounts
		}{
			{"cursor200CountsWhenAsked", &k, 10, models.Everything, dbtest.StatementCounts{All: 2, Count: 1}},
			{"cursor200CountsOnTheFirstPageWithMore", nil, 10, models.ListOptions{Count: true}, dbtest.StatementCounts{All: 2, Count: 1}},
			{"cursor200NoCountWhenTheFirstPageIsAll", nil, 1000, models.ListOptions{Count: true}, dbtest.StatementCounts{All: 1}},
			{"cursor200NoCountWhenNotAsked", &k, 10, models.ListOptions{Subscribers: true, Templates: true}, dbtest.StatementCounts{All: 1}},
			{"cursor200OnlyTheMessagesWhenNothingAsked", &k, 10, models.ListOptions{}, dbtest.StatementCounts{All: 1}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				log.Take()
				page := after(t, s, env, models.ListFilter{}, tt.from, tt.first, tt.options)
				if tt.options.Count && page.TotalCount != 700 {
					t.Errorf("totalCount = %d, want 700", page.TotalCount)
				}
				if diff := cmp.Diff(tt.want, dbtest.CountStatements(log.Take())); diff != "" {
					t.Errorf("statements (-want +got):\n%s", diff)
				}
			})
		}
	})
}

// testPlans checks, with EXPLAIN, that the rows of a page come from a scan of the index of
// the filter's shape (on MySQL, also that only transaction ids need a sort): for a first
// page, which reads its rows in one statement, and for a page from a position deep in the
// list and a page at an offset, whose ids come from a range of the index alone before
// their rows are joined by primary key.
func testPlans(t *testing.T, s *store.Store, env string) {
	if s.Vitess() {
		if _, err := dbtest.ShardDB(t, dbtest.ShardOf(t, s, env)).Exec("ANALYZE TABLE messages"); err != nil {
			t.Fatal(err)
		}
	} else if s.Dialect() == store.DialectMySQL {
		if err := s.DB().Exec("ANALYZE TABLE messages").Error; err != nil {
			t.Fatal(err)
		}
	}
	queries := recordQueries(t, s)
	mid := after(t, s, env, models.ListFilter{}, nil, 1500, models.ListOptions{})
	k := models.KeysetOf(mid.Messages[1499])
	embeds := models.ListOptions{Subscribers: true, Templates: true}
	for _, sh := range seededShapes(t, s, env) {
		for _, from := range []*models.Keyset{nil, &k} {
			name := "first"
			if from != nil {
				name = "deep"
			}
			t.Run(fmt.Sprintf("cursorPlan_%s_%s", sh.name, name), func(t *testing.T) {
				queries.take()
				after(t, s, env, sh.filter, from, 10, embeds)
				if from == nil {
					page := queries.leadingPage(t)
					if s.Dialect() == store.DialectMySQL {
						checkMySQLPlan(t, s, page, sh, false, false)
					} else {
						checkSQLitePlan(t, s, page, sh, false, false)
					}
					return
				}
				ids, page := queries.pageQueries(t)
				if !strings.Contains(ids.SQL, "created_at <= ? AND (created_at < ? OR id < ?)") {
					t.Errorf("the position is not the condition both databases bound the scan by:\n%s", ids.SQL)
				}
				if s.Dialect() == store.DialectMySQL {
					checkMySQLPlan(t, s, ids, sh, true, true)
					checkMySQLJoin(t, s, page)
				} else {
					checkSQLitePlan(t, s, ids, sh, true, true)
				}
			})
		}
		t.Run("offsetPlan_"+sh.name, func(t *testing.T) {
			queries.take()
			if _, _, err := s.ListMessagesFrom(context.Background(), env, sh.filter, 20, 10, embeds); err != nil {
				t.Fatal(err)
			}
			ids, page := queries.pageQueries(t)
			if s.Dialect() == store.DialectMySQL {
				checkMySQLPlan(t, s, ids, sh, false, true)
				checkMySQLJoin(t, s, page)
			} else {
				checkSQLitePlan(t, s, ids, sh, false, true)
			}
		})
	}
}

// checkMySQLPlan asserts the EXPLAIN of a query of messages: the shape's index, a range
// scan when a position bounds it, no sort but for several transaction ids, and, when
// covering is set (a query of ids), no row read ("Using index"). The subscriber and
// template versions of a page read in one statement are one primary key lookup per row.
func checkMySQLPlan(t *testing.T, s *store.Store, q query, sh shape, bounded, covering bool) {
	t.Helper()
	// The subscriber filter's subquery reads one row of the unique (environment,
	// subscriber_id) key, which the optimizer resolves to a constant before the scan.
	var scans []map[string]string
	for _, row := range explain(t, s, "EXPLAIN "+q.SQL, q.Vars) {
		switch {
		case row["table"] == "subscribers":
			if row["select_type"] != "SUBQUERY" || row["type"] != "const" {
				t.Errorf("the subscriber lookup is not a constant subquery: %v", row)
			}
			continue
		case row["table"] == "s" || row["table"] == "t":
			if row["select_type"] != "DEPENDENT SUBQUERY" || row["key"] != "PRIMARY" || (row["type"] != "eq_ref" && row["type"] != "const") {
				t.Errorf("a version is not read by primary key for each row: %v", row)
			}
			continue
		}
		scans = append(scans, row)
	}
	if len(scans) != 1 {
		t.Fatalf("EXPLAIN has %d scans of messages, want 1: %v", len(scans), scans)
	}
	plan := scans[0]
	t.Logf("%s: type=%s key=%s key_len=%s rows=%s Extra=%s", sh.name, plan["type"], plan["key"], plan["key_len"], plan["rows"], plan["Extra"])
	if hint := "FROM `messages` USE INDEX (`" + sh.index + "`) WHERE"; !strings.Contains(q.SQL, hint) {
		t.Errorf("the query does not name the filter's index (%s):\n%.300s", hint, q.SQL)
	}
	if plan["key"] != sh.index {
		t.Errorf("key = %q, want %q (plan %v)", plan["key"], sh.index, plan)
	}
	if covering && !strings.Contains(plan["Extra"], "Using index") {
		t.Errorf("Extra = %q, want the index to cover the query (Using index)", plan["Extra"])
	}
	if strings.Contains(plan["Extra"], "temporary") {
		t.Errorf("Extra = %q: a temporary table, want none", plan["Extra"])
	}
	if sorts := strings.Contains(plan["Extra"], "filesort"); sorts != sh.sorts {
		t.Errorf("Extra = %q: filesort %v, want %v", plan["Extra"], sorts, sh.sorts)
	}
	if bounded && plan["type"] != "range" {
		t.Errorf("type = %q, want range: the position must bound the index scan, not filter what it reads", plan["type"])
	}
}

// checkSQLitePlan asserts the query plan of a query of messages: a search bounded by
// created_at when a position is given and, but for several transaction ids, of the
// shape's index (covering the query when covering is set) with no sort. For several transaction ids SQLite,
// having no statistics, reads messages_environment_created in order and checks each
// row's transaction id instead of sorting (ListMessages gets the same plan); that is
// logged, not asserted.
func checkSQLitePlan(t *testing.T, s *store.Store, q query, sh shape, bounded, covering bool) {
	t.Helper()
	var details []string
	for _, row := range explain(t, s, "EXPLAIN QUERY PLAN "+q.SQL, q.Vars) {
		details = append(details, row["detail"])
	}
	plan := strings.Join(details, "; ")
	t.Logf("%s: %s", sh.name, plan)
	if bounded && !strings.Contains(plan, "created_at<?") {
		t.Errorf("plan %q, want the position to bound the search (created_at<?)", plan)
	}
	if sh.sorts {
		return
	}
	want := "SEARCH messages USING INDEX " + sh.index + " ("
	if covering {
		want = "SEARCH messages USING COVERING INDEX " + sh.index + " ("
	}
	if !strings.Contains(plan, want) {
		t.Errorf("plan %q, want %q", plan, want)
	}
	if strings.Contains(plan, "TEMP B-TREE") {
		t.Errorf("plan %q sorts, want the order of the index", plan)
	}
}

// explain runs an EXPLAIN statement and returns its rows as column name to text.
// On Vitess it runs on the shard of the statement's environment (its first argument
// that is an id), as vtgate would route the statement itself: vtgate sends an EXPLAIN to
// a shard of its choosing.
func explain(t *testing.T, s *store.Store, statement string, vars []any) []map[string]string {
	t.Helper()
	db, err := s.DB().DB()
	if err != nil {
		t.Fatal(err)
	}
	if s.Vitess() {
		for _, v := range vars {
			if id, ok := v.(string); ok && models.IsID(id) {
				db = dbtest.ShardDB(t, dbtest.ShardOf(t, s, id))
				break
			}
		}
	}
	rows, err := db.Query(statement, vars...)
	if err != nil {
		t.Fatalf("%s: %v", statement, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		row := map[string]string{}
		for i, c := range cols {
			row[c] = vals[i].String
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// query is one SELECT the store ran, with its arguments.
type query struct {
	Table string
	SQL   string
	Vars  []any
}

// queryLog records the SELECTs a store runs with their arguments, so a test can EXPLAIN
// exactly what the store asked.
type queryLog struct {
	mu   sync.Mutex
	list []query
}

func recordQueries(t testing.TB, s *store.Store) *queryLog {
	t.Helper()
	l := &queryLog{}
	record := func(db *gorm.DB) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.list = append(l.list, query{Table: db.Statement.Table, SQL: db.Statement.SQL.String(), Vars: append([]any(nil), db.Statement.Vars...)})
	}
	// A page's statement is read row by row (Rows), which GORM runs as a Row callback.
	cb := s.DB().Callback()
	for _, err := range []error{
		cb.Query().After("gorm:query").Register("test:record_queries", record),
		cb.Row().After("gorm:row").Register("test:record_queries", record),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	return l
}

func (l *queryLog) take() []query {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.list
	l.list = nil
	return out
}

// pageQueries returns the two queries of a page: the one that picks message ids in list
// order, a subquery GORM builds (and the log records) on its own, and the statement that
// joins the rows, subscribers and template versions to it.
func (l *queryLog) pageQueries(t *testing.T) (ids, page query) {
	t.Helper()
	var picks, pages []query
	for _, q := range l.take() {
		switch {
		case strings.HasPrefix(q.SQL, "SELECT `id` FROM `messages`") && strings.Contains(q.SQL, "ORDER BY"):
			picks = append(picks, q)
		case strings.Contains(q.SQL, "JOIN (SELECT `id` FROM `messages`"):
			pages = append(pages, q)
		}
	}
	if len(picks) != 1 || len(pages) != 1 {
		t.Fatalf("found %d id queries and %d page statements, want 1 each: %v %v", len(picks), len(pages), picks, pages)
	}
	return picks[0], pages[0]
}

// leadingPage returns the one statement of a page read without an offset: its rows in
// list order, with the versions of their subscribers and templates.
func (l *queryLog) leadingPage(t *testing.T) query {
	t.Helper()
	var pages []query
	for _, q := range l.take() {
		if strings.HasPrefix(q.SQL, "SELECT messages.id,") && strings.Contains(q.SQL, "ORDER BY") {
			pages = append(pages, q)
		}
	}
	if len(pages) != 1 {
		t.Fatalf("found %d page statements, want 1: %v", len(pages), pages)
	}
	if !strings.Contains(pages[0].SQL, "AS subscriber_version") || !strings.Contains(pages[0].SQL, "AS template_version") {
		t.Errorf("the page statement does not read the versions: %s", pages[0].SQL)
	}
	return pages[0]
}

// checkMySQLJoin asserts that the page statement reads each picked row by primary key
// and sorts nothing: sorting joined rows with their LONGTEXT columns takes an on-disk
// temporary table.
func checkMySQLJoin(t *testing.T, s *store.Store, q query) {
	t.Helper()
	if !strings.Contains(q.SQL, "FROM `messages` FORCE INDEX (PRIMARY) JOIN (SELECT") {
		t.Errorf("the page statement does not name the primary key it reads the rows by:\n%.300s", q.SQL)
	}
	for _, row := range explain(t, s, "EXPLAIN "+q.SQL, q.Vars) {
		if row["select_type"] != "PRIMARY" {
			continue
		}
		if row["table"] == "messages" && (row["key"] != "PRIMARY" || row["type"] != "eq_ref") {
			t.Errorf("the page's rows are not read by primary key: %v", row)
		}
		if strings.Contains(row["Extra"], "temporary") || strings.Contains(row["Extra"], "filesort") {
			t.Errorf("the page statement sorts its joined rows: %v", row)
		}
	}
}
