package rest

// Fuzz targets for the shapes the inbox API's filters come in: the body of a bulk change,
// one filter of a count, and the query strings of the list and of the preferences. Each asserts that no input both
// passes and is partly ignored: what is accepted is accounted for member by member
// against a reading of the input made here independently of the decoders, and
// everything else is refused as invalid (422) or malformed (400), never a panic. CI
// fuzzes each for a bounded time, e.g.
//
//	go test ./rest -run '^$' -fuzz '^FuzzInboxBulkBody$' -fuzztime 15s

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"messages/models"
)

// objectMembers reads raw as one JSON object into its members in order, repeats kept;
// ok is false when raw is anything else.
func objectMembers(raw []byte) (names []string, values []json.RawMessage, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, nil, false
	}
	for dec.More() {
		tok, err := dec.Token()
		name, isName := tok.(string)
		if err != nil || !isName {
			return nil, nil, false
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, false
		}
		names, values = append(names, name), append(values, v)
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return nil, nil, false
	}
	if _, err := dec.Token(); err == nil {
		return nil, nil, false
	}
	return names, values, true
}

// member is the value of the one member of an object named name in any letter case,
// as encoding/json matches names; more than one such member is repeated.
func member(names []string, values []json.RawMessage, name string) (value json.RawMessage, found, repeated bool) {
	for i, n := range names {
		if strings.EqualFold(n, name) {
			if found {
				return nil, true, true
			}
			value, found = values[i], true
		}
	}
	return value, found, false
}

// onlyMembers reports whether every member of an object is one of known, in any case.
func onlyMembers(names []string, known ...string) bool {
	for _, n := range names {
		if !slices.ContainsFunc(known, func(k string) bool { return strings.EqualFold(n, k) }) {
			return false
		}
	}
	return true
}

// isNull reports whether raw is JSON null, or absent.
func isNull(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || string(t) == "null"
}

// stringList reads raw as an array of non-empty strings.
func stringList(raw json.RawMessage) ([]string, bool) {
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil || items == nil {
		return nil, false
	}
	out := []string{}
	for _, item := range items {
		var s string
		if bytes.HasPrefix(bytes.TrimSpace(item), []byte(`"`)) && json.Unmarshal(item, &s) == nil && s != "" {
			out = append(out, s)
			continue
		}
		return nil, false
	}
	return out, true
}

// wantTags is, independently of tagsFilter, the groups a tags filter means, and whether
// it is one of the client's forms at all.
func wantTags(raw json.RawMessage) ([][]string, bool) {
	if isNull(raw) {
		return nil, true
	}
	if list, ok := stringList(raw); ok {
		if len(list) == 0 {
			return nil, true
		}
		return [][]string{list}, true
	}
	names, values, ok := objectMembers(raw)
	if !ok || len(names) != 1 {
		return nil, false
	}
	switch {
	case strings.EqualFold(names[0], "or"):
		list, ok := stringList(values[0])
		if !ok {
			return nil, false
		}
		if len(list) == 0 {
			return nil, true
		}
		return [][]string{list}, true
	case strings.EqualFold(names[0], "and"):
		var groups []json.RawMessage
		if json.Unmarshal(values[0], &groups) != nil || groups == nil {
			return nil, false
		}
		var out [][]string
		for _, g := range groups {
			gn, gv, ok := objectMembers(g)
			if !ok || len(gn) != 1 || !strings.EqualFold(gn[0], "or") {
				return nil, false
			}
			list, ok := stringList(gv[0])
			if !ok || len(list) == 0 {
				return nil, false
			}
			out = append(out, list)
		}
		return out, true
	}
	return nil, false
}

// emptyDataFilter is, independently of emptyData, whether a data filter filters nothing.
func emptyDataFilter(raw json.RawMessage, text bool) bool {
	if isNull(raw) {
		return true
	}
	if text {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			raw = json.RawMessage(s)
		}
	}
	names, _, ok := objectMembers(bytes.TrimSpace(raw))
	return ok && len(names) == 0
}

