package rest_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"messages/models"
	"messages/models/dbtest"
	"messages/models/store"
)

// inbox is tenant a's messages m1..m7 (m7 newest) over three subscribers and four
// channels, and a tenant b that reuses a's external subscriber id and transaction ids.
type inbox struct {
	a, b  *dbtest.Tenant
	subs  map[string]*models.Subscriber // tenant a's, by external id
	msgs  map[string]*models.Message    // by name, both tenants
	names map[string]string             // _id to name
}

// carol is an external subscriber id that needs escaping in a URL.
const carol = "carol 1/é"

func newInbox(t *testing.T, s *store.Store) *inbox {
	t.Helper()
	in := &inbox{a: dbtest.NewTenant(t, s, "a"), b: dbtest.NewTenant(t, s, "b"),
		subs: map[string]*models.Subscriber{}, msgs: map[string]*models.Message{}, names: map[string]string{}}
	for _, ext := range []string{"alice", "bob", carol} {
		in.subs[ext] = in.a.Subscriber(t, ext)
	}
	tpl := in.a.Template(t, "welcome")
	for _, m := range []struct {
		name, sub   string
		channel     models.ChannelType
		transaction string
	}{
		{"m1", "alice", models.ChannelInApp, "t1"},
		{"m2", "alice", models.ChannelEmail, "t2"},
		{"m3", "bob", models.ChannelInApp, "t1"},
		{"m4", "bob", models.ChannelSMS, "t3"},
		{"m5", "alice", models.ChannelChat, "t3"},
		{"m6", "bob", models.ChannelPush, "t4"},
		{"m7", carol, models.ChannelInApp, "t&=5 ü"},
	} {
		in.add(m.name, in.a.Message(t, in.subs[m.sub], tpl, func(msg *models.Message) {
			msg.Channel, msg.TransactionID = m.channel, m.transaction
		}))
	}
	bAlice, bTpl := in.b.Subscriber(t, "alice"), in.b.Template(t, "welcome")
	in.add("b1", in.b.Message(t, bAlice, bTpl, func(msg *models.Message) { msg.TransactionID = "t1" }))
	return in
}

func (in *inbox) add(name string, m *models.Message) {
	in.msgs[name] = m
	in.names[m.ID] = name
}

// page is a list response with messages named instead of whole.
type page struct {
	TotalCount int
	HasMore    bool
	Data       []string
	PageSize   int
	Page       int
}

// list GETs uri and returns the page, checking the status, the keys and their order,
// and that no null is anywhere in the body.
func list(t testing.TB, a *api, key, uri string, names map[string]string) page {
	t.Helper()
	res := a.get(t, key, uri)
	if res.status != http.StatusOK {
		t.Fatalf("GET %s: status %d, want 200; body %s", uri, res.status, res.body)
	}
	if diff := cmp.Diff([]string{"totalCount", "hasMore", "data", "pageSize", "page"}, topKeys(t, res.body)); diff != "" {
		t.Errorf("GET %s: keys (-want +got):\n%s", uri, diff)
	}
	noNulls(t, res.body)
	var body struct {
		TotalCount int  `json:"totalCount"`
		HasMore    bool `json:"hasMore"`
		Data       []struct {
			ID string `json:"_id"`
		} `json:"data"`
		PageSize int `json:"pageSize"`
		Page     int `json:"page"`
	}
	if err := json.Unmarshal(res.body, &body); err != nil {
		t.Fatal(err)
	}
	p := page{TotalCount: body.TotalCount, HasMore: body.HasMore, Data: []string{}, PageSize: body.PageSize, Page: body.Page}
	for _, m := range body.Data {
		name, ok := names[m.ID]
		if !ok {
			name = "unknown:" + m.ID
		}
		p.Data = append(p.Data, name)
	}
	return p
}

