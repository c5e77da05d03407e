package rest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"messages/models"
	"messages/models/service"
)

// The platform's inbox API, as @novu/js 3.19.2 calls it (docs/inbox.md): a subscriber
// session's in-app messages as the client's notifications, their counts by filter, and
// their state changes. It is the client's contract, not this server's /v1 one, so the
// OpenAPI document does not list it; every call ends in the same service as GraphQL's.

// inAppChannel is the only channel the inbox API sees.
var inAppChannel = models.ChannelInApp

// inboxCaller is the caller of an inbox request: a subscriber session, since the inbox
// is one subscriber's. An API key has no subscriber and is refused.
func inboxCaller(r *http.Request) (models.Caller, error) {
	caller, err := models.CallerFrom(r.Context())
	if err != nil {
		return caller, err
	}
	if !caller.Scoped() {
		return caller, models.Errorf(models.EFORBIDDEN,
			"the inbox API is a subscriber's: call it with the session token of POST /v1/inbox/session, not an API key")
	}
	return caller, nil
}

// inboxQuery is the query string of a subscriber session's inbox request (inboxCaller).
func inboxQuery(r *http.Request) (url.Values, error) {
	if _, err := inboxCaller(r); err != nil {
		return nil, err
	}
	values, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, models.Errorf(models.EMALFORMED, "query string is malformed: %s", err)
	}
	return values, nil
}

// inboxNotifications serves GET /v1/inbox/notifications: a page of the session's in-app
// messages, newest first, counted from offset or after a message's id.
func (s *Server) inboxNotifications(w http.ResponseWriter, r *http.Request) {
	values, err := inboxQuery(r)
	if err != nil {
		s.errors.WriteError(w, r, err)
		return
	}
	q, _, echo, err := parseInboxQuery(values)
	if err != nil {
		s.errors.WriteError(w, r, err)
		return
	}
	msgs, more, err := s.service.Inbox(r.Context(), q)
	if err != nil {
		s.errors.WriteError(w, r, err)
		return
	}
	page := make([]models.InboxNotification, 0, len(msgs))
	for _, m := range msgs {
		page = append(page, models.NewInboxNotification(m))
	}
	writeJSON(w, http.StatusOK, struct {
		Data    []models.InboxNotification `json:"data"`
		HasMore bool                       `json:"hasMore"`
		Filter  map[string]any             `json:"filter"`
	}{page, more, echo})
}

// inboxFilter is one of the client's NotificationFilters in the service's terms.
type inboxFilter struct {
	state models.StateFilter
	// tags are the workflow tags, and createdFrom and createdTo the creation range, of the
	// messages to count (count filters only).
	tags                   [][]string
	createdFrom, createdTo *models.Time
}

// parseInboxQuery reads the list's query values: limit, offset, after, the state flags,
// severity, tags, createdGte and createdLte. A parameter it does not know, one given
// twice, and the one filter this server cannot apply, data, are refused by name rather
// than ignored, which would answer messages they exclude.
func parseInboxQuery(v url.Values) (service.InboxQuery, inboxFilter, map[string]any, error) {
	q := service.InboxQuery{Channel: &inAppChannel, Parts: models.ListOptions{Subscribers: true, Templates: true}}
	var f inboxFilter
	echo := map[string]any{}
	if err := checkParams(v, inboxListParams, inboxListArrays, "GET /v1/inbox/notifications takes "+inboxListTakes); err != nil {
		return q, f, nil, err
	}
	var err error
	if q.Limit, err = intParam(v, "limit"); err != nil {
		return q, f, nil, err
	}
	if q.Offset, err = intParam(v, "offset"); err != nil {
		return q, f, nil, err
	}
	if after, ok := first(v, "after"); ok && after != "" {
		q.AfterID = &after
	}
	for _, flag := range stateFlags {
		raw, ok := first(v, flag.name)
		if !ok {
			continue
		}
		b, err := boolValue(flag.name, raw)
		if err != nil {
			return q, f, nil, err
		}
		*flag.field(&f.state) = &b
		echo[flag.name] = b
	}
	severities := arrayParam(v, "severity")
	if len(severities) > 0 {
		if f.state.Severities, err = severityFilter(severities); err != nil {
			return q, f, nil, err
		}
		echo["severity"] = severities
	}
	if q.Tags, err = queryTags(v); err != nil {
		return q, f, nil, err
	}
	if len(q.Tags) > 0 {
		echo["tags"] = echoTags(q.Tags)
	}
	if raw, ok := first(v, "data"); ok && !emptyObject([]byte(raw)) {
		return q, f, nil, unsupportedFilter("data", raw)
	}
	for _, c := range []struct {
		name  string
		bound **models.Time
	}{{"createdGte", &q.CreatedFrom}, {"createdLte", &q.CreatedTo}} {
		raw, ok := first(v, c.name)
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(raw, 10, 64)
		if err != nil {
			return q, f, nil, createdInvalid(c.name, raw)
		}
		*c.bound = createdBound(n)
		echo[c.name] = n
	}
	q.State = f.state
	return q, f, echo, nil
}

