package store_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"messages/models"
	"messages/models/dbtest"
	"messages/models/store"
)

// listFixture is tenant A's six messages over two subscribers, three channels and three
// transaction ids, and tenant B's two, which share A's external subscriber id sub-alice
// and A's transaction ids and must never show up in A's lists.
//
//	name  tenant  subscriber  channel  transaction  template
//	a1    A       sub-alice   in_app   txn-a        odd
//	a2    A       sub-alice   email    txn-b        even
//	a3    A       sub-bob     in_app   txn-a        odd
//	a4    A       sub-bob     email    txn-c        even
//	a5    A       sub-alice   in_app   txn-c        odd
//	a6    A       sub-bob     sms      txn-b        even
//	b1    B       sub-alice   in_app   txn-a
//	b2    B       sub-carol   email    txn-c
type listFixture struct {
	a, b        *dbtest.Tenant
	msgs        map[string]*models.Message
	subscribers map[string]*models.Subscriber // by external id, tenant A's
	templates   map[string]*models.Template   // "odd" and "even", tenant A's
	names       map[string]string             // message id to fixture name
}

func newListFixture(t testing.TB, s *store.Store) *listFixture {
	t.Helper()
	f := &listFixture{
		a: dbtest.NewTenant(t, s, "a"), b: dbtest.NewTenant(t, s, "b"),
		msgs: map[string]*models.Message{}, subscribers: map[string]*models.Subscriber{},
		templates: map[string]*models.Template{}, names: map[string]string{},
	}
	for _, id := range []string{"sub-alice", "sub-bob"} {
		f.subscribers[id] = f.a.Subscriber(t, id)
	}
	f.templates["odd"] = f.a.Template(t, "odd")
	f.templates["even"] = f.a.Template(t, "even")
	for i, m := range []struct {
		subscriber string
		channel    models.ChannelType
		txn        string
	}{
		{"sub-alice", models.ChannelInApp, "txn-a"},
		{"sub-alice", models.ChannelEmail, "txn-b"},
		{"sub-bob", models.ChannelInApp, "txn-a"},
		{"sub-bob", models.ChannelEmail, "txn-c"},
		{"sub-alice", models.ChannelInApp, "txn-c"},
		{"sub-bob", models.ChannelSMS, "txn-b"},
	} {
		tpl := f.templates[[]string{"odd", "even"}[i%2]]
		f.add(fmt.Sprintf("a%d", i+1), f.a.Message(t, f.subscribers[m.subscriber], tpl, func(msg *models.Message) {
			msg.Channel, msg.TransactionID = m.channel, m.txn
		}))
	}
	bAlice, bCarol, bTpl := f.b.Subscriber(t, "sub-alice"), f.b.Subscriber(t, "sub-carol"), f.b.Template(t, "b")
	f.add("b1", f.b.Message(t, bAlice, bTpl, func(m *models.Message) { m.Channel, m.TransactionID = models.ChannelInApp, "txn-a" }))
	f.add("b2", f.b.Message(t, bCarol, bTpl, func(m *models.Message) { m.Channel, m.TransactionID = models.ChannelEmail, "txn-c" }))
	return f
}

func (f *listFixture) add(name string, m *models.Message) {
	f.msgs[name] = m
	f.names[m.ID] = name
}

// pageSummary is what a test compares of a page: its messages by fixture name and its
// counters.
type pageSummary struct {
	Names      []string
	TotalCount int
	HasMore    bool
	PageSize   int
	Page       int
}

func summarize(names map[string]string, p *models.MessagesPage) pageSummary {
	out := pageSummary{Names: []string{}, TotalCount: p.TotalCount, HasMore: p.HasMore, PageSize: p.PageSize, Page: p.Page}
	for _, m := range p.Data {
		name, ok := names[m.ID]
		if !ok {
			name = "unknown:" + m.ID
		}
		out.Names = append(out.Names, name)
	}
	return out
}

