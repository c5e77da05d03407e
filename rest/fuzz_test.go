package rest

// Fuzz targets for the three ways a /v1 request carries input: the query string of
// GET /v1/messages, the body of a mark, and the path segments of a mark. Each runs its
// seed corpus under plain `go test`; CI fuzzes each for a bounded time, e.g.
//
//	go test ./rest -run '^$' -fuzz '^FuzzParseListQuery$' -fuzztime 15s

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"messages/models"
	"messages/models/dbtest"
	"messages/models/store"
)

// fuzzClock is the fixed time of the fuzzed server, so error timestamps compare exactly.
var fuzzClock = time.Date(2025, 3, 1, 9, 30, 15, 250_000_000, time.UTC)

// nested returns a JSON object nesting depth levels: {"a":{"a":...{}}}.
func nested(depth int) string {
	return strings.Repeat(`{"a":`, depth-1) + "{}" + strings.Repeat("}", depth-1)
}

// hostileStrings are values that must reach the database as literals, or be refused.
var hostileStrings = []string{
	"' OR 1=1 --",
	`"; DROP TABLE messages; --`,
	"%", "_", `\`, `\\`, "alice%", "ali_e", "alice'--", "alice ", "ALICE",
	"\xff", "\xc3\x28", "a\x00b", "\u202ealice",
	strings.Repeat("x", 10_000),
}

// FuzzParseListQuery sends raw query strings through url.ParseQuery (as r.URL.Query()
// does, keeping what parses) and parseListQuery. It never panics; a bracketed key of a
// parameter that is none of the three encodings of transactionId is refused as invalid,
// naming the parameter; otherwise transactionIds are exactly the values of the keys of
// the three encodings, and page and limit are taken as integers or refused as invalid,
// naming the field.
func FuzzParseListQuery(f *testing.F) {
	for _, seed := range []string{
		"",
		"transactionId=a&transactionId=b",
		"transactionId[]=a&transactionId[]=b",
		"transactionId[1]=b&transactionId[0]=a",
		"transactionId=a&transactionId[]=b&transactionId[0]=c",
		"transactionId[-1]=x&transactionId[x]=y&transactionId[99999999999999999999]=z&transactionId[=w&transactionId]=v",
		"transactionId[+1]=a&transactionId[01]=b&transactionId[ 1]=c",
		"transactionId=",
		"channel=in_app&subscriberId=alice&page=2&limit=50",
		"subscriberId=%27%20OR%201%3D1%20--",
		"subscriberId=%22%3B%20DROP%20TABLE%20messages%3B%20--",
		"subscriberId=%25&transactionId=_&transactionId=%5C",
		"subscriberId=%FF&transactionId=%C3%28",
		"subscriberId=%zz&limit=5",
		"subscriberId=a;limit=5",
		"limit=1001", "limit=0", "limit=-1", "limit=", "limit=99999999999999999999",
		"limit=1e3", "limit=0x10", "limit=+5", "limit=%205", "limit=5&limit=x",
		"page=-1", "page=1e3", "page=10000001", "page=99999999999999999999", "page=3.0",
		"page=x&limit=y",
		strings.Repeat("transactionId=t&", 101),
		"subscriberId=" + strings.Repeat("x", 10_000),
		"&&&=&=x&x=&%=%",
		"channel[]=in_app", "channel[0]=in_app&channel=email", "subscriberId[]=a", "page[]=1", "limit[x]=5",
		"transactionId[0][1]=a", "transactionId[][]=a", "transactionId%5B-1%5D=a", "transactionId[00]=a&transactionId[]=b",
		"foo[]=a&Channel[]=x&transactionIds[0]=y&transactionId]=z",
		"transactionId[-1]=a&page=x",
		"subscriberid=alice", "Channel=fax&limit=5", "channel=email&channel=sms", "limit=5&limit=50&page=x",
		"contextKeys=&limit=5", "contextKeys=tenant:acme", "contextKeys=&contextKeys=a",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		v, _ := url.ParseQuery(raw)
		q, err := parseListQuery(v)

		if bad := malformedParams(v); len(bad) > 0 {
			if field := invalidMember(err); !bad[field] {
				t.Fatalf("malformed keys of %v: error %v (field %q), want invalid naming one of them", bad, err, field)
			}
			return
		}
		if bad := unreadParams(v); len(bad) > 0 {
			if field := invalidMember(err); !bad[field] {
				t.Fatalf("unknown, repeated or unusable keys %v: error %v (field %q), want invalid naming one of them", bad, err, field)
			}
			return
		}

		for _, key := range []string{"page", "limit"} {
			got := q.page
			if key == "limit" {
				got = q.limit
			}
			vals, sent := v[key]
			if !sent {
				if got != nil {
					t.Errorf("%s absent but parsed as %d", key, *got)
				}
				continue
			}
			n, convErr := strconv.Atoi(vals[0])
			switch {
			case convErr != nil && key == "limit" && invalidMember(err) == "page":
				// page is checked first and already refused.
			case convErr != nil:
				if field := invalidMember(err); field != key {
					t.Fatalf("%s=%q: error %v (field %q), want invalid naming %s", key, vals[0], err, field, key)
				}
			case err == nil && (got == nil || *got != n):
				t.Errorf("%s=%q parsed as %v, want %d", key, vals[0], got, n)
			}
		}
		if err != nil {
			if field := invalidMember(err); field != "page" && field != "limit" {
				t.Fatalf("error %v does not name page or limit", err)
			}
			return
		}

		if want := transactionIDs(v); !equalMultiset(q.filter.TransactionIDs, want) {
			t.Errorf("transactionIds = %q, want the %d values %q", q.filter.TransactionIDs, len(want), want)
		}
		if n := len(v["transactionId"]); len(q.filter.TransactionIDs) < n || !slices.Equal(q.filter.TransactionIDs[:n], v["transactionId"]) {
			t.Errorf("transactionIds = %q do not start with the repeated-key values %q", q.filter.TransactionIDs, v["transactionId"])
		}
		if vals, ok := v["subscriberId"]; ok != (q.filter.SubscriberID != nil) || ok && *q.filter.SubscriberID != vals[0] {
			t.Errorf("subscriberId = %v, want the first of %q", q.filter.SubscriberID, vals)
		}
		if vals, ok := v["channel"]; ok != (q.filter.Channel != nil) || ok && string(*q.filter.Channel) != vals[0] {
			t.Errorf("channel = %v, want the first of %q", q.filter.Channel, vals)
		}
	})
}

// transactionIDs collects, independently of arrayParam, the values of every key that
// carries a transactionId: transactionId, transactionId[] and transactionId[N], N >= 0.
func transactionIDs(v url.Values) []string {
	var out []string
	for k, vals := range v {
		inner, ok := strings.CutPrefix(k, "transactionId")
		switch {
		case !ok:
			continue
		case inner == "" || inner == "[]":
		case len(inner) >= 3 && inner[0] == '[' && inner[len(inner)-1] == ']':
			if n, err := strconv.Atoi(inner[1 : len(inner)-1]); err != nil || n < 0 {
				continue
			}
		default:
			continue
		}
		out = append(out, vals...)
	}
	return out
}

// malformedParams names, independently of parseListQuery, the parameters sent with a
// key that is their name, "[", and anything but "]" or "N]" (digits alone, an int) on
// transactionId.
func malformedParams(v url.Values) map[string]bool {
	bad := map[string]bool{}
	for k := range v {
		i := strings.IndexByte(k, '[')
		if i < 0 {
			continue
		}
		name, inner := k[:i], k[i:]
		switch name {
		case "channel", "subscriberId", "page", "limit":
			bad[name] = true
		case "transactionId":
			if inner == "[]" {
				continue
			}
			digits := strings.TrimSuffix(strings.TrimPrefix(inner, "["), "]")
			n, err := strconv.ParseUint(digits, 10, 63)
			if len(inner) < 3 || inner[len(inner)-1] != ']' || err != nil || n > math.MaxInt {
				bad[name] = true
			}
		}
	}
	return bad
}

// unreadParams names, independently of parseListQuery, the keys it cannot apply whole:
// unknown ones, single-valued parameters given more than once, and contextKeys with a
// value (this server keeps no contexts).
func unreadParams(v url.Values) map[string]bool {
	bad := map[string]bool{}
	for k, vals := range v {
		switch {
		case k == "channel" || k == "subscriberId" || k == "page" || k == "limit":
			if len(vals) > 1 {
				bad[k] = true
			}
		case strings.HasPrefix(k, "contextKeys["):
			bad["contextKeys"] = true
		case k == "contextKeys":
			if slices.ContainsFunc(vals, func(s string) bool { return s != "" }) {
				bad[k] = true
			}
		case k == "transactionId" || k == "transactionId[]":
		case strings.HasPrefix(k, "transactionId[") && strings.HasSuffix(k, "]"):
			// an index; malformedParams judged it
		default:
			bad[quotedKey(k)] = true
		}
	}
	return bad
}

func equalMultiset(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// FuzzParseActionBody sends arbitrary bodies with arbitrary Content-Types through
// parseActionBody. It never panics. A non-JSON Content-Type is 415 and a body over the
// limit 413; otherwise the body is refused as malformed exactly when it is not one JSON
// object, a non-string status is refused as invalid naming status, and an accepted
// payload is valid JSON or absent.
func FuzzParseActionBody(f *testing.F) {
	for _, ct := range []string{"application/json", ""} {
		for _, body := range []string{
			`{"status":"done"}`,
			`{"status":"pending","payload":{"a":[1,2.50,"<&>"]}}`,
			`{"status":"done","payload":null}`,
			`{"status":"done","payload":"text"}`,
			`{"status":"done","payload":99999999999999999999999999999999e99999}`,
			`{"status":5}`, `{"status":null}`, `{"status":["done"]}`, `{"status":{}}`, `{}`,
			`{"Status":"done","STATUS":"pending"}`,
			`{"status":"done","status":"pending"}`,
			`{"status":"' OR 1=1 --"}`,
			`{"status":"\"; DROP TABLE messages; --"}`,
			`{"status":"done","payload":{"k":"%_\\"}}`,
			"{\"status\":\"\xff\"}",
			`{"status":"\ud800"}`,
			"", " ", "\n\t", "null", "[]", `"done"`, "5", "{", "}", "{{}}",
			`{"status":"done"} x`,
			`{"status":"done"}{"status":"pending"}`,
			`{"status":"done"}}`,
			`{"status":"done"}]`,
			"\ufeff{\"status\":\"done\"}",
			`{"status":"done","payload":` + nested(64) + `}`,
			`{"status":"done","payload":` + nested(65) + `}`,
			`{"status":"done","payload":` + nested(20_000) + `}`,
			`{"status":"done","payload":{"a":"` + strings.Repeat("x", MaxBodyBytes) + `"}}`,
		} {
			f.Add(ct, []byte(body))
		}
	}
	for _, ct := range []string{
		"application/json; charset=utf-8", "Application/JSON", "application/merge-patch+json",
		"text/plain", "multipart/form-data; boundary=x", "application/x-www-form-urlencoded",
		"application/json; charset", ";", "application/", "json",
	} {
		f.Add(ct, []byte(`{"status":"done"}`))
	}
	f.Fuzz(func(t *testing.T, contentType string, body []byte) {
		r := httptest.NewRequest(http.MethodPost, "/v1/subscribers/s/messages/m/actions/primary", bytes.NewReader(body))
		if contentType != "" {
			r.Header.Set("Content-Type", contentType)
		}
		b, err := parseActionBody(httptest.NewRecorder(), r)

		var se *statusError
		mt, _, ctErr := mime.ParseMediaType(contentType)
		wrongType := contentType != "" && (ctErr != nil || mt != "application/json" && !strings.HasSuffix(mt, "+json"))
		switch {
		case wrongType:
			if !errors.As(err, &se) || se.status != http.StatusUnsupportedMediaType {
				t.Fatalf("Content-Type %q: error %v, want 415", contentType, err)
			}
			return
		case len(body) > MaxBodyBytes:
			if !errors.As(err, &se) || se.status != http.StatusRequestEntityTooLarge {
				t.Fatalf("%d-byte body: error %v, want 413", len(body), err)
			}
			return
		case errors.As(err, &se):
			t.Fatalf("%d-byte body with Content-Type %q: status error %d %q", len(body), contentType, se.status, se.message)
		}

		trimmed := bytes.TrimSpace(body)
		object := json.Valid(trimmed) && len(trimmed) > 0 && trimmed[0] == '{'
		code := models.ErrorCode(err)
		switch {
		case err == nil:
		case code == models.EMALFORMED:
			if object {
				t.Fatalf("one JSON object refused as malformed: %v\n%q", err, clip(body))
			}
			return
		case code == models.EINVALID:
			if field := invalidMember(err); field != "status" {
				t.Fatalf("invalid error names %q, want status: %v", field, err)
			}
		default:
			t.Fatalf("error %v has code %q, want malformed or invalid", err, code)
		}
		if !object {
			t.Fatalf("not one JSON object, yet accepted (err %v):\n%q", err, clip(body))
		}
		if err == nil && b.payload != nil && !json.Valid(b.payload) {
			t.Fatalf("payload is not valid JSON: %q", clip(b.payload))
		}
	})
}

// clip shortens a large input for a failure message.
func clip(b []byte) []byte {
	if len(b) > 300 {
		return append(b[:300:300], "..."...)
	}
	return b
}

// FuzzActionPath sends arbitrary subscriberId, messageId and type path segments, escaped
// with url.PathEscape, through the real /v1 handler as an authenticated tenant, on
// SQLite. The answer is 201 exactly for the tenant's own subscriber, message and a valid
// type; otherwise it is the documented error body with a 4xx, and nothing changes.
// Empty, "." and ".." segments are not sent: clients remove dot segments before sending
// (RFC 3986 5.2.4), and the mux redirects such paths to their clean form.
func FuzzActionPath(f *testing.F) {
	s := dbtest.Open(f, store.DialectSQLite)
	own := dbtest.NewTenant(f, s, "own")
	alice := own.Subscriber(f, "alice")
	mine := own.Message(f, alice, own.Template(f, "welcome"), nil)
	other := dbtest.NewTenant(f, s, "other")
	bob := other.Subscriber(f, "bob")
	theirs := other.Message(f, bob, other.Template(f, "welcome"), nil)

	res := NewBackend(s, slog.New(slog.NewTextHandler(io.Discard, nil)), func() time.Time { return fuzzClock }, nil)
	h := Chain(res, ChainOptions{})

	for _, typ := range []string{"primary", "secondary", "PRIMARY", "tertiary", "", "primary ", "\xff"} {
		f.Add("alice", mine.ID, typ)
	}
	f.Add("bob", theirs.ID, "primary")
	f.Add("alice", theirs.ID, "primary")
	f.Add("bob", mine.ID, "primary")
	f.Add("alice", strings.ToUpper(mine.ID), "primary")
	f.Add("alice", mine.ID+" ", "primary")
	f.Add("alice", mine.ID[:23], "primary")
	f.Add("alice", "a/b", "primary")
	f.Add("a/b", mine.ID, "primary")
	f.Add("alice", mine.ID, "primary/x")
	f.Add("alice", mine.ID+"%00", "primary")
	for _, v := range hostileStrings {
		f.Add(v, mine.ID, "primary")
		f.Add("alice", v, "primary")
		f.Add("alice", mine.ID, v)
	}

	var (
		mu     sync.Mutex
		marked int
	)
	f.Fuzz(func(t *testing.T, subscriberID, messageID, typ string) {
		for _, seg := range []string{subscriberID, messageID, typ} {
			if seg == "" || seg == "." || seg == ".." {
				t.Skip("empty and dot segments never reach the server")
			}
		}
		mu.Lock()
		defer mu.Unlock()
		marked++
		uri := "/v1/subscribers/" + url.PathEscape(subscriberID) + "/messages/" + url.PathEscape(messageID) +
			"/actions/" + url.PathEscape(typ)
		payload := fmt.Sprintf(`{"n":%d}`, marked)
		req := httptest.NewRequest(http.MethodPost, uri, strings.NewReader(`{"status":"done","payload":`+payload+`}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "ApiKey "+own.Key)

		before := messageRows(t, s)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		after := messageRows(t, s)

		match := subscriberID == "alice" && messageID == mine.ID && (typ == "primary" || typ == "secondary")
		if match {
			if rec.Code != http.StatusCreated {
				t.Fatalf("POST %s: %d, want 201: %s", uri, rec.Code, rec.Body)
			}
			var m models.Message
			if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil {
				t.Fatal(err)
			}
			if a := m.CTA.Action; m.ID != mine.ID || a == nil || a.Status != models.ActionDone || a.Result == nil ||
				string(a.Result.Type) != typ || string(a.Result.Payload) != payload {
				t.Fatalf("POST %s answered 201 without the requested state: %s", uri, rec.Body)
			}
			return
		}
		if rec.Code == http.StatusCreated {
			t.Fatalf("POST %s matched a message it does not name: %s", uri, rec.Body)
		}
		if diff := cmp.Diff(before, after); diff != "" {
			t.Fatalf("POST %s answered %d yet changed messages (-before +after):\n%s", uri, rec.Code, diff)
		}
		documentedError(t, rec, uri)
	})
}