func TestListMessagesFilters(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		in := newInbox(t, s)
		a := newAPI(t, s)
		all := []string{"m7", "m6", "m5", "m4", "m3", "m2", "m1"}
		tests := []struct {
			name  string
			query string
			want  []string
		}{
			{"list200All", "", all},
			{"list200ChannelInApp", "channel=in_app", []string{"m7", "m3", "m1"}},
			{"list200ChannelEmail", "channel=email", []string{"m2"}},
			{"list200ChannelSMS", "channel=sms", []string{"m4"}},
			{"list200ChannelChat", "channel=chat", []string{"m5"}},
			{"list200ChannelPush", "channel=push", []string{"m6"}},
			{"list200Subscriber", "subscriberId=alice", []string{"m5", "m2", "m1"}},
			{"list200OtherSubscriber", "subscriberId=bob", []string{"m6", "m4", "m3"}},
			{"list200SubscriberEscaped", "subscriberId=carol%201%2F%C3%A9", []string{"m7"}},
			{"list200SubscriberPlusIsSpace", "subscriberId=carol+1%2F%C3%A9", []string{"m7"}},
			{"list200UnknownSubscriberEmpty", "subscriberId=nobody", []string{}},
			{"list200SubscriberCaseSensitive", "subscriberId=ALICE", []string{}},
			{"list200InternalSubscriberIdIsNotExternal", "subscriberId=" + in.subs["alice"].ID, []string{}},
			{"list200Transaction", "transactionId=t1", []string{"m3", "m1"}},
			{"list200Transactions", "transactionId=t1&transactionId=t3", []string{"m5", "m4", "m3", "m1"}},
			{"list200TransactionEscaped", "transactionId=t%26%3D5%20%C3%BC", []string{"m7"}},
			{"list200UnknownTransactionEmpty", "transactionId=nope", []string{}},
			{"list200ChannelSubscriber", "channel=in_app&subscriberId=alice", []string{"m1"}},
			{"list200ChannelTransaction", "channel=in_app&transactionId=t1", []string{"m3", "m1"}},
			{"list200SubscriberTransactions", "subscriberId=bob&transactionId=t1&transactionId=t4", []string{"m6", "m3"}},
			{"list200ChannelSubscriberTransaction", "channel=in_app&subscriberId=bob&transactionId=t1", []string{"m3"}},
			{"list200ChannelSubscriberTransactionNone", "channel=sms&subscriberId=bob&transactionId=t1", []string{}},
			{"list200ChannelOtherSubscriberEmpty", "channel=email&subscriberId=bob", []string{}},
			{"list200EmptyContextKeys", "contextKeys=&limit=10", all},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				uri := "/v1/messages"
				if tt.query != "" {
					uri += "?" + tt.query
				}
				want := page{TotalCount: len(tt.want), HasMore: false, Data: tt.want, PageSize: 10, Page: 0}
				if diff := cmp.Diff(want, list(t, a, in.a.Key, uri, in.names)); diff != "" {
					t.Errorf("GET %s (-want +got):\n%s", uri, diff)
				}
			})
		}
	})
}