// refusedAsCoded fails t unless err is a refusal of the documented kinds: invalid (422)
// naming one member, or malformed (400).
func refusedAsCoded(t *testing.T, input []byte, err error) {
	t.Helper()
	var status *statusError
	if errors.As(err, &status) {
		return // 413 or 415, before any member is read
	}
	switch models.ErrorCode(err) {
	case models.EMALFORMED:
	case models.EINVALID:
		var e *models.Error
		if !errors.As(err, &e) || len(e.Fields) != 1 {
			t.Fatalf("%q: invalid error %v names no one member", input, err)
		}
	default:
		t.Fatalf("%q: error %v (%T), want invalid or malformed", input, err, err)
	}
}

var fuzzTagSeeds = []string{
	`["billing"]`, `["a","b"]`, `[]`, `null`, `{"or":["a"]}`, `{"or":[]}`, `{"and":[]}`,
	`{"and":[{"or":["a"]},{"or":["b"]}]}`, `{"and":[{"OR_typo":["no-such-tag"]}]}`,
	`{"and":[{"and":[{"or":["a"]}]}]}`, `{"and":[{"or":[]}]}`, `{"and":[{}]}`, `{}`,
	`{"or":["a"],"and":[]}`, `{"or":["a"],"Or":[]}`, `{"OR":["a"]}`, `[5]`, `["a",null]`, `[""]`,
	`"billing"`, `{"nor":["a"]}`, `{"or":"a"}`, `{"and":{"or":["a"]}}`, `{"and":[{"or":["a"],"x":1}]}`,
}

// FuzzInboxBulkBody sends bodies of POST /v1/inbox/notifications/{bulk} through its
// decoder and check. Accepted, every member is one the change applies: notificationIds
// (seen only) as sent, tags as the groups they mean, data only when it filters nothing.
func FuzzInboxBulkBody(f *testing.F) {
	for _, tags := range fuzzTagSeeds {
		f.Add("archive", []byte(`{"tags":`+tags+`}`))
	}
	for _, body := range []string{
		`{}`, `{"notificationIds":["a","b"]}`, `{"notificationIds":[]}`, `{"notificationIds":"abc"}`,
		`{"notificationIds":[5]}`, `{"notificationIds":[null]}`, `{"notificationIds":null}`,
		`{"notificationIds":["a"],"NotificationIds":[]}`, `{"tags":["a"],"tags":[]}`, `{"tagz":["a"]}`,
		`{"data":"{}"}`, `{"data":{}}`, `{"data":null}`, `{"data":"{\"a\":1}"}`, `{"data":{"a":1}}`, `{"data":5}`,
		`{"tags":["a"],"data":"{}","notificationIds":["x"]}`, `{"tags":["a"]} x`, `[]`, `{`, `null`,
		`{"transactionId":"t-1"}`, `{"transactionId":""}`, `{"transactionId":5}`, `{"transactionId":null}`,
		`{"transactionId":"t","notificationIds":["a"]}`,
	} {
		for _, name := range []string{"seen", "archive"} {
			f.Add(name, []byte(body))
		}
	}
	f.Fuzz(func(t *testing.T, name string, raw []byte) {
		if _, ok := inboxBulk[name]; !ok {
			return
		}
		r := httptest.NewRequest(http.MethodPost, "/v1/inbox/notifications/"+name, bytes.NewReader(raw))
		r.Header.Set("Content-Type", "application/json")
		body, err := readBulkBody(httptest.NewRecorder(), r, name)
		if err != nil {
			refusedAsCoded(t, raw, err)
			return
		}
		if len(raw) == 0 {
			if !reflect.DeepEqual(body, inboxBulkBody{}) {
				t.Fatalf("no body read as %+v", body)
			}
			return
		}
		names, values, ok := objectMembers(bytes.TrimSpace(raw))
		if !ok {
			t.Fatalf("%q accepted but is not one JSON object", raw)
		}
		if !onlyMembers(names, "notificationIds", "tags", "data", "transactionId") {
			t.Fatalf("%q accepted with a member the change does not take: %q", raw, names)
		}
		ids, found, repeated := member(names, values, "notificationIds")
		tags, tagsFound, tagsRepeated := member(names, values, "tags")
		data, _, dataRepeated := member(names, values, "data")
		txn, txnFound, txnRepeated := member(names, values, "transactionId")
		if repeated || tagsRepeated || dataRepeated || txnRepeated {
			t.Fatalf("%q accepted with a member given twice", raw)
		}
		var wantTxn string
		if txnFound && !isNull(txn) && (json.Unmarshal(txn, &wantTxn) != nil || wantTxn == "") {
			t.Fatalf("%q accepted a transactionId that is not a transaction id", raw)
		}
		if (body.TransactionID == nil) != (wantTxn == "") || body.TransactionID != nil && *body.TransactionID != wantTxn {
			t.Fatalf("%q: transactionId %v, want %q", raw, body.TransactionID, wantTxn)
		}
		if body.TransactionID != nil && body.NotificationIDs != nil {
			t.Fatalf("%q accepted both notificationIds and transactionId", raw)
		}
		switch {
		case !found || isNull(ids):
			if body.NotificationIDs != nil {
				t.Fatalf("%q: notificationIds %v from nothing", raw, *body.NotificationIDs)
			}
		case name != "seen":
			t.Fatalf("%q accepted notificationIds on %s, which would change every message", raw, name)
		default:
			want, ok := stringList(ids)
			if !ok || body.NotificationIDs == nil || !slices.Equal(want, *body.NotificationIDs) {
				t.Fatalf("%q: notificationIds %v, want %q (ok %v)", raw, body.NotificationIDs, want, ok)
			}
		}
		want, ok := wantTags(tags)
		if tagsFound && !ok {
			t.Fatalf("%q accepted tags that are none of the client's forms", raw)
		}
		if !reflect.DeepEqual(want, body.Tags.groups) {
			t.Fatalf("%q: tags %q, want %q", raw, body.Tags.groups, want)
		}
		if !emptyDataFilter(data, true) {
			t.Fatalf("%q accepted a data filter this server cannot apply", raw)
		}
	})
}

