package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"messages/models"
	"messages/models/dbtest"
	"messages/models/store"
)

// e2eTenant is the real server in production mode over a fresh database holding one
// tenant (subscriber alice, messages txn-1 and txn-2, a key made by `apikey create`) and
// a second tenant (subscriber bob, message txn-1) that must never show through.
type e2eTenant struct {
	srv   *running
	store *store.Store
	key   string
	alice *models.Subscriber
	// msg is alice's first message, with primary and secondary buttons, action pending.
	msg   *models.Message
	other *models.Message
}

// e2eClient bounds every request, so a hang fails the test instead of stalling it. Its
// connections are its own, so a test can close them before stopping the server: a
// connection dialed but never used would hold graceful shutdown for 5 s.
var e2eClient = &http.Client{Timeout: 60 * time.Second, Transport: http.DefaultTransport.(*http.Transport).Clone()}

// newE2ETenant fills a fresh database of the dialect and starts the server on it, with
// rate limits out of the way.
func newE2ETenant(t *testing.T, dialect string, opts ...store.OpenOption) *e2eTenant {
	t.Helper()
	databaseURL := dbtest.URL(t, dialect)
	st := productionStore(t, databaseURL)
	tn := dbtest.NewTenant(t, st, "e2e")
	alice := tn.Subscriber(t, "alice")
	tpl := tn.Template(t, "welcome")
	msg := tn.Message(t, alice, tpl, nil)
	tn.Message(t, alice, tpl, nil)
	foreign := dbtest.NewTenant(t, st, "foreign")
	other := foreign.Message(t, foreign.Subscriber(t, "bob"), foreign.Template(t, "welcome"), nil)

	key, _ := createKey(t, tn.Env.ID, "e2e")
	srv := startWith(t, opts, "--rate-limit", "100000", "--rate-burst", "100000")
	t.Cleanup(e2eClient.CloseIdleConnections) // runs before start's stop
	return &e2eTenant{srv: srv, store: st, key: key, alice: alice, msg: msg, other: other}
}

// e2eReply is what one request got.
type e2eReply struct {
	status int
	header http.Header
	body   []byte
}