func channel(c models.ChannelType) *models.ChannelType { return &c }

func list(t testing.TB, s *store.Store, environmentID string, f models.ListFilter, p models.Page, o models.ListOptions) *models.MessagesPage {
	t.Helper()
	page, err := s.ListMessages(context.Background(), environmentID, f, p, o)
	if err != nil {
		t.Fatalf("ListMessages(%+v, %+v): %v", f, p, err)
	}
	return page
}

func TestListMessagesFilters(t *testing.T) {
	alice, bob, carol, nobody := "sub-alice", "sub-bob", "sub-carol", "sub-nobody"
	upperAlice, paddedAlice := "SUB-ALICE", "sub-alice "
	tests := []struct {
		name   string
		filter models.ListFilter
		want   []string
	}{
		{"list200All", models.ListFilter{}, []string{"a6", "a5", "a4", "a3", "a2", "a1"}},
		{"list200EmptyTransactionIdsDoNotFilter", models.ListFilter{TransactionIDs: []string{}}, []string{"a6", "a5", "a4", "a3", "a2", "a1"}},
		{"list200Channel", models.ListFilter{Channel: channel(models.ChannelInApp)}, []string{"a5", "a3", "a1"}},
		{"list200ChannelWithoutMessages", models.ListFilter{Channel: channel(models.ChannelPush)}, []string{}},
		{"list200Subscriber", models.ListFilter{SubscriberID: &alice}, []string{"a5", "a2", "a1"}},
		{"list200OneTransactionId", models.ListFilter{TransactionIDs: []string{"txn-a"}}, []string{"a3", "a1"}},
		{"list200TransactionIds", models.ListFilter{TransactionIDs: []string{"txn-a", "txn-c"}}, []string{"a5", "a4", "a3", "a1"}},
		{"list200ChannelAndSubscriber", models.ListFilter{Channel: channel(models.ChannelInApp), SubscriberID: &alice}, []string{"a5", "a1"}},
		{"list200ChannelAndTransactionIds", models.ListFilter{Channel: channel(models.ChannelEmail), TransactionIDs: []string{"txn-b"}}, []string{"a2"}},
		{"list200SubscriberAndTransactionIds", models.ListFilter{SubscriberID: &bob, TransactionIDs: []string{"txn-a", "txn-b"}}, []string{"a6", "a3"}},
		{"list200ChannelSubscriberAndTransactionIds", models.ListFilter{Channel: channel(models.ChannelInApp), SubscriberID: &bob, TransactionIDs: []string{"txn-a"}}, []string{"a3"}},
		{"list200FiltersThatExcludeEachOther", models.ListFilter{Channel: channel(models.ChannelInApp), SubscriberID: &alice, TransactionIDs: []string{"txn-b"}}, []string{}},
		{"list200UnknownSubscriberIsEmpty", models.ListFilter{SubscriberID: &nobody}, []string{}},
		{"list200UnknownSubscriberWithChannelIsEmpty", models.ListFilter{SubscriberID: &nobody, Channel: channel(models.ChannelInApp)}, []string{}},
		{"list200OtherTenantsSubscriberIsEmpty", models.ListFilter{SubscriberID: &carol}, []string{}},
		{"list200SubscriberIdIsCaseSensitive", models.ListFilter{SubscriberID: &upperAlice}, []string{}},
		{"list200SubscriberIdWithTrailingSpaceIsEmpty", models.ListFilter{SubscriberID: &paddedAlice}, []string{}},
		{"list200UnknownTransactionId", models.ListFilter{TransactionIDs: []string{"txn-zzz"}}, []string{}},
		{"list200TransactionIdIsCaseSensitive", models.ListFilter{TransactionIDs: []string{"TXN-A"}}, []string{}},
		{"list200TransactionIdWithTrailingSpaceIsEmpty", models.ListFilter{TransactionIDs: []string{"txn-a "}}, []string{}},
	}
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		f := newListFixture(t, s)
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				got := summarize(f.names, list(t, s, f.a.Env.ID, tt.filter, models.Page{Number: 0, Size: 100}, models.Everything))
				want := pageSummary{Names: tt.want, TotalCount: len(tt.want), PageSize: 100}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("page (-want +got):\n%s", diff)
				}
			})
		}
	})
}