// FuzzCountFilter sends one filter of GET /v1/inbox/notifications/count through
// parseCountFilter. Accepted, every member is applied: the state flags as sent, the
// severities, the tags as the groups they mean, the creation bounds to the millisecond,
// data only when it filters nothing.
func FuzzCountFilter(f *testing.F) {
	for _, tags := range fuzzTagSeeds {
		f.Add([]byte(`{"read":false,"tags":` + tags + `}`))
	}
	for _, filter := range []string{
		`{}`, `{"read":false,"archived":false,"snoozed":false,"severity":"none"}`, `{"seen":true,"severity":["low","none"]}`,
		`{"read":null}`, `{"read":"false"}`, `{"reed":false}`, `{"read":true,"read":false}`, `{"read":true,"READ":false}`,
		`{"severity":5}`, `{"severity":[null]}`, `{"severity":"urgent"}`, `{"severity":[]}`,
		`{"createdGte":1740816000000,"createdLte":1740816100000}`, `{"createdGte":1.5}`, `{"createdGte":"1"}`,
		`{"createdLte":1e3}`, `{"createdLte":99999999999999999999}`, `{"data":{}}`, `{"data":{"a":1}}`, `{"data":"{}"}`,
		`[]`, `5`, `null`, `{"read":false} {}`, `{"contextKeys":[]}`,
	} {
		f.Add([]byte(filter))
	}
	flags := []struct {
		name string
		got  func(models.StateFilter) *bool
	}{
		{"read", func(s models.StateFilter) *bool { return s.Read }},
		{"seen", func(s models.StateFilter) *bool { return s.Seen }},
		{"archived", func(s models.StateFilter) *bool { return s.Archived }},
		{"snoozed", func(s models.StateFilter) *bool { return s.Snoozed }},
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, err := parseCountFilter(raw)
		if err != nil {
			refusedAsCoded(t, raw, err)
			return
		}
		names, values, ok := objectMembers(bytes.TrimSpace(raw))
		if !ok {
			t.Fatalf("%q accepted but is not one JSON object", raw)
		}
		if !onlyMembers(names, "read", "seen", "archived", "snoozed", "severity", "tags", "data", "createdGte", "createdLte") {
			t.Fatalf("%q accepted with a member a filter does not take: %q", raw, names)
		}
		for _, n := range []string{"read", "seen", "archived", "snoozed", "severity", "tags", "data", "createdGte", "createdLte"} {
			if _, _, repeated := member(names, values, n); repeated {
				t.Fatalf("%q accepted with %s given twice", raw, n)
			}
		}
		for _, flag := range flags {
			v, _, _ := member(names, values, flag.name)
			var want *bool
			if !isNull(v) {
				b, err := strconv.ParseBool(string(bytes.TrimSpace(v)))
				if err != nil || (string(bytes.TrimSpace(v)) != "true" && string(bytes.TrimSpace(v)) != "false") {
					t.Fatalf("%q accepted %s = %s", raw, flag.name, v)
				}
				want = &b
			}
			if g := flag.got(got.state); (g == nil) != (want == nil) || g != nil && *g != *want {
				t.Fatalf("%q: %s = %v, want %v", raw, flag.name, g, want)
			}
		}
		sev, _, _ := member(names, values, "severity")
		if !isNull(sev) {
			var one string
			list, isList := stringList(sev)
			switch {
			case json.Unmarshal(sev, &one) == nil:
				list = []string{one}
			case !isList:
				t.Fatalf("%q accepted severity %s", raw, sev)
			}
			for _, v := range models.Severities {
				if len(list) > 0 && got.state.Severities.Has(v) != slices.Contains(list, string(v)) {
					t.Fatalf("%q: severities %v for %q", raw, got.state.Severities.List(), list)
				}
			}
		}
		tags, _, _ := member(names, values, "tags")
		want, ok := wantTags(tags)
		if !ok || !reflect.DeepEqual(want, got.tags) {
			t.Fatalf("%q: tags %q, want %q (a client form: %v)", raw, got.tags, want, ok)
		}
		for _, c := range []struct {
			name string
			got  *models.Time
		}{{"createdGte", got.createdFrom}, {"createdLte", got.createdTo}} {
			v, _, _ := member(names, values, c.name)
			if isNull(v) {
				if c.got != nil {
					t.Fatalf("%q: %s %v from nothing", raw, c.name, c.got)
				}
				continue
			}
			ms, err := strconv.ParseInt(string(bytes.TrimSpace(v)), 10, 64)
			if err != nil || c.got == nil || !c.got.Equal(createdBound(ms).Time) {
				t.Fatalf("%q: %s = %v, want %s ms", raw, c.name, c.got, v)
			}
		}
		data, _, _ := member(names, values, "data")
		if !emptyDataFilter(data, false) {
			t.Fatalf("%q accepted a data filter this server cannot apply", raw)
		}
	})
}