// do sends a request as the tenant. uri goes on the wire as written (path escapes and raw
// query included); header is added as given.
func (e *e2eTenant) do(t testing.TB, method, uri string, header http.Header, body []byte) e2eReply {
	t.Helper()
	r, err := e.send(method, uri, header, body)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// send is do for goroutines other than the test's: it returns the error instead.
func (e *e2eTenant) send(method, uri string, header http.Header, body []byte) (e2eReply, error) {
	req, err := http.NewRequest(method, e.srv.base+uri, bytes.NewReader(body))
	if err != nil {
		return e2eReply{}, err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("Authorization", "ApiKey "+e.key)
	res, err := e2eClient.Do(req)
	if err != nil {
		return e2eReply{}, fmt.Errorf("%s %.200s: %w", method, uri, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return e2eReply{}, fmt.Errorf("%s %.200s: %w", method, uri, err)
	}
	return e2eReply{status: res.StatusCode, header: res.Header, body: b}, nil
}

// markPath is the mark route of alice's fixture message with the given type.
func (e *e2eTenant) markPath(typ string) string {
	return "/v1/subscribers/alice/messages/" + e.msg.ID + "/actions/" + typ
}

// fixture lists the fixture message by its transactionId: a normal request, which must
// keep succeeding.
func (e *e2eTenant) fixture(t testing.TB) []byte {
	t.Helper()
	r := e.do(t, http.MethodGet, "/v1/messages?transactionId="+e.msg.TransactionID, nil, nil)
	if r.status != http.StatusOK {
		t.Fatalf("server unwell: GET /v1/messages answered %d: %s", r.status, r.body)
	}
	return r.body
}

// dbState is every row of the tables a request could touch, as JSON, and the row count
// of the others.
type dbState struct {
	Messages, Subscribers, Templates []string
	Counts                           map[string]int64
}

func (e *e2eTenant) state(t testing.TB) dbState {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	db := e.store.DB().WithContext(ctx)
	rows := func(dest any) []string {
		if err := db.Order("id").Find(dest).Error; err != nil {
			t.Fatal(err)
		}
		var raw []json.RawMessage
		b, _ := json.Marshal(dest)
		_ = json.Unmarshal(b, &raw)
		out := make([]string, len(raw))
		for i, r := range raw {
			out[i] = string(r)
		}
		return out
	}
	s := dbState{
		Messages:    rows(&[]models.Message{}),
		Subscribers: rows(&[]models.Subscriber{}),
		Templates:   rows(&[]models.Template{}),
		Counts:      map[string]int64{},
	}
	for _, table := range []string{"environments", "api_keys", "idempotency_keys"} {
		var n int64
		if err := db.Table(table).Count(&n).Error; err != nil {
			t.Fatal(err)
		}
		s.Counts[table] = n
	}
	return s
}

// hostileCase is one attack and the answer it must get.
type hostileCase struct {
	name   string
	method string
	uri    string
	header http.Header
	body   []byte
	want   func(t *testing.T, uri string, r e2eReply)
}

var timestampPattern = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`)

// refused expects status with the documented error body; a 422 names field in errors.
func refused(status int, field string) func(*testing.T, string, e2eReply) {
	return func(t *testing.T, uri string, r e2eReply) {
		t.Helper()
		if r.status != status {
			t.Fatalf("status %d, want %d: %.500s", r.status, status, r.body)
		}
		if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Errorf("Content-Type %q, want application/json", ct)
		}
		var body map[string]json.RawMessage
		if err := json.Unmarshal(r.body, &body); err != nil {
			t.Fatalf("body is not a JSON object (%v): %.500s", err, r.body)
		}
		keys := []string{"statusCode", "timestamp", "path", "message", "error"}
		if status == http.StatusUnprocessableEntity {
			keys = append(keys, "errors")
		}
		got := make([]string, 0, len(body))
		for k := range body {
			got = append(got, k)
		}
		slices.Sort(keys)
		slices.Sort(got)
		if diff := cmp.Diff(keys, got); diff != "" {
			t.Errorf("error body keys (-want +got):\n%s\n%.500s", diff, r.body)
		}
		var fields struct {
			StatusCode int                          `json:"statusCode"`
			Timestamp  string                       `json:"timestamp"`
			Path       string                       `json:"path"`
			Message    string                       `json:"message"`
			Error      string                       `json:"error"`
			Errors     map[string]models.FieldError `json:"errors"`
		}
		if err := json.Unmarshal(r.body, &fields); err != nil {
			t.Fatalf("error body has the wrong types (%v): %.500s", err, r.body)
		}
		if fields.StatusCode != status || fields.Path != quotedPath(uri) || fields.Error != http.StatusText(status) ||
			fields.Message == "" || !timestampPattern.MatchString(fields.Timestamp) {
			t.Errorf("error body %.500s\nwant statusCode %d, path %.200q, error %q, a message and a timestamp",
				r.body, status, uri, http.StatusText(status))
		}
		if status == http.StatusUnprocessableEntity {
			if len(fields.Errors) != 1 || len(fields.Errors[field].Messages) == 0 {
				t.Errorf("422 errors must name %s alone: %.500s", field, r.body)
			}
		}
	}
}

// uriTooLong expects 414 with the documented error body, short: neither its message nor
// its path echoes the URI.
func uriTooLong(t *testing.T, uri string, r e2eReply) {
	t.Helper()
	if r.status != http.StatusRequestURITooLong || len(r.body) > 1<<10 {
		t.Fatalf("status %d with %d bytes, want 414 with a short body: %.500s", r.status, len(r.body), r.body)
	}
	var body map[string]any
	if err := json.Unmarshal(r.body, &body); err != nil {
		t.Fatalf("body is not a JSON object (%v): %.500s", err, r.body)
	}
	if body["statusCode"] != float64(http.StatusRequestURITooLong) || body["error"] != http.StatusText(http.StatusRequestURITooLong) ||
		body["message"] == "" || !timestampPattern.MatchString(fmt.Sprint(body["timestamp"])) || !strings.HasPrefix(uri, fmt.Sprint(body["path"])) {
		t.Errorf("error body %s, want statusCode 414, a message, a timestamp and the start of the path", r.body)
	}
}

// headersTooLarge expects net/http's own 431 for a request line and headers past the
// server's MaxHeaderBytes: short, before any handler.
func headersTooLarge(t *testing.T, _ string, r e2eReply) {
	t.Helper()
	if r.status != http.StatusRequestHeaderFieldsTooLarge || len(r.body) > 1<<10 {
		t.Fatalf("status %d with %d bytes, want 431 with a short body: %.500s", r.status, len(r.body), r.body)
	}
}

// emptyPage expects 200 and a page without messages (a filter that matches nothing).
func emptyPage(t *testing.T, _ string, r e2eReply) {
	t.Helper()
	if r.status != http.StatusOK {
		t.Fatalf("status %d, want 200 with an empty page: %.500s", r.status, r.body)
	}
	var page struct {
		TotalCount int               `json:"totalCount"`
		Data       []json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(r.body, &page); err != nil {
		t.Fatal(err)
	}
	if page.TotalCount != 0 || page.Data == nil || len(page.Data) != 0 {
		t.Fatalf("a literal filter matched: %.1000s", r.body)
	}
}

// noData expects 200 and a page without messages, whatever the total.
func noData(t *testing.T, _ string, r e2eReply) {
	t.Helper()
	var page struct {
		Data []json.RawMessage `json:"data"`
	}
	if r.status != http.StatusOK || json.Unmarshal(r.body, &page) != nil || page.Data == nil || len(page.Data) != 0 {
		t.Fatalf("want 200 with no data, got %d: %.500s", r.status, r.body)
	}
}

// emptyOrRefused expects a page that matches nothing, or the status with the error body:
// never the unfiltered list.
func emptyOrRefused(status int, field string) func(*testing.T, string, e2eReply) {
	return func(t *testing.T, uri string, r e2eReply) {
		t.Helper()
		if r.status == http.StatusOK {
			emptyPage(t, uri, r)
			return
		}
		refused(status, field)(t, uri, r)
	}
}

// refusedAny expects one of statuses with the documented error body.
func refusedAny(statuses ...int) func(*testing.T, string, e2eReply) {
	return func(t *testing.T, uri string, r e2eReply) {
		t.Helper()
		if !slices.Contains(statuses, r.status) {
			t.Fatalf("status %d, want one of %v: %.500s", r.status, statuses, r.body)
		}
		field := ""
		if r.status == http.StatusUnprocessableEntity {
			var body struct {
				Errors map[string]any `json:"errors"`
			}
			_ = json.Unmarshal(r.body, &body)
			for k := range body.Errors {
				field = k
			}
		}
		refused(r.status, field)(t, uri, r)
	}
}

// graphqlRefused expects a GraphQL error response: no 5xx, errors each with a message
// and an extensions.code (one of codes, when given), and no mutation result.
func graphqlRefused(codes ...string) func(*testing.T, string, e2eReply) {
	return func(t *testing.T, _ string, r e2eReply) {
		t.Helper()
		if r.status >= 500 {
			t.Fatalf("status %d: %.500s", r.status, r.body)
		}
		var body struct {
			Errors []struct {
				Message    string         `json:"message"`
				Extensions map[string]any `json:"extensions"`
			} `json:"errors"`
			Data map[string]json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(r.body, &body); err != nil {
			t.Fatalf("body is not JSON (%v): %.500s", err, r.body)
		}
		if len(body.Errors) == 0 {
			t.Fatalf("no errors: %.500s", r.body)
		}
		for _, e := range body.Errors {
			code, _ := e.Extensions["code"].(string)
			if e.Message == "" || code == "" {
				t.Errorf("error without a message or extensions.code: %.500s", r.body)
			} else if len(codes) > 0 && !slices.Contains(codes, code) {
				t.Errorf("extensions.code %q, want one of %v: %.500s", code, codes, r.body)
			}
		}
		for field, v := range body.Data {
			if string(v) != "null" {
				t.Errorf("data.%s = %.200s, want null", field, v)
			}
		}
	}
}

// sqlMeta are values that must reach SQL as literals: they never match alice, txn-1 or
// anyone else, and change nothing.
var sqlMeta = []string{
	"' OR 1=1 --", `' OR '1'='1`, `"; DROP TABLE messages; --`, "'; DELETE FROM messages; --",
	`\' OR 1=1 -- `, "1; SELECT SLEEP(5)", "%", "_", `\`, `\\`, `\%`,
	"alice%", "ali_e", "%alice%", "alice'--", "alice ", "alice\x00", "ALICE",
	"txn-%", "txn-_", "txn-1 ", "txn-1' OR '1'='1",
}

func nestedJSON(depth int) string {
	return strings.Repeat(`{"a":`, depth-1) + "{}" + strings.Repeat("}", depth-1)
}

// hostileCases are the attacks on /v1 and /graphql.
func (e *e2eTenant) hostileCases() []hostileCase {
	jsonType := http.Header{"Content-Type": {"application/json"}}
	var cs []hostileCase
	list := func(name, query string, want func(*testing.T, string, e2eReply)) {
		cs = append(cs, hostileCase{name: name, method: http.MethodGet, uri: "/v1/messages?" + query, want: want})
	}
	markAt := func(name, path, ct, body string, want func(*testing.T, string, e2eReply)) {
		h := http.Header{}
		if ct != "" {
			h.Set("Content-Type", ct)
		}
		cs = append(cs, hostileCase{name: name, method: http.MethodPost, uri: path, header: h, body: []byte(body), want: want})
	}
	mark := func(name, ct, body string, want func(*testing.T, string, e2eReply)) {
		markAt(name, e.markPath("primary"), ct, body, want)
	}
	graphql := func(name, ct, body string, want func(*testing.T, string, e2eReply)) {
		cs = append(cs, hostileCase{name: name, method: http.MethodPost, uri: "/graphql", header: http.Header{"Content-Type": {ct}}, body: []byte(body), want: want})
	}
	gqlOp := func(name, query string, variables map[string]any, want func(*testing.T, string, e2eReply)) {
		b, _ := json.Marshal(map[string]any{"query": query, "variables": variables})
		cs = append(cs, hostileCase{name: name, method: http.MethodPost, uri: "/graphql", header: jsonType, body: b, want: want})
	}
	done := `{"status":"done","payload":{"by":"attacker"}}`

	// SQL meta-characters: literal values everywhere.
	for i, v := range sqlMeta {
		n := strconv.Itoa(i)
		list("listSubscriberIdLiteral"+n, "subscriberId="+url.QueryEscape(v), emptyPage)
		list("listTransactionIdLiteral"+n, "transactionId="+url.QueryEscape(v), emptyPage)
		list("listTransactionIdBracketLiteral"+n, "transactionId%5B%5D="+url.QueryEscape(v), emptyPage)
		markAt("markSubscriberIdLiteral"+n, "/v1/subscribers/"+url.PathEscape(v)+"/messages/"+e.msg.ID+"/actions/primary",
			"application/json", done, refused(http.StatusNotFound, ""))
		markAt("markMessageIdLiteral"+n, "/v1/subscribers/alice/messages/"+url.PathEscape(v)+"/actions/primary",
			"application/json", done, refused(http.StatusNotFound, ""))
		markAt("markMessageIdSuffixLiteral"+n, "/v1/subscribers/alice/messages/"+url.PathEscape(e.msg.ID+v)+"/actions/primary",
			"application/json", done, refused(http.StatusNotFound, ""))
		markAt("markTypeLiteral"+n, e.markPath(url.PathEscape(v)), "application/json", done, refused(http.StatusUnprocessableEntity, "type"))
		gqlOp("graphqlSubscriberIdLiteral"+n, `query($s: String) { messages(subscriberId: $s) { totalCount data { _id } } }`,
			map[string]any{"s": v}, func(t *testing.T, _ string, r e2eReply) {
				t.Helper()
				var got any
				_ = json.Unmarshal(r.body, &got)
				want := map[string]any{"data": map[string]any{"messages": map[string]any{"totalCount": float64(0), "data": []any{}}}}
				if r.status != http.StatusOK || !cmp.Equal(want, got) {
					t.Fatalf("a literal subscriberId matched: %d %.500s", r.status, r.body)
				}
			})
		gqlOp("graphqlMarkSubscriberIdLiteral"+n, markMutation, map[string]any{"s": v, "id": e.msg.ID, "type": "primary", "status": "done"},
			graphqlRefused("NOT_FOUND"))
	}
	// Another tenant's message under the caller's subscriber, and another tenant's pair.
	markAt("markForeignMessage", "/v1/subscribers/alice/messages/"+e.other.ID+"/actions/primary", "application/json", done, refused(http.StatusNotFound, ""))
	markAt("markForeignSubscriber", "/v1/subscribers/bob/messages/"+e.other.ID+"/actions/primary", "application/json", done, refused(http.StatusNotFound, ""))
	// A percent-escape that does not decode is not a filter to drop.
	list("listSubscriberIdBadEscape", "subscriberId=%zz", emptyOrRefused(http.StatusBadRequest, ""))
	list("listTransactionIdBadEscape", "transactionId=%zz", emptyOrRefused(http.StatusBadRequest, ""))

	// Very long strings.
	long := strings.Repeat("x", 10_000)
	list("listSubscriberIdLong", "subscriberId="+long, refused(http.StatusUnprocessableEntity, "subscriberId"))
	list("listTransactionIdLong", "transactionId="+long, refused(http.StatusUnprocessableEntity, "transactionId"))
	list("listChannelLong", "channel="+long, refused(http.StatusUnprocessableEntity, "channel"))
	markAt("markSubscriberIdLong", "/v1/subscribers/"+long+"/messages/"+e.msg.ID+"/actions/primary", "application/json", done,
		refusedAny(http.StatusNotFound, http.StatusUnprocessableEntity))
	markAt("markMessageIdLong", "/v1/subscribers/alice/messages/"+long+"/actions/primary", "application/json", done,
		refusedAny(http.StatusNotFound, http.StatusUnprocessableEntity))
	markAt("markTypeLong", e.markPath(long), "application/json", done, refusedAny(http.StatusNotFound, http.StatusUnprocessableEntity))
	mark("markStatusLong", "application/json", `{"status":"`+long+`"}`, refused(http.StatusUnprocessableEntity, "status"))

	// Invalid UTF-8.
	list("listSubscriberIdInvalidUTF8", "subscriberId=%FF", refused(http.StatusUnprocessableEntity, "subscriberId"))
	list("listSubscriberIdInvalidUTF8Pair", "subscriberId=%C3%28", refused(http.StatusUnprocessableEntity, "subscriberId"))
	list("listTransactionIdInvalidUTF8", "transactionId=%FF", refused(http.StatusUnprocessableEntity, "transactionId"))
	list("listChannelInvalidUTF8", "channel=%FF", refused(http.StatusUnprocessableEntity, "channel"))
	markAt("markSubscriberIdInvalidUTF8", "/v1/subscribers/%FF/messages/"+e.msg.ID+"/actions/primary", "application/json", done,
		refused(http.StatusUnprocessableEntity, "subscriberId"))
	markAt("markMessageIdInvalidUTF8", "/v1/subscribers/alice/messages/%FF/actions/primary", "application/json", done, refused(http.StatusNotFound, ""))
	markAt("markTypeInvalidUTF8", e.markPath("%FF"), "application/json", done, refused(http.StatusUnprocessableEntity, "type"))
	mark("markStatusInvalidUTF8", "application/json", "{\"status\":\"\xff\"}", refused(http.StatusUnprocessableEntity, "status"))
	mark("markPayloadInvalidUTF8", "application/json", "{\"status\":\"done\",\"payload\":{\"a\":\"\xff\"}}",
		refusedAny(http.StatusBadRequest, http.StatusUnprocessableEntity))
	mark("markPayloadKeyInvalidUTF8", "application/json", "{\"status\":\"done\",\"payload\":{\"\xc3\x28\":1}}",
		refusedAny(http.StatusBadRequest, http.StatusUnprocessableEntity))

	// Huge limit and page.
	for _, c := range []struct{ query, field string }{
		{"limit=1001", "limit"}, {"limit=0", "limit"}, {"limit=-1", "limit"}, {"limit=99999999999999999999", "limit"},
		{"limit=1e3", "limit"}, {"limit=", "limit"}, {"page=-1", "page"}, {"page=1e3", "page"},
		{"page=10000001", "page"}, {"page=99999999999999999999", "page"}, {"page=-99999999999999999999", "page"},
	} {
		list("list422"+c.query, c.query, refused(http.StatusUnprocessableEntity, c.field))
	}
	list("listDeepestPage", "page=10000000&limit=1000", noData)

	// 10,000 transactionIds, in each encoding: past the request-header limit, net/http's
	// 431; 3,500 (about 70 KiB) past the URI limit, 414; 3,000 (about 60 KiB) and 101 are
	// counted, 422.
	var ids, repeated, brackets, indices []string
	for i := range 10_000 {
		ids = append(ids, "t"+strconv.Itoa(i))
		repeated = append(repeated, "transactionId=t"+strconv.Itoa(i))
		brackets = append(brackets, "transactionId%5B%5D=t"+strconv.Itoa(i))
		indices = append(indices, "transactionId%5B"+strconv.Itoa(i)+"%5D=t"+strconv.Itoa(i))
	}
	list("listTransactionIds10000", strings.Join(repeated, "&"), headersTooLarge)
	list("listTransactionIds10000Brackets", strings.Join(brackets, "&"), headersTooLarge)
	list("listTransactionIds10000Indices", strings.Join(indices, "&"), headersTooLarge)
	list("listTransactionIds3500", strings.Join(repeated[:3500], "&"), uriTooLong)
	list("listTransactionIds3000", strings.Join(repeated[:3000], "&"), refused(http.StatusUnprocessableEntity, "transactionId"))
	list("listTransactionIds101", strings.Join(repeated[:101], "&"), refused(http.StatusUnprocessableEntity, "transactionId"))

	// Deep and large payloads.
	mark("markPayloadDepth65", "application/json", `{"status":"done","payload":`+nestedJSON(65)+`}`, refused(http.StatusUnprocessableEntity, "payload"))
	mark("markPayloadDepth20000", "application/json", `{"status":"done","payload":`+nestedJSON(20_000)+`}`, refused(http.StatusBadRequest, ""))
	mark("markPayloadArrayDepth20000", "application/json", `{"status":"done","payload":{"a":`+strings.Repeat("[", 20_000)+strings.Repeat("]", 20_000)+`}}`,
		refused(http.StatusBadRequest, ""))
	mark("markPayload2MiB", "application/json", `{"status":"done","payload":{"a":"`+strings.Repeat("x", 2<<20)+`"}}`, refused(http.StatusRequestEntityTooLarge, ""))
	mark("markPayloadNotObject", "application/json", `{"status":"done","payload":[1,2]}`, refused(http.StatusUnprocessableEntity, "payload"))

	// Wrong content types and malformed bodies.
	for _, ct := range []string{"text/plain", "multipart/form-data; boundary=x", "application/x-www-form-urlencoded", "application/xml", "application/json-seq", "nonsense/;;"} {
		mark("markContentType "+ct, ct, done, refused(http.StatusUnsupportedMediaType, ""))
	}
	mark("markFormBody", "application/x-www-form-urlencoded", "status=done", refused(http.StatusUnsupportedMediaType, ""))
	for name, body := range map[string]string{
		"TrailingWord": done + " x", "TrailingObject": done + `{"status":"pending"}`, "TrailingBrace": done + "}",
		"TrailingBracket": done + "]", "Truncated": done[:len(done)-1], "Empty": "", "Blank": " \n ", "Null": "null",
		"Array": "[" + done + "]", "String": `"done"`, "SingleQuotes": `{'status':'done'}`,
	} {
		mark("mark400"+name, "application/json", body, refused(http.StatusBadRequest, ""))
	}

	// GraphQL.
	graphql("graphqlInvalidJSON", "application/json", `{"query": "{ messages { totalCount } }"`, graphqlRefused())
	graphql("graphqlNotJSON", "application/json", `query=%7B%7D`, graphqlRefused())
	graphql("graphqlContentTypeText", "text/plain", `{"query":"{ messages { totalCount } }"}`, graphqlRefused())
	gqlOp("graphqlQueryOver32KiB", "{ messages { totalCount } }\n#"+strings.Repeat("x", 32<<10), nil, graphqlRefused("QUERY_TOO_LARGE"))
	var aliases strings.Builder
	for i := range 31 {
		fmt.Fprintf(&aliases, "a%d: messages(limit: 1) { totalCount } ", i)
	}
	gqlOp("graphqlAliases31", "{ "+aliases.String()+"}", nil, graphqlRefused("ALIAS_LIMIT_EXCEEDED"))
	gqlOp("graphqlDeepNesting", "{ messages { data "+strings.Repeat("{ data ", 500)+strings.Repeat("} ", 501)+"} }", nil, graphqlRefused())
	gqlOp("graphqlDeepIntrospection", "{ __schema { types { fields { type "+strings.Repeat("{ ofType ", 14)+"{ name }"+strings.Repeat(" }", 14)+" } } } }", nil,
		graphqlRefused("INTROSPECTION_DISABLED", "DEPTH_LIMIT_EXCEEDED"))
	gqlOp("graphqlLimitHuge", "{ messages(limit: 99999999999999999999) { totalCount } }", nil, graphqlRefused())
	gqlOp("graphqlTransactionIds10000", "query($t: [String!]) { messages(transactionId: $t) { totalCount } }",
		map[string]any{"t": ids}, graphqlRefused("BAD_USER_INPUT"))
	for name, payload := range map[string]any{"Number": 5, "String": "x", "Array": []any{1, 2}, "Bool": true, "Deep": json.RawMessage(nestedJSON(65))} {
		gqlOp("graphqlMarkPayload"+name, markMutation, map[string]any{"s": "alice", "id": e.msg.ID, "type": "primary", "status": "done", "payload": payload},
			graphqlRefused("BAD_USER_INPUT"))
	}
	gqlOp("graphqlMarkPayloadLiteral", `mutation { markMessageAction(subscriberId: "alice", messageId: "`+e.msg.ID+`", type: primary, status: done, payload: "x") { _id } }`,
		nil, graphqlRefused("BAD_USER_INPUT"))
	return cs
}

// markMutation marks a message through GraphQL, with its arguments as variables.
const markMutation = `mutation($s: String!, $id: ID!, $type: ButtonType!, $status: MessageActionStatus!, $payload: JSON) {
  markMessageAction(subscriberId: $s, messageId: $id, type: $type, status: $status, payload: $payload) { _id cta { action { status } } }
}`

// TestHostileInput attacks the running server on each dialect: every attack gets its
// refusal (or, for SQL meta-characters in filters, matches nothing), leaves every row as
// it was, and a normal request afterwards answers as before.
func TestHostileInput(t *testing.T) {
	for _, dialect := range dbtest.Dialects {
		t.Run(dialect, func(t *testing.T) {
			e := newE2ETenant(t, dialect)
			if first := e.fixture(t); !bytes.Contains(first, []byte(e.msg.ID)) {
				t.Fatalf("fixture not listed: %s", first)
			}
			if page := listPage(t, e.srv.base, e.key, "?subscriberId=alice"); page.TotalCount != 2 {
				t.Fatalf("subscriberId=alice lists %d messages, want 2", page.TotalCount)
			}
			for _, c := range e.hostileCases() {
				t.Run(c.name, func(t *testing.T) {
					// Compared with the state just before, so one case that changes
					// something fails alone.
					before, listed := e.state(t), e.fixture(t)
					r := e.do(t, c.method, c.uri, c.header, c.body)
					if diff := cmp.Diff(before, e.state(t)); diff != "" {
						t.Errorf("database changed (-before +after):\n%s", diff)
					}
					if after := e.fixture(t); !bytes.Equal(listed, after) {
						t.Errorf("fixture message changed:\nbefore %s\nafter  %s", listed, after)
					}
					c.want(t, c.uri, r)
				})
			}
			if t.Failed() {
				return
			}
			// The attacks left the service working: a real mark still succeeds.
			r := e.do(t, http.MethodPost, e.markPath("secondary"), http.Header{"Content-Type": {"application/json"}}, []byte(`{"status":"done"}`))
			if r.status != http.StatusCreated {
				t.Fatalf("a normal mark after the attacks: %d %s", r.status, r.body)
			}
		})
	}
}

// quotedPath is how an error body quotes a request's URI: its first 200 bytes and an
// ellipsis when it is longer.
func quotedPath(uri string) string {
	if len(uri) <= 200 {
		return uri
	}
	return uri[:200] + "…"
}