func TestListMessagesTransactionEncodings(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		in := newInbox(t, s)
		a := newAPI(t, s)
		want := page{TotalCount: 4, Data: []string{"m5", "m4", "m3", "m1"}, PageSize: 10}
		for _, query := range []string{
			"transactionId=t1&transactionId=t3",
			"transactionId[]=t1&transactionId[]=t3",
			"transactionId[0]=t1&transactionId[1]=t3",
			"transactionId[1]=t3&transactionId[0]=t1",
			"transactionId%5B%5D=t1&transactionId%5B%5D=t3",
			"transactionId%5B0%5D=t1&transactionId%5B1%5D=t3",
			"transactionId=t1&transactionId[]=t3",
			"transactionId[]=t1&transactionId[5]=t3",
			"transactionId[]=t1&transactionId[]=t3&transactionId[]=t1",
		} {
			t.Run(query, func(t *testing.T) {
				if diff := cmp.Diff(want, list(t, a, in.a.Key, "/v1/messages?"+query, in.names)); diff != "" {
					t.Errorf("(-want +got):\n%s", diff)
				}
			})
		}
		t.Run("list200BracketsEscapedValue", func(t *testing.T) {
			got := list(t, a, in.a.Key, "/v1/messages?transactionId%5B%5D=t%26%3D5%20%C3%BC", in.names)
			if diff := cmp.Diff(page{TotalCount: 1, Data: []string{"m7"}, PageSize: 10}, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	})
}

// A key that is a bracketed form of a parameter the API does not read is refused naming
// the parameter, instead of dropping its filter and answering the whole list; so is a
// parameter it does not know (a misspelt filter), one given twice, and a filter it
// cannot apply.
func TestListMessagesBracketForms(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		in := newInbox(t, s)
		a := newAPI(t, s)
		for _, tt := range []struct {
			name, query, field, value string
		}{
			{"list422TransactionNegativeIndex", "transactionId[-1]=t1", "transactionId", "transactionId[-1]"},
			{"list422TransactionNegativeIndexEscaped", "transactionId%5B-1%5D=t1", "transactionId", "transactionId[-1]"},
			{"list422TransactionSignedIndex", "transactionId[%2B1]=t1", "transactionId", "transactionId[+1]"},
			{"list422TransactionNamedIndex", "transactionId[x]=t1", "transactionId", "transactionId[x]"},
			{"list422TransactionSpacedIndex", "transactionId[%201]=t1", "transactionId", "transactionId[ 1]"},
			{"list422TransactionIndexOverflow", "transactionId[99999999999999999999]=t1", "transactionId", "transactionId[99999999999999999999]"},
			{"list422TransactionNestedBrackets", "transactionId[0][1]=t1", "transactionId", "transactionId[0][1]"},
			{"list422TransactionDoubleBrackets", "transactionId[][]=t1", "transactionId", "transactionId[][]"},
			{"list422TransactionUnclosed", "transactionId[=t1", "transactionId", "transactionId["},
			{"list422TransactionBadBesideGood", "transactionId=t1&transactionId[-1]=t3", "transactionId", "transactionId[-1]"},
			{"list422ChannelBrackets", "channel[]=in_app", "channel", "channel[]"},
			{"list422ChannelBracketsEscaped", "channel%5B%5D=in_app", "channel", "channel[]"},
			{"list422ChannelIndex", "channel[0]=in_app", "channel", "channel[0]"},
			{"list422SubscriberBrackets", "subscriberId[]=alice", "subscriberId", "subscriberId[]"},
			{"list422PageBrackets", "page[]=1", "page", "page[]"},
			{"list422LimitIndex", "limit[0]=5", "limit", "limit[0]"},
			{"list422FirstBadKeyNamed", "subscriberId[]=alice&channel[]=in_app", "channel", "channel[]"},
			{"list422LongKeyCut", "transactionId[" + strings.Repeat("x", 300) + "]=t1", "transactionId", "transactionId[" + strings.Repeat("x", 241) + "..."},
		} {
			t.Run(tt.name, func(t *testing.T) {
				uri := "/v1/messages?" + tt.query
				body := errorBody(t, a.get(t, in.a.Key, uri), http.StatusUnprocessableEntity, uri)
				fieldError(t, body, tt.field, tt.value)
			})
		}
		for _, tt := range []struct {
			name, query, field string
			value              any
		}{
			{"list422UnknownParameter", "foo=bar&limit=10", "foo", "bar"},
			{"list422MisspeltSubscriber", "subscriberid=alice", "subscriberid", "alice"},
			{"list422MisspeltChannel", "Channel=fax", "Channel", "fax"},
			{"list422UnrelatedBrackets", "foo[]=x&transactionIds[0]=t9", "foo[]", "x"},
			{"list422RepeatedChannel", "channel=email&channel=sms", "channel", []any{"email", "sms"}},
			{"list422RepeatedLimit", "limit=5&limit=50", "limit", []any{"5", "50"}},
			{"list422ContextKeys", "contextKeys=tenant:acme", "contextKeys", []any{"tenant:acme"}},
		} {
			t.Run(tt.name, func(t *testing.T) {
				uri := "/v1/messages?" + tt.query
				body := errorBody(t, a.get(t, in.a.Key, uri), http.StatusUnprocessableEntity, uri)
				fieldError(t, body, tt.field, tt.value)
			})
		}
		for _, tt := range []struct {
			name, query string
			want        []string
		}{
			{"list200IndexLeadingZero", "transactionId[01]=t1", []string{"m3", "m1"}},
		} {
			t.Run(tt.name, func(t *testing.T) {
				uri := "/v1/messages?" + tt.query
				want := page{TotalCount: len(tt.want), Data: tt.want, PageSize: 10}
				if diff := cmp.Diff(want, list(t, a, in.a.Key, uri, in.names)); diff != "" {
					t.Errorf("GET %s (-want +got):\n%s", uri, diff)
				}
			})
		}
	})
}

// transactionQuery returns n transactionId values in the given encoding.
func transactionQuery(n int, key string) string {
	parts := make([]string, n)
	for i := range parts {
		k := key
		if key == "index" {
			k = "transactionId[" + strconv.Itoa(i) + "]"
		}
		parts[i] = k + "=t" + strconv.Itoa(i)
	}
	return strings.Join(parts, "&")
}