// FuzzInboxListQuery sends raw query strings through url.ParseQuery and
// parseInboxQuery. Accepted, every key is one the list applies, each single-valued one
// once, and the tags are the groups the keys name.
func FuzzInboxListQuery(f *testing.F) {
	for _, seed := range []string{
		"", "limit=10&offset=20", "after=abc&read=false&archived=false", "severity=high", "severity[]=low&severity[]=none",
		"tags[]=a&tags[]=b", "tags[0][]=a&tags[1][]=b", "tags=a", "tags[0]=a", "tags[x][]=a", "tags[]=", "tags[0][][]=a",
		"read=true&read=false", "reed=false", "Read=false", "data=%7B%7D", "data=%7B%22a%22%3A1%7D",
		"createdGte=1740816000000&createdLte=1740816100000", "createdGte=1.5", "severity[x]=high", "severity=urgent",
		"limit=5&limit=6", "&&=&x", "tags[01][]=a&tags[1][]=b",
	} {
		f.Add(seed)
	}
	single := []string{"limit", "offset", "after", "read", "seen", "archived", "snoozed", "data", "createdGte", "createdLte"}
	f.Fuzz(func(t *testing.T, raw string) {
		v, err := url.ParseQuery(raw)
		if err != nil {
			return // the handler refuses a malformed query string before (inboxQuery)
		}
		q, _, _, err := parseInboxQuery(v)
		if err != nil {
			refusedAsCoded(t, []byte(raw), err)
			return
		}
		var flat []string
		groups := map[int][]string{}
		for k, vals := range v {
			switch {
			case slices.Contains(single, k):
				if len(vals) != 1 {
					t.Fatalf("%q accepted %s given %d times", raw, k, len(vals))
				}
			case k == "severity" || k == "severity[]":
			case strings.HasPrefix(k, "severity[") && strings.HasSuffix(k, "]"):
				if _, err := strconv.ParseUint(k[len("severity["):len(k)-1], 10, 63); err != nil {
					t.Fatalf("%q accepted the key %q", raw, k)
				}
			case k == "tags" || k == "tags[]":
				flat = append(flat, vals...)
			case strings.HasPrefix(k, "tags[") && strings.HasSuffix(k, "][]"):
				n, err := strconv.ParseUint(k[len("tags["):len(k)-len("][]")], 10, 63)
				if err != nil {
					t.Fatalf("%q accepted the key %q", raw, k)
				}
				groups[int(n)] = append(groups[int(n)], vals...)
			default:
				t.Fatalf("%q accepted the key %q, which the list does not read", raw, k)
			}
		}
		if d, ok := first(v, "data"); ok && !emptyDataFilter(json.RawMessage(d), false) {
			t.Fatalf("%q accepted a data filter this server cannot apply", raw)
		}
		var want [][]string
		if len(flat) > 0 {
			want = append(want, flat)
		}
		for _, n := range slices.Sorted(maps.Keys(groups)) {
			want = append(want, groups[n])
		}
		if len(want) != len(q.Tags) {
			t.Fatalf("%q: tags %q, want %q", raw, q.Tags, want)
		}
		for i := range want {
			if !equalMultiset(want[i], q.Tags[i]) || slices.Contains(want[i], "") {
				t.Fatalf("%q: tags %q, want %q, no tag empty", raw, q.Tags, want)
			}
		}
	})
}

