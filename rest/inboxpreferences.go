package rest

import (
	"net/http"
	"net/url"
	"slices"

	"messages/models"
)

// inboxPreference is a preference as the inbox client's PreferencesResponse: the
// subscriber's global one, or one workflow's. This server keeps no preferences of a
// subscriber's own, so each is what the environment's workflows say: enabled, with the
// channels a workflow's preference settings turn on.
type inboxPreference struct {
	Level     string                `json:"level"`
	Enabled   bool                  `json:"enabled"`
	Channels  map[string]bool       `json:"channels"`
	Overrides []struct{}            `json:"overrides"`
	Workflow  *models.InboxWorkflow `json:"workflow,omitempty"`
	Schedule  *inboxSchedule        `json:"schedule,omitempty"`
}

// inboxSchedule is the global preference's delivery schedule: none is kept.
type inboxSchedule struct {
	IsEnabled bool `json:"isEnabled"`
}

// globalPreference is every channel on, with no schedule.
func globalPreference() inboxPreference {
	return inboxPreference{Level: "global", Enabled: true, Overrides: []struct{}{}, Schedule: &inboxSchedule{},
		Channels: channelPreferences(nil)}
}

// channelPreferences are the channels ps turns on; every channel when ps is nil.
func channelPreferences(ps *models.PreferenceSettings) map[string]bool {
	if ps == nil {
		ps = &models.PreferenceSettings{Email: true, SMS: true, InApp: true, Chat: true, Push: true}
	}
	return map[string]bool{string(models.ChannelEmail): ps.Email, string(models.ChannelSMS): ps.SMS,
		string(models.ChannelInApp): ps.InApp, string(models.ChannelChat): ps.Chat, string(models.ChannelPush): ps.Push}
}

// inboxPreferences serves GET /v1/inbox/preferences: the global preference and one per
// active workflow of the environment, narrowed as the client asks by tags (a workflow
// with any of them), severity (a workflow without one is none) and criticality (critical,
// nonCritical, the client's default, or all).
func (s *Server) inboxPreferences(w http.ResponseWriter, r *http.Request) {
	values, err := inboxQuery(r)
	if err != nil {
		s.errors.WriteError(w, r, err)
		return
	}
	q, err := parsePreferencesQuery(values)
	if err != nil {
		s.errors.WriteError(w, r, err)
		return
	}
	tags, severities, criticality := q.tags, q.severities, q.criticality
	workflows, err := s.service.Workflows(r.Context())
	if err != nil {
		s.errors.WriteError(w, r, err)
		return
	}
	out := []inboxPreference{globalPreference()}
	for _, wf := range workflows {
		switch {
		case severities != 0 && !severities.Has(wf.Severity.Or()),
			criticality == "critical" && !wf.Critical,
			(criticality == "nonCritical" || criticality == "") && wf.Critical,
			len(tags) > 0 && !slices.ContainsFunc(tags, func(t string) bool { return slices.Contains(wf.Tags, t) }):
			continue
		}
		out = append(out, inboxPreference{Level: "template", Enabled: true, Overrides: []struct{}{},
			Channels: channelPreferences(wf.PreferenceSettings), Workflow: models.NewInboxWorkflow(wf)})
	}
	writeJSON(w, http.StatusOK, envelope{out})
}

// preferencesQuery is what the preferences are narrowed by: workflows with any of tags,
// of one of severities (none: any), and criticality.
type preferencesQuery struct {
	tags        []string
	severities  models.SeveritySet
	criticality string
}

// parsePreferencesQuery reads tags (tags[]=a, tags=a or tags[0]=a), severity and
// criticality; any other parameter, criticality twice, a severity or criticality not the
// client's, and an empty tag are refused by name.
func parsePreferencesQuery(v url.Values) (preferencesQuery, error) {
	var q preferencesQuery
	arrays := func(key string) bool { return arrayKey(key, "tags") || arrayKey(key, "severity") }
	if err := checkParams(v, []string{"criticality"}, arrays, "GET /v1/inbox/preferences takes tags, severity and criticality"); err != nil {
		return q, err
	}
	q.tags = arrayParam(v, "tags")
	if slices.Contains(q.tags, "") {
		return q, models.Invalid("tags", "", "tags must be non-empty strings, as tags[]=a")
	}
	if severities := arrayParam(v, "severity"); len(severities) > 0 {
		var err error
		if q.severities, err = severityFilter(severities); err != nil {
			return q, err
		}
	}
	q.criticality, _ = first(v, "criticality")
	if !slices.Contains([]string{"", "critical", "nonCritical", "all"}, q.criticality) {
		return q, models.Invalid("criticality", q.criticality, "criticality must be one of critical, nonCritical, all")
	}
	return q, nil
}

// inboxGlobalPreference serves GET /v1/inbox/preferences/global.
func (s *Server) inboxGlobalPreference(w http.ResponseWriter, r *http.Request) {
	if _, err := inboxCaller(r); err != nil {
		s.errors.WriteError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, envelope{globalPreference()})
}

// preferencesReadOnly answers the client's preference updates: this server keeps no
// subscriber preferences, so there is nothing to update (405; GET reads them).
func (s *Server) preferencesReadOnly(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Allow", "GET")
	s.errors.WriteError(w, r, &statusError{http.StatusMethodNotAllowed,
		"this server keeps no subscriber preferences: they follow the environment's workflows and cannot be changed here (docs/inbox.md)"})
}
