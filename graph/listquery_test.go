package graph_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vektah/gqlparser/v2/ast"

	"messages/graph"
	"messages/models"
	"messages/models/dbtest"
	"messages/models/store"
)

// The list encoders (listquery.go) answer exactly as gqlgen's executor does: the same
// status and the same bytes, for random selections (fragments, aliases, repeats,
// @include/@skip, __typename, every field of every type under a page) of random records
// (each field empty, null or set, every escape), and for the arguments gqlgen refuses.
// Most queries must be answered by the encoders, or the comparison proves nothing.
func TestListQueriesAreTheExecutors(t *testing.T) {
	schema := graph.NewExecutableSchema(graph.Config{Resolvers: &graph.Resolver{}}).Schema()
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		tn := dbtest.NewTenant(t, s, "encoders")
		subs := listWorld(t, s, tn)
		var answered atomic.Int64
		fast := serve(t, newHandler(s, discard, graph.CountingListQueries(defaults, &answered)), tn)
		slow := serve(t, newHandler(s, discard, graph.ExecutorOnly(defaults)), tn)

		const queries = 300
		for i := range queries {
			r := rand.New(rand.NewPCG(uint64(i), 7))
			g := &queryGen{r: r, schema: schema, subs: subs}
			query := g.operation()
			sameAsExecutor(t, slow, fast, fmt.Sprintf("query %d", i), query)
		}
		if n := answered.Load(); n < 2*queries*4/5 {
			t.Errorf("the encoders answered %d of %d queries, want most", n, 2*queries)
		}
	})
}

// sameAnswer reports whether two response bodies are the same bytes, but for the
// interleaving of different root fields' errors. gqlgen's executor resolves root fields
// concurrently, each adding its errors to the response as it meets them, so two failing
// root fields report in either order from one request to the next: the executor against
// itself differs so (about one query in 6,000 of this test, failing before any result
// is written), and the encoders, which leave the root fields to it, inherit that. The
// errors of one root field, and everything else, must be the same bytes.
func sameAnswer(t *testing.T, a, b string) bool {
	t.Helper()
	return a == b || byRootField(t, a) == byRootField(t, b)
}

// byRootField returns body with its errors stably sorted by the root field of their path.
func byRootField(t *testing.T, body string) string {
	t.Helper()
	var r struct {
		Errors []json.RawMessage `json:"errors"`
	}
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, body)
	}
	join := func(errs []json.RawMessage) string {
		parts := make([]string, len(errs))
		for i, e := range errs {
			parts[i] = string(e)
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	root := func(e json.RawMessage) string {
		var p struct{ Path []any }
		_ = json.Unmarshal(e, &p)
		if len(p.Path) == 0 {
			return ""
		}
		return fmt.Sprint(p.Path[0])
	}
	sorted := slices.Clone(r.Errors)
	slices.SortStableFunc(sorted, func(x, y json.RawMessage) int { return strings.Compare(root(x), root(y)) })
	return strings.Replace(body, join(r.Errors), join(sorted), 1)
}

func firstDifference(a, b string) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return i
}

// around is s near byte at.
func around(s string, at int) string {
	return s[max(0, at-200):min(len(s), at+200)]
}

// listWorld writes subscribers, templates and 40 messages filled at random, and returns
// the subscribers' external ids (with one nobody has).
func listWorld(t *testing.T, s *store.Store, tn *dbtest.Tenant) []string {
	t.Helper()
	r := rand.New(rand.NewPCG(1, 2))
	var subs []*models.Subscriber
	ids := []string{"sub-nobody"}
	for i := range 4 {
		sub := tn.Subscriber(t, fmt.Sprintf("sub-%d", i))
		if i > 0 {
			keep := *sub
			fill(r, reflect.ValueOf(sub).Elem())
			sub.ID, sub.SubscriberID, sub.EnvironmentID, sub.OrganizationID = keep.ID, keep.SubscriberID, keep.EnvironmentID, keep.OrganizationID
			if err := s.DB().Omit("environment_id").Save(sub).Error; err != nil { // Vitess refuses writing the shard key, even unchanged
				t.Fatal(err)
			}
		}
		subs, ids = append(subs, sub), append(ids, sub.SubscriberID)
	}
	var tpls []*models.Template
	for i := range 3 {
		tpl := tn.Template(t, fmt.Sprintf("tpl-%d", i))
		if i > 0 {
			keep := *tpl
			fill(r, reflect.ValueOf(tpl).Elem())
			tpl.ID, tpl.Name, tpl.EnvironmentID, tpl.OrganizationID = keep.ID, keep.Name, keep.EnvironmentID, keep.OrganizationID
			if err := s.DB().Omit("environment_id").Save(tpl).Error; err != nil {
				t.Fatal(err)
			}
		}
		tpls = append(tpls, tpl)
	}
	channels := []models.ChannelType{models.ChannelInApp, models.ChannelEmail, models.ChannelSMS, models.ChannelChat, models.ChannelPush}
	for i := range 40 {
		sub, tpl := subs[r.IntN(len(subs))], tpls[r.IntN(len(tpls))]
		tn.Message(t, sub, tpl, func(m *models.Message) {
			if i%4 == 0 {
				return // every field set, as the fixture writes it
			}
			keep := *m
			fill(r, reflect.ValueOf(m).Elem())
			m.ID, m.EnvironmentID, m.OrganizationID, m.SubscriberID = keep.ID, keep.EnvironmentID, keep.OrganizationID, keep.SubscriberID
			m.CreatedAt, m.TemplateID, m.Subscriber, m.Template = keep.CreatedAt, keep.TemplateID, nil, nil
			m.InsertedAt, m.ChangedAt = keep.InsertedAt, keep.ChangedAt
			m.Channel = channels[r.IntN(len(channels))]
			switch i % 7 {
			case 1:
				m.TemplateID = "" // no template
			case 2:
				m.SubscriberID = models.NewID(time.Now()) // a subscriber that is not there
			}
		})
	}
	return ids
}