func TestListMessagesTransactionCap(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		in := newInbox(t, s)
		a := newAPI(t, s)
		t.Run("list200HundredTransactions", func(t *testing.T) {
			got := list(t, a, in.a.Key, "/v1/messages?"+transactionQuery(100, "transactionId"), in.names)
			// t1 to t4 are among t0..t99.
			want := page{TotalCount: 6, Data: []string{"m6", "m5", "m4", "m3", "m2", "m1"}, PageSize: 10}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
		for _, query := range []string{
			transactionQuery(101, "transactionId"),
			transactionQuery(101, "transactionId[]"),
			transactionQuery(101, "index"),
			transactionQuery(50, "transactionId") + "&" + transactionQuery(51, "transactionId[]"),
		} {
			t.Run("list422TooManyTransactions", func(t *testing.T) {
				uri := "/v1/messages?" + query
				body := errorBody(t, a.get(t, in.a.Key, uri), http.StatusUnprocessableEntity, uri)
				fieldError(t, body, "transactionId", float64(101))
			})
		}
	})
}

func TestListMessagesValidation(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		in := newInbox(t, s)
		a := newAPI(t, s)
		tests := []struct {
			name  string
			query string
			field string
			value any
		}{
			{"list422LimitZero", "limit=0", "limit", float64(0)},
			{"list422LimitAboveMax", "limit=1001", "limit", float64(1001)},
			{"list422LimitNegative", "limit=-1", "limit", float64(-1)},
			{"list422LimitNotNumber", "limit=abc", "limit", "abc"},
			{"list422LimitFraction", "limit=1.5", "limit", "1.5"},
			{"list422LimitExponent", "limit=1e2", "limit", "1e2"},
			{"list422LimitEmpty", "limit=", "limit", ""},
			{"list422LimitHuge", "limit=99999999999999999999", "limit", "99999999999999999999"},
			{"list422LimitMaxInt", "limit=9223372036854775807", "limit", float64(9223372036854775807)},
			{"list422PageNegative", "page=-1", "page", float64(-1)},
			{"list422PageNotNumber", "page=x", "page", "x"},
			{"list422PageFraction", "page=0.5", "page", "0.5"},
			{"list422PageHuge", "page=99999999999999999999", "page", "99999999999999999999"},
			{"list422PageMaxInt", "page=9223372036854775807", "page", float64(9223372036854775807)},
			{"list422ChannelUnknown", "channel=fax", "channel", "fax"},
			{"list422ChannelCase", "channel=IN_APP", "channel", "IN_APP"},
			{"list422ChannelEmpty", "channel=", "channel", ""},
			{"list422BadLimitWithValidFilters", "channel=email&subscriberId=alice&limit=0", "limit", float64(0)},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				uri := "/v1/messages?" + tt.query
				body := errorBody(t, a.get(t, in.a.Key, uri), http.StatusUnprocessableEntity, uri)
				fieldError(t, body, tt.field, tt.value)
			})
		}
	})
}

func TestListMessagesPages(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		in := newInbox(t, s)
		a := newAPI(t, s)
		tests := []struct {
			name  string
			query string
			want  page
		}{
			{"list200FirstPage", "limit=2", page{7, true, []string{"m7", "m6"}, 2, 0}},
			{"list200MiddlePage", "limit=3&page=1", page{7, true, []string{"m4", "m3", "m2"}, 3, 1}},
			{"list200ShortLastPage", "limit=2&page=3", page{7, false, []string{"m1"}, 2, 3}},
			{"list200PastTheEnd", "limit=2&page=4", page{7, false, []string{}, 2, 4}},
			{"list200FarPastTheEnd", "limit=1000&page=10000", page{7, false, []string{}, 1000, 10000}},
			{"list200FullOnlyPage", "limit=7", page{7, false, []string{"m7", "m6", "m5", "m4", "m3", "m2", "m1"}, 7, 0}},
			{"list200FullLastPage", "limit=1&page=6", page{7, false, []string{"m1"}, 1, 6}},
			{"list200OneBeforeLast", "limit=1&page=5", page{7, true, []string{"m2"}, 1, 5}},
			{"list200MaxLimit", "limit=1000&page=0", page{7, false, []string{"m7", "m6", "m5", "m4", "m3", "m2", "m1"}, 1000, 0}},
			{"list200LimitLeadingZero", "limit=02", page{7, true, []string{"m7", "m6"}, 2, 0}},
			{"list200FilteredFirstPage", "subscriberId=alice&limit=2", page{3, true, []string{"m5", "m2"}, 2, 0}},
			{"list200FilteredFullLastPage", "subscriberId=alice&limit=2&page=1", page{3, false, []string{"m1"}, 2, 1}},
			{"list200FilteredPastTheEnd", "subscriberId=bob&limit=2&page=5", page{3, false, []string{}, 2, 5}},
			{"list200TransactionsPaged", "transactionId[]=t1&transactionId[]=t3&limit=2&page=1", page{4, false, []string{"m3", "m1"}, 2, 1}},
			{"list200UnknownSubscriberPaged", "subscriberId=nobody&limit=5&page=2", page{0, false, []string{}, 5, 2}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				uri := "/v1/messages?" + tt.query
				if diff := cmp.Diff(tt.want, list(t, a, in.a.Key, uri, in.names)); diff != "" {
					t.Errorf("GET %s (-want +got):\n%s", uri, diff)
				}
			})
		}
	})
}

