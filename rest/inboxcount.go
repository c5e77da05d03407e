package rest

import (
	"encoding/json"
	"net/http"
	"net/url"
	"time"

	"messages/models"
	"messages/models/service"
)

// inboxCount serves GET /v1/inbox/notifications/count?filters=[...]: how many of the
// session's in-app messages each filter matches, exactly, each answer with its filter as
// sent.
func (s *Server) inboxCount(w http.ResponseWriter, r *http.Request) {
	values, err := inboxQuery(r)
	if err != nil {
		s.errors.WriteError(w, r, err)
		return
	}
	raw, filters, err := parseCountFilters(values)
	if err != nil {
		s.errors.WriteError(w, r, err)
		return
	}
	query := make([]service.InboxFilter, len(filters))
	for i, f := range filters {
		query[i] = service.InboxFilter{State: f.state, Tags: f.tags, CreatedFrom: f.createdFrom, CreatedTo: f.createdTo}
	}
	counts, err := s.service.InboxCounts(r.Context(), nil, &inAppChannel, query)
	if err != nil {
		s.errors.WriteError(w, r, err)
		return
	}
	type filterCount struct {
		Count  int             `json:"count"`
		Filter json.RawMessage `json:"filter"`
	}
	out := make([]filterCount, len(filters))
	for i, f := range filters {
		out[i] = filterCount{Filter: raw[i]}
		if !f.noneMatch {
			out[i].Count = counts[i]
		}
	}
	writeJSON(w, http.StatusOK, envelope{out})
}

// parseCountFilters reads the filters parameter, a JSON array of the client's
// NotificationFilters, and returns each as sent and as parsed.
func parseCountFilters(v url.Values) ([]json.RawMessage, []inboxFilter, error) {
	text, ok := first(v, "filters")
	if !ok {
		return nil, nil, models.Invalid("filters", nil, `filters is required: a JSON array of filters, as filters=[{"read":false}]`)
	}
	var raw []json.RawMessage
	if err := json.Unmarshal([]byte(text), &raw); err != nil {
		return nil, nil, models.Invalid("filters", text, `filters must be a JSON array of filter objects, as [{"read":false}]`)
	}
	if len(raw) > service.MaxStateFilters {
		return nil, nil, models.Invalid("filters", len(raw), "at most 30 filters may be counted at once")
	}
	out := make([]inboxFilter, len(raw))
	for i, r := range raw {
		f, err := parseCountFilter(r)
		if err != nil {
			return nil, nil, err
		}
		out[i] = f
	}
	return raw, out, nil
}

// parseCountFilter reads one filter object; members it does not know are ignored, as
// the client's own are (contextKeys).
func parseCountFilter(raw json.RawMessage) (inboxFilter, error) {
	var f inboxFilter
	var members map[string]json.RawMessage
	if err := json.Unmarshal(raw, &members); err != nil || members == nil {
		return f, models.Invalid("filters", rawValue(raw), "each filter must be a JSON object")
	}
	for _, flag := range stateFlags {
		m, ok := members[flag.name]
		if !ok || string(m) == "null" {
			continue
		}
		var b bool
		if err := json.Unmarshal(m, &b); err != nil {
			return f, models.Invalid(flag.name, rawValue(m), flag.name+" must be true or false")
		}
		*flag.field(&f.state) = &b
	}
	if m, ok := members["severity"]; ok && string(m) != "null" {
		var list []string
		var one string
		switch {
		case json.Unmarshal(m, &one) == nil:
			list = []string{one}
		case json.Unmarshal(m, &list) == nil:
		default:
			return f, models.Invalid("severity", rawValue(m), "severity must be a severity or an array of them")
		}
		if len(list) > 0 {
			var err error
			if f.noneMatch, err = severityFilter(list); err != nil {
				return f, err
			}
		}
	}
	var err error
	if f.tags, err = jsonTags(members["tags"]); err != nil {
		return f, err
	}
	if m, ok := members["data"]; ok && !emptyObject(m) {
		return f, unsupportedFilter("data", rawValue(m))
	}
	for _, c := range []struct {
		name  string
		bound **models.Time
	}{{"createdGte", &f.createdFrom}, {"createdLte", &f.createdTo}} {
		m, ok := members[c.name]
		if !ok || string(m) == "null" {
			continue
		}
		var n int64
		if err := json.Unmarshal(m, &n); err != nil {
			return f, createdInvalid(c.name, rawValue(m))
		}
		*c.bound = createdBound(n)
	}
	return f, nil
}

// createdBound is a creation bound as the client sends it, milliseconds since 1970.
func createdBound(ms int64) *models.Time {
	t := models.NewTime(time.UnixMilli(ms))
	return &t
}

func createdInvalid(name string, value any) error {
	return models.Invalid(name, value, name+" must be an integer number of milliseconds since 1970-01-01T00:00:00Z")
}