// TestListMessagesEveryFilterCombination checks every combination of channel, subscriber
// and transaction ids against a filter written independently over the fixture.
func TestListMessagesEveryFilterCombination(t *testing.T) {
	channels := append([]*models.ChannelType{nil}, func() []*models.ChannelType {
		var out []*models.ChannelType
		for _, c := range models.Channels {
			out = append(out, channel(c))
		}
		return out
	}()...)
	subscribers := []*string{nil, ptr("sub-alice"), ptr("sub-bob"), ptr("sub-carol"), ptr("sub-nobody")}
	transactions := [][]string{nil, {"txn-a"}, {"txn-b", "txn-c"}, {"txn-a", "txn-b", "txn-c"}, {"txn-zzz"}}

	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		f := newListFixture(t, s)
		// Tenant A's messages, newest first.
		all := []string{"a6", "a5", "a4", "a3", "a2", "a1"}
		for _, c := range channels {
			for _, sub := range subscribers {
				for _, txns := range transactions {
					filter := models.ListFilter{Channel: c, SubscriberID: sub, TransactionIDs: txns}
					want := pageSummary{Names: []string{}, PageSize: 100}
					for _, name := range all {
						m := f.msgs[name]
						if (c == nil || m.Channel == *c) &&
							(sub == nil || (f.subscribers[*sub] != nil && m.SubscriberID == f.subscribers[*sub].ID)) &&
							(txns == nil || slices.Contains(txns, m.TransactionID)) {
							want.Names = append(want.Names, name)
						}
					}
					want.TotalCount = len(want.Names)
					got := summarize(f.names, list(t, s, f.a.Env.ID, filter, models.Page{Size: 100}, models.Everything))
					if diff := cmp.Diff(want, got); diff != "" {
						t.Errorf("channel=%v subscriber=%v transactionIds=%v: page (-want +got):\n%s", deref(c), deref(sub), txns, diff)
					}
				}
			}
		}
	})
}

func ptr[T any](v T) *T { return &v }

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

func TestListMessagesTenancy(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		f := newListFixture(t, s)
		alice := "sub-alice"
		tests := []struct {
			name   string
			env    string
			filter models.ListFilter
			want   []string
		}{
			{"list200OnlyOwnMessages", f.b.Env.ID, models.ListFilter{}, []string{"b2", "b1"}},
			{"list200SharedSubscriberIdOnlyOwn", f.b.Env.ID, models.ListFilter{SubscriberID: &alice}, []string{"b1"}},
			{"list200SharedTransactionIdOnlyOwn", f.b.Env.ID, models.ListFilter{TransactionIDs: []string{"txn-a", "txn-b"}}, []string{"b1"}},
			{"list200UnknownEnvironmentIsEmpty", models.NewID(time.Now()), models.ListFilter{}, []string{}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				got := summarize(f.names, list(t, s, tt.env, tt.filter, models.Page{Size: 100}, models.Everything))
				want := pageSummary{Names: tt.want, TotalCount: len(tt.want), PageSize: 100}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("page (-want +got):\n%s", diff)
				}
			})
		}
	})
}

