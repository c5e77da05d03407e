package rest

import (
	"bytes"
	"encoding/json"
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
	q, f, echo, err := parseInboxQuery(values)
	if err != nil {
		s.errors.WriteError(w, r, err)
		return
	}
	page := []models.InboxNotification{}
	more := false
	if !f.noneMatch {
		msgs, hasMore, err := s.service.Inbox(r.Context(), q)
		if err != nil {
			s.errors.WriteError(w, r, err)
			return
		}
		for _, m := range msgs {
			page = append(page, models.NewInboxNotification(m))
		}
		more = hasMore
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
	// noneMatch is set when the filter asks only for severities no message has: every
	// message's severity is none.
	noneMatch bool
}

// parseInboxQuery reads the list's query values: limit, offset, after, the state flags,
// severity, tags, createdGte and createdLte. The one filter this server cannot apply,
// data, is refused by name rather than ignored, which would answer messages it excludes.
func parseInboxQuery(v url.Values) (service.InboxQuery, inboxFilter, map[string]any, error) {
	q := service.InboxQuery{Channel: &inAppChannel, Parts: models.ListOptions{Subscribers: true, Templates: true}}
	var f inboxFilter
	echo := map[string]any{}
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
		if f.noneMatch, err = severityFilter(severities); err != nil {
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
// (a or b), or several, tags[0][]=a&tags[1][]=b (a and b). Other bracketed forms are
// refused by name rather than ignored.
func queryTags(v url.Values) ([][]string, error) {
	var flat []string
	indexed := map[int][]string{}
	for k, vals := range v {
		switch {
		case k == "tags" || k == "tags[]":
			flat = append(flat, vals...)
		case strings.HasPrefix(k, "tags["):
			n, ok := bracketIndex(strings.TrimSuffix(strings.TrimPrefix(k, "tags["), "[]"))
			if !ok || !strings.HasSuffix(k, "][]") {
				return nil, models.Invalid("tags", quotedKey(k), "tags is sent as tags[]=a, or in groups as tags[0][]=a&tags[1][]=b")
			}
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

// jsonTags reads a tags filter of a JSON body or count filter in the client's forms:
// ["a", "b"] or {"or": ["a", "b"]} (a or b), {"and": [{"or": ["a"]}, {"or": ["b"]}]} (a
// and b); null and empty forms filter nothing.
func jsonTags(raw json.RawMessage) ([][]string, error) {
	refused := models.Invalid("tags", rawValue(raw), `tags must be ["a", ...], {"or": ["a", ...]} or {"and": [{"or": ["a", ...]}, ...]}`)
	if len(raw) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return nil, nil
	}
	var list []string
	if json.Unmarshal(raw, &list) == nil {
		return nonEmptyGroups([][]string{list}), nil
	}
	var form struct {
		Or  *[]string `json:"or"`
		And *[]struct {
			Or []string `json:"or"`
		} `json:"and"`
	}
	if err := json.Unmarshal(raw, &form); err != nil || (form.Or != nil) == (form.And != nil) {
		if err == nil && form.Or == nil && form.And == nil && emptyObject(raw) {
			return nil, nil
		}
		return nil, refused
	}
	if form.Or != nil {
		return nonEmptyGroups([][]string{*form.Or}), nil
	}
	groups := make([][]string, 0, len(*form.And))
	for _, g := range *form.And {
		groups = append(groups, g.Or)
	}
	return nonEmptyGroups(groups), nil
}

// nonEmptyGroups drops empty groups, which the client's own filtering ignores too.
func nonEmptyGroups(groups [][]string) [][]string {
	var out [][]string
	for _, g := range groups {
		if len(g) > 0 {
			out = append(out, g)
		}
	}
	return out
}

// severityFilter checks each severity is one of the client's and reports whether none
// of them is none, the severity of every message: then nothing matches.
func severityFilter(severities []string) (noneMatch bool, err error) {
	for _, s := range severities {
		if !slices.Contains(models.Severities, s) {
			return false, models.Invalid("severity", s, "severity must be one of "+strings.Join(models.Severities, ", "))
		}
	}
	return !slices.Contains(severities, models.SeverityNone), nil
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