// fillTexts are the strings fill picks from: empty, plain, and each escape a database
// stores (invalid UTF-8 is FuzzQuotedStringIsGQLGen's).
var fillTexts = []string{"", "s", `q"b\`, "<&>", "\u2028\u2029", "tab\tnl\ncr\rbs\bff\f", "\x01\x1f\x7f", "é日本🙂"}

// fill sets v and everything in it at random: each field empty, nil or set.
func fill(r *rand.Rand, v reflect.Value) {
	switch p := v.Addr().Interface().(type) {
	case *models.Time:
		*p = models.NewTime(dbtest.Base.Add(time.Duration(r.Int64N(int64(1000 * time.Hour))).Truncate(time.Millisecond)))
		return
	case *models.Stamp:
		return
	case *models.JSON:
		*p = []models.JSON{nil, models.JSON(`{"k":[1,2.5,"<&>"],"t":"q\"b"}`), models.JSON(`"s"`), models.JSON(`[]`), models.JSON(`7`)}[r.IntN(5)]
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(fillTexts[r.IntN(len(fillTexts))])
	case reflect.Bool:
		v.SetBool(r.IntN(2) == 0)
	case reflect.Int, reflect.Int64:
		v.SetInt(r.Int64N(2000) - 1000)
	case reflect.Float64:
		v.SetFloat(float64(r.IntN(100))/4 - 3)
	case reflect.Pointer:
		if r.IntN(3) == 0 {
			v.SetZero()
			return
		}
		v.Set(reflect.New(v.Type().Elem()))
		fill(r, v.Elem())
	case reflect.Slice:
		if n := r.IntN(4); n == 0 {
			v.SetZero()
		} else {
			v.Set(reflect.MakeSlice(v.Type(), n-1, n-1))
			for i := range n - 1 {
				fill(r, v.Index(i))
			}
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(r, v.Field(i))
			}
		}
	}
}

// queryGen writes a random list query over the schema.
type queryGen struct {
	r         *rand.Rand
	schema    *ast.Schema
	subs      []string
	fragments []string
	aliases   int
}

func (g *queryGen) operation() string {
	var roots []string
	for i := range 1 + g.r.IntN(2) {
		roots = append(roots, g.root(i > 0))
	}
	body := strings.Join(append([]string{"{ " + strings.Join(roots, " ") + " }"}, g.fragments...), "\n")
	var declare []string
	for _, v := range []string{"yes", "no"} {
		if strings.Contains(body, "$"+v) {
			declare = append(declare, "$"+v+": Boolean!")
		}
	}
	if len(declare) == 0 {
		return "query " + body
	}
	return "query(" + strings.Join(declare, ", ") + ") " + body
}

// root writes a root field; aliased says it must have an alias (a second root field of
// the same name with other arguments would not validate).
func (g *queryGen) root(aliased bool) string {
	alias := g.alias()
	if aliased && alias == "" {
		g.aliases++
		alias = fmt.Sprintf("a%d: ", g.aliases)
	}
	switch g.r.IntN(12) {
	case 0:
		return "__typename"
	case 1:
		return alias + `node(id: "nope") { id }` // not a list query: the executor's alone
	case 2, 3, 4:
		args := []string{fmt.Sprintf("first: %d", g.r.IntN(6))} // 0 is refused
		if g.r.IntN(3) == 0 {
			args = append(args, `after: "not-a-cursor"`)
		}
		return alias + "messagesConnection(" + strings.Join(append(args, g.filters()...), ", ") + ") " + g.selection("MessageConnection", 0)
	default:
		args := []string{fmt.Sprintf("limit: %d", g.r.IntN(12)), fmt.Sprintf("page: %d", g.r.IntN(3))}
		return alias + "messages(" + strings.Join(append(args, g.filters()...), ", ") + ") " + g.selection("MessagesPage", 0)
	}
}

func (g *queryGen) filters() []string {
	var out []string
	if g.r.IntN(3) == 0 {
		out = append(out, fmt.Sprintf("subscriberId: %q", g.subs[g.r.IntN(len(g.subs))]))
	}
	if g.r.IntN(4) == 0 {
		out = append(out, "channel: "+[]string{"in_app", "email", "sms", "chat", "push"}[g.r.IntN(5)])
	}
	if g.r.IntN(6) == 0 {
		out = append(out, `transactionId: ["txn-1", "txn-5", "txn-9"]`)
	}
	return out
}

func (g *queryGen) alias() string {
	if g.r.IntN(5) > 0 {
		return ""
	}
	g.aliases++
	return fmt.Sprintf("a%d: ", g.aliases)
}

// selection selects fields of the object type name at random, nesting up to 7 deep.
func (g *queryGen) selection(name string, depth int) string {
	def := g.schema.Types[name]
	var parts []string
	keep := 3 - min(depth, 2) // fewer fields deeper down: a third of them from depth 2
	for _, f := range def.Fields {
		if strings.HasPrefix(f.Name, "__") || g.r.IntN(4) >= keep {
			continue
		}
		name, sub := f.Name, ""
		if def := g.schema.Types[f.Type.Name()]; def.Kind == ast.Object {
			if depth >= 7 {
				continue
			}
			sub = " " + g.selection(def.Name, depth+1)
		}
		switch g.r.IntN(14) {
		case 0:
			name = g.alias() + name
		case 1:
			name += " @include(if: $yes)"
		case 2:
			name += " @skip(if: $yes)"
		case 3:
			name += " @include(if: $no)"
		case 4:
			name += sub + " " + name // the same field twice, merged
		}
		parts = append(parts, name+sub)
	}
	switch g.r.IntN(6) {
	case 0:
		parts = append(parts, "__typename")
	case 1:
		cond := name
		if len(def.Interfaces) > 0 && g.r.IntN(2) == 0 {
			cond = def.Interfaces[0]
		}
		parts = append(parts, "... on "+cond+" { __typename }")
	case 2:
		frag := fmt.Sprintf("F%d", len(g.fragments))
		g.fragments = append(g.fragments, "") // reserve the name before nesting
		g.fragments[len(g.fragments)-1] = "fragment " + frag + " on " + name + " " + g.selection(name, depth)
		parts = append(parts, "..."+frag)
	}
	if len(parts) == 0 {
		parts = []string{"__typename"}
	}
	return "{ " + strings.Join(parts, " ") + " }"
}

// A page of messages answered by the list encoders and by gqlgen's executor, with the
// inbox's selection (cmd/loadtest's Row, and the global ids) and with every field of
// every record: what the encoders save, per request and in allocations, on SQLite (the
// database's share is the same on both sides).
func BenchmarkListQuery(b *testing.B) {
	s := dbtest.Open(b, "sqlite")
	tn := dbtest.NewTenant(b, s, "bench")
	sub, tpl := tn.Subscriber(b, "sub-bench"), tn.Template(b, "tpl-bench")
	for range 100 {
		tn.Message(b, sub, tpl, nil)
	}
	rows := []struct{ name, fragment string }{
		{"inbox", `fragment Row on Message {
  id _id createdAt channel transactionId subject title read seen status
  content { type content url }
  cta { type data { url } action { status buttons { type content } result { type payload } } }
  payload
  subscriber { id _id subscriberId firstName lastName email }
  template { id _id name }
}`},
		{"every-field", "fragment Row on Message {" + messageFields + "}" + stepFields},
	}
	for _, row := range rows {
		for _, limit := range []int{10, 100} {
			query := fmt.Sprintf("query { messages(limit: %d) { totalCount hasMore page pageSize data { ...Row } } }\n", limit) + row.fragment
			body, err := json.Marshal(map[string]any{"query": query})
			if err != nil {
				b.Fatal(err)
			}
			for _, side := range []struct {
				name string
				o    graph.HandlerOptions
			}{{"encoders", defaults}, {"executor", graph.ExecutorOnly(defaults)}} {
				h := newHandler(s, discard, side.o)
				b.Run(fmt.Sprintf("%s/%d/%s", row.name, limit, side.name), func(b *testing.B) {
					b.ReportAllocs()
					for b.Loop() {
						req := httptest.NewRequestWithContext(tn.Context(), http.MethodPost, "/graphql", bytes.NewReader(body))
						req.Header.Set("Content-Type", "application/json")
						rec := httptest.NewRecorder()
						h.ServeHTTP(rec, req)
						if rec.Code != http.StatusOK || bytes.Contains(rec.Body.Bytes(), []byte(`"errors"`)) {
							b.Fatalf("%d: %s", rec.Code, rec.Body)
						}
					}
				})
			}
		}
	}
}

// The mutations that answer with messages (a mark, a snooze, a state change) are written
// by the same encoders, and answer as gqlgen's executor does: each random mutation runs
// first through the executor, then again through the encoders, where the same change
// leaves the message as it was, so both answer the same message.
func TestListMutationsAreTheExecutors(t *testing.T) {
	schema := graph.NewExecutableSchema(graph.Config{Resolvers: &graph.Resolver{}}).Schema()
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		tn := dbtest.NewTenant(t, s, "encoders")
		subs := listWorld(t, s, tn)
		var targets []struct{ ID, SubscriberID string }
		err := s.DB().Raw(`SELECT m.id, s.subscriber_id FROM messages m JOIN subscribers s ON s.id = m.subscriber_id
			WHERE m.environment_id = ? ORDER BY m.id`, tn.Env.ID).Scan(&targets).Error
		if err != nil || len(targets) == 0 {
			t.Fatalf("%d messages with a subscriber: %v", len(targets), err)
		}
		var answered atomic.Int64
		fast := serve(t, newHandler(s, discard, graph.CountingListQueries(defaults, &answered)), tn)
		slow := serve(t, newHandler(s, discard, graph.ExecutorOnly(defaults)), tn)

		const mutations = 150
		for i := range mutations {
			r := rand.New(rand.NewPCG(uint64(i), 11))
			g := &queryGen{r: r, schema: schema, subs: subs}
			target := targets[r.IntN(len(targets))]
			subscriber := target.SubscriberID
			if r.IntN(8) == 0 {
				subscriber = subs[r.IntN(len(subs))] // most likely not the message's: not found
			}
			mutation := g.mutation(subscriber, target.ID)
			sameAsExecutor(t, slow, fast, fmt.Sprintf("mutation %d", i), mutation)
		}
		if n := answered.Load(); n < 2*mutations*4/5 {
			t.Errorf("the encoders planned %d of %d mutations, want most", n, 2*mutations)
		}
	})
}

// mutation writes a random mutation of the message id of subscriber with a random
// selection of the message.
func (g *queryGen) mutation(subscriber, id string) string {
	var root string
	switch g.r.IntN(5) {
	case 0, 1:
		status, button := []string{"pending", "done"}[g.r.IntN(2)], []string{"primary", "secondary"}[g.r.IntN(2)]
		payload := []string{"", `, payload: {k: [1, "<&>"]}`}[g.r.IntN(2)]
		root = fmt.Sprintf("markMessageAction(subscriberId: %q, messageId: %q, type: %s, status: %s%s)", subscriber, id, button, status, payload)
	case 2:
		root = fmt.Sprintf("markMessages(subscriberId: %q, messageIds: [%q], seen: true)", subscriber, id)
	case 3:
		root = fmt.Sprintf("snoozeMessage(subscriberId: %q, messageId: %q, until: %q)", subscriber, id, "2999-01-02T03:04:05.678Z")
	default:
		root = fmt.Sprintf("unsnoozeMessage(subscriberId: %q, messageId: %q)", subscriber, id)
	}
	body := strings.Join(append([]string{"{ " + g.alias() + root + " " + g.selection("Message", 0) + " }"}, g.fragments...), "\n")
	var declare []string
	for _, v := range []string{"yes", "no"} {
		if strings.Contains(body, "$"+v) {
			declare = append(declare, "$"+v+": Boolean!")
		}
	}
	if len(declare) == 0 {
		return "mutation " + body
	}
	return "mutation(" + strings.Join(declare, ", ") + ") " + body
}

// sameAsExecutor posts doc to the executor's endpoint (slow) and the encoders' (fast)
// twice, the second time with the variables flipped (a plan kept from the first must be
// used only where the variables do not change what is selected), and fails at the first
// answer in which they differ.
func sameAsExecutor(t *testing.T, slow, fast, what, doc string) {
	t.Helper()
	for _, yes := range []bool{true, false} {
		vars := map[string]any{"yes": yes, "no": !yes}
		want, got := post(t, slow, doc, vars), post(t, fast, doc, vars)
		if got.Status != want.Status || !sameAnswer(t, got.Body, want.Body) {
			at := firstDifference(got.Body, want.Body)
			t.Fatalf("%s, $yes %v:\n%s\nstatus: encoders %d, executor %d; bodies differ at byte %d:\nencoders ...%s\nexecutor ...%s",
				what, yes, doc, got.Status, want.Status, at, around(got.Body, at), around(want.Body, at))
		}
	}
}