func TestListMessagesPageEdges(t *testing.T) {
	alice := "sub-alice"
	tests := []struct {
		name   string
		filter models.ListFilter
		page   models.Page
		want   pageSummary
	}{
		{"list200FirstPageHasMore", models.ListFilter{}, models.Page{Number: 0, Size: 5},
			pageSummary{Names: []string{"a6", "a5", "a4", "a3", "a2"}, TotalCount: 6, HasMore: true}},
		{"list200PageExactlyAllHasNoMore", models.ListFilter{}, models.Page{Number: 0, Size: 6},
			pageSummary{Names: []string{"a6", "a5", "a4", "a3", "a2", "a1"}, TotalCount: 6}},
		{"list200FullLastPageHasNoMore", models.ListFilter{}, models.Page{Number: 1, Size: 3},
			pageSummary{Names: []string{"a3", "a2", "a1"}, TotalCount: 6}},
		{"list200PartLastPageHasNoMore", models.ListFilter{}, models.Page{Number: 1, Size: 4},
			pageSummary{Names: []string{"a2", "a1"}, TotalCount: 6}},
		{"list200MiddlePageHasMore", models.ListFilter{}, models.Page{Number: 4, Size: 1},
			pageSummary{Names: []string{"a2"}, TotalCount: 6, HasMore: true}},
		{"list200LastPageOfOne", models.ListFilter{}, models.Page{Number: 5, Size: 1},
			pageSummary{Names: []string{"a1"}, TotalCount: 6}},
		{"list200PageJustPastTheEndIsEmpty", models.ListFilter{}, models.Page{Number: 2, Size: 3},
			pageSummary{Names: []string{}, TotalCount: 6}},
		{"list200PageFarPastTheEndIsEmpty", models.ListFilter{}, models.Page{Number: 9, Size: 1000},
			pageSummary{Names: []string{}, TotalCount: 6}},
		{"list200FilteredLastPage", models.ListFilter{SubscriberID: &alice}, models.Page{Number: 1, Size: 2},
			pageSummary{Names: []string{"a1"}, TotalCount: 3}},
		{"list200FilteredPastTheEnd", models.ListFilter{SubscriberID: &alice}, models.Page{Number: 3, Size: 2},
			pageSummary{Names: []string{}, TotalCount: 3}},
		{"list200EmptyListFirstPage", models.ListFilter{Channel: channel(models.ChannelChat)}, models.Page{Number: 0, Size: 10},
			pageSummary{Names: []string{}, TotalCount: 0}},
		{"list200EmptyListLaterPage", models.ListFilter{Channel: channel(models.ChannelChat)}, models.Page{Number: 3, Size: 10},
			pageSummary{Names: []string{}, TotalCount: 0}},
	}
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		f := newListFixture(t, s)
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				want := tt.want
				want.Page, want.PageSize = tt.page.Number, tt.page.Size
				got := summarize(f.names, list(t, s, f.a.Env.ID, tt.filter, tt.page, models.Everything))
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("page (-want +got):\n%s", diff)
				}
			})
		}
	})
}