// FuzzPreferencesQuery sends raw query strings through url.ParseQuery and
// parsePreferencesQuery. Accepted, every key is one the preferences apply (tags in the
// encodings arrayParam reads, severity, criticality once), every tag is applied, and no
// tag is empty.
func FuzzPreferencesQuery(f *testing.F) {
	for _, seed := range []string{
		"", "tags[]=a&tags[]=b", "tags=a", "tags[0]=a&tags[1]=b", "tags[0][]=a", "tags[]=", "tag=a", "severity=high",
		"severity[]=none", "criticality=all", "criticality=all&criticality=critical", "criticality=some", "Tags[]=a", "&&=&x",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		v, err := url.ParseQuery(raw)
		if err != nil {
			return // refused before (inboxQuery)
		}
		q, err := parsePreferencesQuery(v)
		if err != nil {
			refusedAsCoded(t, []byte(raw), err)
			return
		}
		var tags []string
		for k, vals := range v {
			switch {
			case k == "criticality":
				if len(vals) != 1 {
					t.Fatalf("%q accepted criticality given %d times", raw, len(vals))
				}
			case k == "tags" || k == "tags[]":
				tags = append(tags, vals...)
			case strings.HasPrefix(k, "tags[") && strings.HasSuffix(k, "]"):
				if _, err := strconv.ParseUint(k[len("tags["):len(k)-1], 10, 63); err != nil {
					t.Fatalf("%q accepted the key %q", raw, k)
				}
				tags = append(tags, vals...)
			case k == "severity" || k == "severity[]":
			case strings.HasPrefix(k, "severity[") && strings.HasSuffix(k, "]"):
				if _, err := strconv.ParseUint(k[len("severity["):len(k)-1], 10, 63); err != nil {
					t.Fatalf("%q accepted the key %q", raw, k)
				}
			default:
				t.Fatalf("%q accepted the key %q, which the preferences do not read", raw, k)
			}
		}
		if !equalMultiset(tags, q.tags) || slices.Contains(q.tags, "") {
			t.Fatalf("%q: tags %q, want %q, none empty", raw, q.tags, tags)
		}
	})
}