func TestListMessagesDefaults(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		tn := dbtest.NewTenant(t, s, "a")
		sub, tpl := tn.Subscriber(t, "alice"), tn.Template(t, "welcome")
		names := map[string]string{}
		var newestFirst []string
		for i := 1; i <= 11; i++ {
			m := tn.Message(t, sub, tpl, nil)
			names[m.ID] = "m" + strconv.Itoa(i)
			newestFirst = append([]string{names[m.ID]}, newestFirst...)
		}
		a := newAPI(t, s)
		tests := []struct {
			name, query string
			want        page
		}{
			{"list200DefaultPageAndLimit", "", page{11, true, newestFirst[:10], 10, 0}},
			{"list200DefaultLimit", "page=1", page{11, false, newestFirst[10:], 10, 1}},
			{"list200DefaultPage", "limit=4", page{11, true, newestFirst[:4], 4, 0}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				if diff := cmp.Diff(tt.want, list(t, a, tn.Key, "/v1/messages?"+tt.query, names)); diff != "" {
					t.Errorf("(-want +got):\n%s", diff)
				}
			})
		}
	})
}

func TestListMessagesOrder(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		tn := dbtest.NewTenant(t, s, "a")
		sub, tpl := tn.Subscriber(t, "alice"), tn.Template(t, "welcome")
		at := func(d time.Duration) models.Time { return models.NewTime(dbtest.Base.Add(d)) }
		// Inserted out of order; x2, x3, x1 and x6 share a createdAt, x4 is a millisecond later.
		fixtures := []struct {
			name, id string
			created  models.Time
		}{
			{"x1", "67c2be400000000000000001", at(10 * time.Second)},
			{"x5", "67c2be400000000000000009", at(5 * time.Second)},
			{"x2", "67c2be400000000000000003", at(10 * time.Second)},
			{"x4", "67c2be400000000000000000", at(10*time.Second + time.Millisecond)},
			{"x3", "67c2be400000000000000002", at(10 * time.Second)},
			{"x6", "67c2be3f0000000000000000", at(10 * time.Second)},
			{"x7", "67c2be4000000000000000ff", at(-time.Hour)},
		}
		names := map[string]string{}
		for _, f := range fixtures {
			tn.Message(t, sub, tpl, func(m *models.Message) { m.ID, m.CreatedAt = f.id, f.created })
			names[f.id] = f.name
		}
		a := newAPI(t, s)
		want := []string{"x4", "x2", "x3", "x1", "x6", "x5", "x7"}
		t.Run("list200NewestFirstTiesByIdDescending", func(t *testing.T) {
			got := list(t, a, tn.Key, "/v1/messages", names)
			if diff := cmp.Diff(want, got.Data); diff != "" {
				t.Errorf("order (-want +got):\n%s", diff)
			}
		})
		for _, limit := range []int{1, 2, 3} {
			t.Run("list200StableAcrossPagesLimit"+strconv.Itoa(limit), func(t *testing.T) {
				var got []string
				for p := 0; ; p++ {
					pg := list(t, a, tn.Key, "/v1/messages?limit="+strconv.Itoa(limit)+"&page="+strconv.Itoa(p), names)
					got = append(got, pg.Data...)
					if wantMore := (p+1)*limit < len(want); pg.HasMore != wantMore {
						t.Errorf("page %d: hasMore = %v, want %v", p, pg.HasMore, wantMore)
					}
					if !pg.HasMore || p > len(want) {
						break
					}
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("pages concatenated (-want +got):\n%s", diff)
				}
			})
		}
	})
}