// TestListMessagesWalksEveryPage pages through a list where groups of four messages share
// one createdAt and ids are in no particular order of insertion: every page size must
// give the same newest-first, id-descending sequence, with no duplicate and no gap.
func TestListMessagesWalksEveryPage(t *testing.T) {
	const total = 22
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		tn := dbtest.NewTenant(t, s, "walk")
		subs := []*models.Subscriber{tn.Subscriber(t, "sub-even"), tn.Subscriber(t, "sub-odd")}
		tpl := tn.Template(t, "walk")
		var msgs []*models.Message
		for i := range total {
			msgs = append(msgs, tn.Message(t, subs[i%2], tpl, func(m *models.Message) {
				m.ID = scrambledID(i)
				m.CreatedAt = models.NewTime(dbtest.Base.Add(time.Duration(i/4) * time.Second))
			}))
		}
		names := map[string]string{}
		for i, m := range msgs {
			names[m.ID] = fmt.Sprintf("m%02d", i)
		}
		order := func(keep func(*models.Message) bool) []string {
			var kept []*models.Message
			for _, m := range msgs {
				if keep(m) {
					kept = append(kept, m)
				}
			}
			sort.Slice(kept, func(i, j int) bool {
				a, b := kept[i], kept[j]
				if !a.CreatedAt.Equal(b.CreatedAt.Time) {
					return a.CreatedAt.After(b.CreatedAt.Time)
				}
				return a.ID > b.ID
			})
			out := []string{}
			for _, m := range kept {
				out = append(out, names[m.ID])
			}
			return out
		}
		odd := "sub-odd"
		filters := []struct {
			name   string
			filter models.ListFilter
			want   []string
		}{
			{"all", models.ListFilter{}, order(func(*models.Message) bool { return true })},
			{"subscriber", models.ListFilter{SubscriberID: &odd}, order(func(m *models.Message) bool { return m.SubscriberID == subs[1].ID })},
		}
		for _, fl := range filters {
			for _, size := range []int{1, 3, 7} {
				t.Run(fmt.Sprintf("list200Walk_%s_limit%d", fl.name, size), func(t *testing.T) {
					n := len(fl.want)
					var walked []string
					pages := (n + size - 1) / size
					for number := 0; number <= pages; number++ {
						got := summarize(names, list(t, s, tn.Env.ID, fl.filter, models.Page{Number: number, Size: size}, models.Everything))
						start, end := min(number*size, n), min((number+1)*size, n)
						want := pageSummary{Names: fl.want[start:end], TotalCount: n, HasMore: end < n, PageSize: size, Page: number}
						if diff := cmp.Diff(want, got); diff != "" {
							t.Errorf("page %d (-want +got):\n%s", number, diff)
						}
						walked = append(walked, got.Names...)
					}
					if diff := cmp.Diff(fl.want, walked); diff != "" {
						t.Errorf("pages joined (-want +got):\n%s", diff)
					}
				})
			}
		}
	})
}

// scrambledID returns a valid id whose order has nothing to do with i.
func scrambledID(i int) string {
	sum := sha256.Sum256([]byte(fmt.Sprint(i)))
	return hex.EncodeToString(sum[:12])
}

func TestListMessagesEmbedding(t *testing.T) {
	tests := []struct {
		name                 string
		options              models.ListOptions
		subscriber, template bool
		wantTotal            int
	}{
		{"list200EmbedsSubscriberAndTemplate", models.Everything, true, true, 6},
		{"list200EmbedsSubscriberOnly", models.ListOptions{Count: true, Subscribers: true}, true, false, 6},
		{"list200EmbedsTemplateOnly", models.ListOptions{Count: true, Templates: true}, false, true, 6},
		{"list200EmbedsNothing", models.ListOptions{}, false, false, 0},
	}
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		f := newListFixture(t, s)
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				// A page that does not reach the end, so the count is not free.
				page := list(t, s, f.a.Env.ID, models.ListFilter{}, models.Page{Size: 5}, tt.options)
				if page.TotalCount != tt.wantTotal {
					t.Errorf("totalCount = %d, want %d", page.TotalCount, tt.wantTotal)
				}
				var want []*models.Message
				for _, name := range []string{"a6", "a5", "a4", "a3", "a2"} {
					m := *f.msgs[name]
					if tt.subscriber {
						for _, sub := range f.subscribers {
							if sub.ID == m.SubscriberID {
								m.Subscriber = sub
							}
						}
					}
					if tt.template {
						for _, tpl := range f.templates {
							if tpl.ID == m.TemplateID {
								m.Template = tpl
							}
						}
					}
					want = append(want, &m)
				}
				if diff := cmp.Diff(want, page.Data, dbtest.TimeEqual, dbtest.IgnoreStamps); diff != "" {
					t.Errorf("messages (-want +got):\n%s", diff)
				}
			})
		}
	})
}