// messageRows returns every stored message as JSON, in id order.
func messageRows(t testing.TB, s *store.Store) []string {
	t.Helper()
	var rows []models.Message
	if err := s.DB().Order("id").Find(&rows).Error; err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(rows))
	for i, m := range rows {
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = string(b)
	}
	return out
}

// documentedError checks a refusal of a mark: a 4xx with the error body, errors by field
// only on 422 and only for a path segment.
func documentedError(t testing.TB, rec *httptest.ResponseRecorder, uri string) {
	t.Helper()
	if rec.Code < 400 || rec.Code > 499 {
		t.Fatalf("POST %s: status %d, want a 4xx: %s", uri, rec.Code, rec.Body)
	}
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("POST %s: Content-Type %q", uri, ct)
	}
	dec := json.NewDecoder(bytes.NewReader(rec.Body.Bytes()))
	dec.DisallowUnknownFields()
	var body struct {
		StatusCode int                          `json:"statusCode"`
		Timestamp  string                       `json:"timestamp"`
		Path       string                       `json:"path"`
		Message    string                       `json:"message"`
		Error      string                       `json:"error"`
		Errors     map[string]models.FieldError `json:"errors"`
	}
	if err := dec.Decode(&body); err != nil {
		t.Fatalf("POST %s: %d body is not the documented error body (%v): %s", uri, rec.Code, err, rec.Body)
	}
	want := ErrorBody{StatusCode: rec.Code, Timestamp: "2025-03-01T09:30:15.250Z", Path: quote(uri, maxQuoted), Error: http.StatusText(rec.Code)}
	got := ErrorBody{StatusCode: body.StatusCode, Timestamp: body.Timestamp, Path: body.Path, Error: body.Error}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("POST %s: error body (-want +got):\n%s", uri, diff)
	}
	if body.Message == "" {
		t.Errorf("POST %s: error body without a message: %s", uri, rec.Body)
	}
	switch {
	case rec.Code == http.StatusUnprocessableEntity:
		if len(body.Errors) != 1 || body.Errors["subscriberId"].Messages == nil && body.Errors["type"].Messages == nil {
			t.Errorf("POST %s: 422 must name subscriberId or type: %s", uri, rec.Body)
		}
	case body.Errors != nil:
		t.Errorf("POST %s: errors on a %d: %s", uri, rec.Code, rec.Body)
	}
}
