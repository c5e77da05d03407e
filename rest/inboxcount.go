package rest

import (
	"bytes"
	"encoding/json"
	"errors"
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
	for i := range filters {
		out[i] = filterCount{Count: counts[i], Filter: raw[i]}
	}
	writeJSON(w, http.StatusOK, envelope{out})
}

// parseCountFilters reads the filters parameter, a JSON array of the client's
// NotificationFilters, and returns each as sent and as parsed.
func parseCountFilters(v url.Values) ([]json.RawMessage, []inboxFilter, error) {
	noArrays := func(string) bool { return false }
	if err := checkParams(v, []string{"filters"}, noArrays, "GET /v1/inbox/notifications/count takes filters"); err != nil {
		return nil, nil, err
	}
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

// countFilter is one of the client's NotificationFilters as the count request sends it.
type countFilter struct {
	Read       *bool           `json:"read"`
	Seen       *bool           `json:"seen"`
	Archived   *bool           `json:"archived"`
	Snoozed    *bool           `json:"snoozed"`
	Severity   severities      `json:"severity"`
	Tags       tagsFilter      `json:"tags"`
	Data       json.RawMessage `json:"data"`
	CreatedGte *int64          `json:"createdGte"`
	CreatedLte *int64          `json:"createdLte"`
}

// countFilterMembers says what a count filter takes.
const countFilterMembers = "read, seen, archived, snoozed, severity, tags, data, createdGte and createdLte"

// parseCountFilter reads one filter object. A member it does not know, a member of the
// wrong type and a filter it cannot apply are refused by name: ignored, each would count
// messages the filter excludes.
func parseCountFilter(raw json.RawMessage) (inboxFilter, error) {
	var f inboxFilter
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' {
		return f, models.Invalid("filters", rawValue(raw), "each filter must be a JSON object")
	}
	var c countFilter
	if err := decodeStrict(raw, &c, countFilterMembers); err != nil {
		return f, createdRefusal(err)
	}
	f.state = models.StateFilter{Read: c.Read, Seen: c.Seen, Archived: c.Archived, Snoozed: c.Snoozed}
	if len(c.Severity) > 0 {
		var err error
		if f.state.Severities, err = severityFilter(c.Severity); err != nil {
			return f, err
		}
	}
	f.tags = c.Tags.groups
	if len(c.Data) > 0 && !emptyObject(c.Data) {
		return f, unsupportedFilter("data", rawValue(c.Data))
	}
	if c.CreatedGte != nil {
		f.createdFrom = createdBound(*c.CreatedGte)
	}
	if c.CreatedLte != nil {
		f.createdTo = createdBound(*c.CreatedLte)
	}
	return f, nil
}

// createdRefusal is err with the creation bounds' own message when it refuses one.
func createdRefusal(err error) error {
	for _, name := range []string{"createdGte", "createdLte"} {
		if invalidMember(err) == name {
			return createdInvalid(name, nil)
		}
	}
	return err
}

// invalidMember is the one member an EINVALID error names, or "".
func invalidMember(err error) string {
	var e *models.Error
	if !errors.As(err, &e) || e.Code != models.EINVALID || len(e.Fields) != 1 {
		return ""
	}
	for name := range e.Fields {
		return name
	}
	return ""
}

// severities is the client's severity filter: one severity, or an array of them.
type severities []string

// UnmarshalJSON reads a severity or an array of them; null is none.
func (s *severities) UnmarshalJSON(raw []byte) error {
	*s = nil
	var one string
	if json.Unmarshal(raw, &one) == nil {
		if string(bytes.TrimSpace(raw)) != "null" {
			*s = severities{one}
		}
		return nil
	}
	var list []string
	if err := decodeStrict(raw, &list, ""); err != nil {
		return models.Invalid("severity", rawValue(raw), "severity must be a severity or an array of them")
	}
	*s = list
	return nil
}

// createdBound is a creation bound as the client sends it, milliseconds since 1970.
func createdBound(ms int64) *models.Time {
	t := models.NewTime(time.UnixMilli(ms))
	return &t
}

func createdInvalid(name string, value any) error {
	return models.Invalid(name, value, name+" must be an integer number of milliseconds since 1970-01-01T00:00:00Z")
}