// TestListMessagesQueryCount checks that a page costs the same few statements whatever
// its size (subscribers and templates come in one batch each, not one per message), and
// that what ListOptions leaves out costs nothing.
func TestListMessagesQueryCount(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		tn := dbtest.NewTenant(t, s, "many")
		var subs []*models.Subscriber
		for i := range 5 {
			subs = append(subs, tn.Subscriber(t, fmt.Sprintf("sub-%d", i)))
		}
		tpls := []*models.Template{tn.Template(t, "t0"), tn.Template(t, "t1"), tn.Template(t, "t2")}
		// sub-0 has 105 of the 210 messages, so even a page of 100 of its messages has more.
		for i := range 210 {
			sub := subs[0]
			if i%2 == 1 {
				sub = subs[1+i%(len(subs)-1)]
			}
			tn.Message(t, sub, tpls[i%len(tpls)], nil)
		}
		log := dbtest.RecordStatements(t, s)
		sub := "sub-0"

		for _, filter := range []struct {
			name   string
			filter models.ListFilter
			max    int
		}{
			{"unfiltered", models.ListFilter{}, 2},
			{"subscriber", models.ListFilter{SubscriberID: &sub}, 2},
		} {
			t.Run("list200SameStatementsForEverySize_"+filter.name, func(t *testing.T) {
				var counts []dbtest.StatementCounts
				for _, size := range []int{1, 10, 100} {
					log.Take()
					page := list(t, s, tn.Env.ID, filter.filter, models.Page{Size: size}, models.Everything)
					if len(page.Data) != size || !page.HasMore {
						t.Fatalf("limit %d: got %d messages, hasMore %v; want a full page with more after it", size, len(page.Data), page.HasMore)
					}
					for _, m := range page.Data {
						if m.Subscriber == nil || m.Template == nil {
							t.Fatalf("limit %d: message %s lacks its subscriber or template", size, m.ID)
						}
					}
					// Subscribers and templates come from the caches once read: a page reads
					// those it has not seen yet, one statement for each kind.
					c := dbtest.CountStatements(log.Take())
					if c.Subscribers > 1 || c.Templates > 1 {
						t.Errorf("limit %d: subscribers read in %d statements and templates in %d, want at most 1 each", size, c.Subscribers, c.Templates)
					}
					c.All -= c.Subscribers + c.Templates
					c.Subscribers, c.Templates = 0, 0
					counts = append(counts, c)
				}
				for i, size := range []int{10, 100} {
					if diff := cmp.Diff(counts[0], counts[i+1]); diff != "" {
						t.Errorf("statements for limit %d differ from limit 1 (-limit 1 +limit %d):\n%s", size, size, diff)
					}
				}
				if counts[0].All > filter.max {
					t.Errorf("a page costs %d statements besides subscribers and templates, want at most %d (the page and its count)", counts[0].All, filter.max)
				}
			})
		}

		tests := []struct {
			name    string
			options models.ListOptions
			want    dbtest.StatementCounts
		}{
			// Subscribers and template versions come with the page's own statement; the
			// templates themselves from the cache the pages above filled.
			{"list200CountsOnceWhenAsked", models.Everything, dbtest.StatementCounts{All: 2, Count: 1}},
			{"list200NoCountWhenNotAsked", models.ListOptions{Subscribers: true, Templates: true}, dbtest.StatementCounts{All: 1}},
			{"list200NoSubscribersWhenNotAsked", models.ListOptions{Count: true, Templates: true}, dbtest.StatementCounts{All: 2, Count: 1}},
			{"list200NoTemplatesWhenNotAsked", models.ListOptions{Count: true, Subscribers: true}, dbtest.StatementCounts{All: 2, Count: 1}},
			{"list200OnlyTheMessagesWhenNothingAsked", models.ListOptions{}, dbtest.StatementCounts{All: 1}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				log.Take()
				// Page 2 of 10 has more after it, so the total is not known without counting.
				list(t, s, tn.Env.ID, models.ListFilter{}, models.Page{Number: 2, Size: 10}, tt.options)
				got := dbtest.CountStatements(log.Take())
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("statements (-want +got):\n%s", diff)
				}
			})
		}
	})
}