// inboxListParams are the list's parameters that take one value.
var inboxListParams = []string{"limit", "offset", "after", "read", "seen", "archived", "snoozed", "data", "createdGte", "createdLte"}

const inboxListTakes = "limit, offset, after, read, seen, archived, snoozed, severity, tags, data, createdGte and createdLte"

// inboxListArrays reports the keys of the list's arrays: severity (severity=a,
// severity[]=a, severity[0]=a) and tags (tags[]=a, or in groups tags[0][]=a).
func inboxListArrays(key string) bool {
	return arrayKey(key, "severity") || key == "tags" || key == "tags[]" || tagGroupKey(key)
}

// arrayKey reports whether key is one of the keys arrayParam reads for name: name,
// name[] or name[N].
func arrayKey(key, name string) bool {
	brackets, ok := strings.CutPrefix(key, name)
	if !ok {
		return false
	}
	if brackets == "" || brackets == "[]" {
		return true
	}
	_, ok = bracketIndex(strings.TrimPrefix(brackets, "["))
	return ok && brackets[0] == '['
}

// tagGroupKey reports whether key is tags[N][], a group of the client's tags.
func tagGroupKey(key string) bool {
	inner, ok := strings.CutPrefix(key, "tags[")
	if !ok {
		return false
	}
	index, ok := strings.CutSuffix(inner, "[]")
	if !ok {
		return false
	}
	_, ok = bracketIndex(index)
	return ok
}

