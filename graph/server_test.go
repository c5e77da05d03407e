package graph_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"messages/graph"
	"messages/models"
	"messages/models/dbtest"
	"messages/models/service"
	"messages/models/store"
)

// defaults are the options of a development server.
var defaults = graph.HandlerOptions{Introspection: true, Limits: graph.DefaultLimits}

var discard = slogTo(io.Discard)

// slogTo returns a logger writing text lines to w.
func slogTo(w io.Writer) *slog.Logger { return slog.New(slog.NewTextHandler(w, nil)) }

// timeEqual compares timestamps by instant; models.Time wraps time.Time, whose unexported
// fields cmp cannot read.
var timeEqual = cmp.Comparer(func(a, b models.Time) bool { return a.Equal(b.Time) })

// testCursorSecret signs the cursors of every handler a test builds, so that two handlers
// over one store (with and without the list encoders) take each other's cursors.
var testCursorSecret = []byte("graph tests' cursor secret")

func newHandler(s *store.Store, logger *slog.Logger, o graph.HandlerOptions) http.Handler {
	return graph.NewHandler(&graph.Resolver{Service: service.New(service.Options{Store: s, CursorSecret: testCursorSecret}), Logger: logger, Now: time.Now}, o)
}

// serve starts h on a real port at /graphql. A non-nil tenant is put in every request's
// context, standing in for the API-key middleware of rest/, which is tested there.
func serve(t testing.TB, h http.Handler, tenant *dbtest.Tenant) string {
	t.Helper()
	if tenant != nil {
		inner := h
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			inner.ServeHTTP(w, r.WithContext(models.WithCaller(r.Context(), tenant.Caller)))
		})
	}
	mux := http.NewServeMux()
	mux.Handle("/graphql", h)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL + "/graphql"
}

// response is a GraphQL response with its HTTP status and raw body.
type response struct {
	Status int             `json:"-"`
	Body   string          `json:"-"`
	Data   json.RawMessage `json:"data"`
	Errors []gqlError      `json:"errors"`
}

type gqlError struct {
	Message    string         `json:"message"`
	Path       []any          `json:"path"`
	Extensions map[string]any `json:"extensions"`
}

// dataIsNull reports whether the response carries no data.
func (r response) dataIsNull() bool {
	return len(r.Data) == 0 || string(r.Data) == "null"
}

func post(t testing.TB, endpoint, query string, variables map[string]any) response {
	t.Helper()
	body, err := json.Marshal(map[string]any{"query": query, "variables": variables})
	if err != nil {
		t.Fatal(err)
	}
	res, err := http.Post(endpoint, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return read(t, res)
}

func get(t testing.TB, endpoint, query string) response {
	t.Helper()
	res, err := http.Get(endpoint + "?" + url.Values{"query": {query}}.Encode())
	if err != nil {
		t.Fatal(err)
	}
	return read(t, res)
}

func read(t testing.TB, res *http.Response) response {
	t.Helper()
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	r := response{Status: res.StatusCode, Body: string(b)}
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("response %d is not JSON: %v\n%s", res.StatusCode, err, b)
	}
	return r
}

// decode reads the response data into v, failing on any error in the response.
func decode(t testing.TB, r response, v any) {
	t.Helper()
	if len(r.Errors) > 0 {
		t.Fatalf("unexpected errors: %s", r.Body)
	}
	if err := json.Unmarshal(r.Data, v); err != nil {
		t.Fatalf("decode data: %v\n%s", err, r.Data)
	}
}

// problem is what a test compares of a GraphQL error.
type problem struct {
	Path  string
	Code  string
	Field string
}

func problems(r response) []problem {
	out := []problem{}
	for _, e := range r.Errors {
		var path []string
		for _, p := range e.Path {
			path = append(path, fmt.Sprint(p))
		}
		field, _ := e.Extensions["field"].(string)
		code, _ := e.Extensions["code"].(string)
		out = append(out, problem{Path: strings.Join(path, "."), Code: code, Field: field})
	}
	return out
}

// graphFixture is tenant A with twelve messages g1..g12, one second apart:
//
//	subscriber  sub-alice for odd i, sub-bob for even i
//	channel     in_app for i%3 == 1, email for i%3 == 2, sms for i%3 == 0
//	transaction txn-i
//
// and tenant B, whose sub-alice has one message with transaction id txn-1 (and who alone
// has sub-carol).
type graphFixture struct {
	a, b  *dbtest.Tenant
	msgs  map[string]*models.Message
	names map[string]string // message id to fixture name
}