// checkParams refuses, naming it, a query parameter that is neither one of single, given
// once, nor a key arrays reports: ignored, it would drop the filter it was meant to be.
// takes says what the route takes.
func checkParams(v url.Values, single []string, arrays func(key string) bool, takes string) error {
	var bad []string
	for k, vals := range v {
		if slices.Contains(single, k) && len(vals) > 1 || !slices.Contains(single, k) && !arrays(k) {
			bad = append(bad, k)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	slices.Sort(bad) // the same refusal for the same query
	key := bad[0]
	if slices.Contains(single, key) {
		return models.Invalid(key, v[key], key+" is given more than once: give it once")
	}
	if name, _, _ := strings.Cut(key, "["); name != key && (slices.Contains(single, name) || arrays(name)) {
		// A parameter's name in a form this server does not read, as tags[x]=a.
		return models.Invalid(name, quotedKey(key), fmt.Sprintf("%s is not a form of %s this server reads: %s", quotedKey(key), name, takes))
	}
	var value any = v[key]
	if len(v[key]) == 1 {
		value = quotedKey(v[key][0])
	}
	key = quotedKey(key)
	return models.Invalid(key, value, fmt.Sprintf("unknown parameter %q: %s", key, takes))
}

// stateFlags are the client's state filters and the StateFilter field each sets.
var stateFlags = []struct {
	name  string
	field func(*models.StateFilter) **bool
}{
	{"read", func(f *models.StateFilter) **bool { return &f.Read }},
	{"seen", func(f *models.StateFilter) **bool { return &f.Seen }},
	{"archived", func(f *models.StateFilter) **bool { return &f.Archived }},
	{"snoozed", func(f *models.StateFilter) **bool { return &f.Snoozed }},
}

func boolValue(name, raw string) (bool, error) {
	switch raw {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, models.Invalid(name, raw, name+" must be true or false")
}

// queryTags reads the list's tags in the client's two forms: one group, tags[]=a&tags[]=b
// (a or b), or several, tags[0][]=a&tags[1][]=b (a and b). Other keys are refused before
// (checkParams); an empty tag is refused, as no workflow has one.
func queryTags(v url.Values) ([][]string, error) {
	var flat []string
	indexed := map[int][]string{}
	for k, vals := range v {
		switch {
		case k == "tags" || k == "tags[]":
			flat = append(flat, vals...)
		case tagGroupKey(k):
			n, _ := bracketIndex(strings.TrimSuffix(strings.TrimPrefix(k, "tags["), "[]"))
			indexed[n] = append(indexed[n], vals...)
		}
	}
	var groups [][]string
	if len(flat) > 0 {
		groups = append(groups, flat)
	}
	for _, n := range slices.Sorted(maps.Keys(indexed)) {
		groups = append(groups, indexed[n])
	}
	for _, g := range groups {
		if slices.Contains(g, "") {
			return nil, models.Invalid("tags", "", tagsForms)
		}
	}
	return groups, nil
}

// echoTags is a list's tags filter as the client spells it: one group as its tags, several
// as {"and": [{"or": [...]}, ...]}.
func echoTags(groups [][]string) any {
	if len(groups) == 1 {
		return groups[0]
	}
	and := make([]map[string][]string, len(groups))
	for i, g := range groups {
		and[i] = map[string][]string{"or": g}
	}
	return map[string]any{"and": and}
}

// tagsForms says what a tags filter may be.
const tagsForms = `tags must be ["a", ...], {"or": ["a", ...]} or {"and": [{"or": ["a", ...]}, ...]}, each tag a non-empty string and no group empty`

// tagsFilter is the client's tags filter in a JSON body or count filter: ["a", "b"] or
// {"or": ["a", "b"]} (a or b), {"and": [{"or": ["a"]}, {"or": ["b"]}]} (a and b). null
// and the empty forms [], {"or": []} and {"and": []} filter nothing, as the client's own
// encoding of a list's tags takes them. Anything else is refused: a member of another
// name, a group without tags inside an and, a tag that is not a non-empty string.
type tagsFilter struct {
	groups [][]string
}

// UnmarshalJSON reads the filter, refusing what it cannot apply.
func (f *tagsFilter) UnmarshalJSON(raw []byte) error {
	refused := models.Invalid("tags", nil, tagsForms)
	raw = bytes.TrimSpace(raw)
	f.groups = nil
	switch {
	case string(raw) == "null":
		return nil
	case raw[0] == '[':
		var list []string
		if decodeStrict(raw, &list, "") != nil || slices.Contains(list, "") {
			return refused
		}
		if len(list) > 0 {
			f.groups = [][]string{list}
		}
		return nil
	case raw[0] == '{':
		var form struct {
			Or  *[]string `json:"or"`
			And *[]struct {
				Or *[]string `json:"or"`
			} `json:"and"`
		}
		if decodeStrict(raw, &form, "") != nil || (form.Or == nil) == (form.And == nil) {
			return refused
		}
		if form.Or != nil {
			if slices.Contains(*form.Or, "") {
				return refused
			}
			if len(*form.Or) > 0 {
				f.groups = [][]string{*form.Or}
			}
			return nil
		}
		for _, g := range *form.And {
			if g.Or == nil || len(*g.Or) == 0 || slices.Contains(*g.Or, "") {
				return refused
			}
			f.groups = append(f.groups, *g.Or)
		}
		return nil
	}
	return refused
}

// severityFilter is the set of the client's severities; one it does not know is refused.
func severityFilter(severities []string) (models.SeveritySet, error) {
	var set models.SeveritySet
	for _, s := range severities {
		one, ok := models.NewSeveritySet([]models.Severity{models.Severity(s)})
		if !ok {
			names := make([]string, len(models.Severities))
			for i, v := range models.Severities {
				names[i] = string(v)
			}
			return 0, models.Invalid("severity", s, "severity must be one of "+strings.Join(names, ", "))
		}
		set |= one
	}
	return set, nil
}

// unsupportedFilter refuses a filter of the client's that this server cannot apply.
func unsupportedFilter(name string, value any) error {
	return models.Invalid(name, value, "this server does not filter notifications by "+name+
		" (docs/inbox.md): leave it out, or use the read, seen, archived, snoozed, severity, tags and created filters")
}

// emptyObject reports whether raw is a JSON object with no members, or null.
func emptyObject(raw []byte) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(raw, &m) == nil && len(m) == 0
}