func newGraphFixture(t testing.TB, s *store.Store) *graphFixture {
	t.Helper()
	f := &graphFixture{a: dbtest.NewTenant(t, s, "a"), b: dbtest.NewTenant(t, s, "b"),
		msgs: map[string]*models.Message{}, names: map[string]string{}}
	alice, bob, tpl := f.a.Subscriber(t, "sub-alice"), f.a.Subscriber(t, "sub-bob"), f.a.Template(t, "tpl")
	channels := []models.ChannelType{models.ChannelSMS, models.ChannelInApp, models.ChannelEmail}
	for i := 1; i <= 12; i++ {
		sub := bob
		if i%2 == 1 {
			sub = alice
		}
		f.add(fmt.Sprintf("g%d", i), f.a.Message(t, sub, tpl, func(m *models.Message) {
			m.Channel, m.TransactionID = channels[i%3], fmt.Sprintf("txn-%d", i)
		}))
	}
	f.b.Subscriber(t, "sub-carol")
	f.add("b1", f.b.Message(t, f.b.Subscriber(t, "sub-alice"), f.b.Template(t, "tpl"), func(m *models.Message) {
		m.TransactionID = "txn-1"
	}))
	return f
}

func (f *graphFixture) add(name string, m *models.Message) {
	f.msgs[name] = m
	f.names[m.ID] = name
}

// page is the part of a MessagesPage the tests read.
type page struct {
	TotalCount int
	HasMore    bool
	PageSize   int
	Page       int
	Data       []struct {
		ID string `json:"_id"`
	}
}

// pageSummary names a page's messages by fixture name.
type pageSummary struct {
	Names      []string
	TotalCount int
	HasMore    bool
	PageSize   int
	Page       int
}

func (f *graphFixture) summarize(p page) pageSummary {
	out := pageSummary{Names: []string{}, TotalCount: p.TotalCount, HasMore: p.HasMore, PageSize: p.PageSize, Page: p.Page}
	for _, m := range p.Data {
		name, ok := f.names[m.ID]
		if !ok {
			name = "unknown:" + m.ID
		}
		out.Names = append(out.Names, name)
	}
	return out
}

// lockedBuffer is a log destination safe to read while the server writes.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// messageFields selects every field of a Message, nested records included.
const messageFields = `
	_id _templateId _environmentId _messageTemplateId _organizationId _notificationId _subscriberId
	subscriber {
		_id firstName lastName email phone avatar locale
		channels { providerId integrationIdentifier _integrationId
			credentials { webhookUrl channel deviceTokens alertUid title imageUrl state externalUrl } }
		topics isOnline lastOnlineAt _v data timezone subscriberId _organizationId _environmentId deleted createdAt updatedAt
	}
	template {
		_id name description active draft preferenceSettings { email sms in_app chat push } critical tags
		steps { ...StepFields variants { _id uuid name _templateId active shouldStopOnFail template
			filters { isNegated type value children { field value operator on } } _parentId
			metadata { amount unit digestKey type backoff backoffAmount backoffUnit updateMode }
			replyCallback { active url } } }
		_organizationId _creatorId _environmentId
		triggers { type identifier variables { name } subscriberVariables { name } }
		_notificationGroupId _parentId deleted deletedAt deletedBy
		notificationGroup { _id name _environmentId _organizationId _parentId }
		data workflowIntegrationStatus
	}
	templateIdentifier createdAt deliveredAt lastSeenDate lastReadDate
	content { type content url styles { textAlign } }
	transactionId subject channel read seen snoozedUntil email phone directWebhookUrl providerId deviceTokens title
	cta { type data { url } action { status buttons { type content resultContent } result { payload type } } }
	_feedId status errorId errorText payload overrides
`

// stepFields is the fragment messageFields spreads.
const stepFields = `
fragment StepFields on Step {
	_id uuid name _templateId active shouldStopOnFail template
	filters { isNegated type value children { field value operator on } } _parentId
	metadata { amount unit digestKey type backoff backoffAmount backoffUnit updateMode }
	replyCallback { active url }
}`
