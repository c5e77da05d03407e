package rest

import (
	"encoding/json"
	"fmt"
	"net/http"

	"messages/models"
	"messages/models/service"
)

// inboxSessionPath is where both kinds of session are opened: with an API key by a
// backend, and with a subscriberHash, no credential, by the platform's inbox clients.
const inboxSessionPath = "/v1/inbox/session"

// Keyless reports whether r is a request this server authenticates in its handler, with
// no credential the edge knows: the inbox client's session request, POST
// /v1/inbox/session with no Authorization header, which proves itself by its
// subscriberHash. The edge passes it through its Keyless guard (a rate limit per client
// address, a bounded JSON body) instead of authentication.
func Keyless(r *http.Request) bool {
	return r.Method == http.MethodPost && r.URL.Path == inboxSessionPath && r.Header.Get("Authorization") == ""
}

// maxSnoozeHours is service.MaxSnooze in the hours the inbox client reads it in.
const maxSnoozeHours = int(service.MaxSnooze / 3600e9)

// inboxSessionBody is the inbox client's session request; other members (contextHash,
// context, defaultSchedule) are read by no part of this server.
type inboxSessionBody struct {
	ApplicationIdentifier json.RawMessage `json:"applicationIdentifier"`
	SubscriberHash        json.RawMessage `json:"subscriberHash"`
	SubscriberID          json.RawMessage `json:"subscriberId"`
	Subscriber            json.RawMessage `json:"subscriber"`
}

// inboxSubscriberBody is the subscriber's profile as the client sends it; a subscriber
// not known yet is created with it.
type inboxSubscriberBody struct {
	SubscriberID string      `json:"subscriberId"`
	FirstName    string      `json:"firstName"`
	LastName     string      `json:"lastName"`
	Email        string      `json:"email"`
	Phone        string      `json:"phone"`
	Avatar       string      `json:"avatar"`
	Locale       string      `json:"locale"`
	Timezone     string      `json:"timezone"`
	Data         models.JSON `json:"data"`
}

// InboxSession is the answer of the inbox client's session request, as its Session type.
type InboxSession struct {
	Token string `json:"token"`
	// TotalUnreadCount is the client's deprecated spelling of UnreadCount.Total.
	TotalUnreadCount       int              `json:"totalUnreadCount"`
	UnreadCount            InboxUnreadCount `json:"unreadCount"`
	RemoveNovuBranding     bool             `json:"removeNovuBranding"`
	IsDevelopmentMode      bool             `json:"isDevelopmentMode"`
	MaxSnoozeDurationHours int              `json:"maxSnoozeDurationHours"`
	ApplicationIdentifier  string           `json:"applicationIdentifier"`
	ContextKeys            []string         `json:"contextKeys"`
	ExpiresAt              models.Time      `json:"expiresAt"`
	SubscriberID           string           `json:"subscriberId"`
}

// InboxUnreadCount is the unread badge: every unread in-app message (not read, archived
// or snoozed), and how many of them are of each severity.
type InboxUnreadCount struct {
	Total    int                     `json:"total"`
	Severity map[models.Severity]int `json:"severity"`
}

func newUnreadCount(c models.UnreadCounts) InboxUnreadCount {
	by := make(map[models.Severity]int, len(models.Severities))
	for i, s := range models.Severities {
		by[s] = c.BySeverity[i]
	}
	return InboxUnreadCount{Total: c.Total, Severity: by}
}

// openInboxSession serves POST /v1/inbox/session without an Authorization header: the
// platform's inbox client opens a session with the environment's application
// identifier and the subscriberHash its integrator's backend computed. A hash that
// matches no active key of that environment, or an unknown identifier, is 401 and no
// token; so is a body with neither, which is no credential of either contract.
func (s *Server) openInboxSession(w http.ResponseWriter, r *http.Request) {
	var body inboxSessionBody
	if err := readJSONObject(w, r, &body); err != nil {
		s.errors.WriteError(w, r, err)
		return
	}
	req, err := parseInboxSession(body)
	if err != nil {
		s.errors.WriteError(w, r, err)
		return
	}
	if req.ApplicationIdentifier == "" && req.SubscriberHash == "" {
		// Neither contract's credential: a backend that forgot its key is told so.
		s.errors.WriteError(w, r, models.Errorf(models.EUNAUTHORIZED, "API key or session token required: send Authorization: ApiKey <key> "+
			"from your backend, or, as the platform's inbox client does, applicationIdentifier and subscriberHash"))
		return
	}
	opened, err := s.service.OpenInboxSession(r.Context(), req)
	if err != nil {
		s.errors.WriteError(w, r, err)
		return
	}
	unread := opened.Counts.UnreadCounts()
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusCreated, envelope{InboxSession{
		Token: opened.Token, TotalUnreadCount: unread.Total, UnreadCount: newUnreadCount(unread),
		MaxSnoozeDurationHours: maxSnoozeHours, ApplicationIdentifier: req.ApplicationIdentifier,
		ContextKeys: []string{}, ExpiresAt: opened.ExpiresAt, SubscriberID: opened.SubscriberID,
	}})
}

// envelope is the inbox API's answer: its data under "data".
type envelope struct {
	Data any `json:"data"`
}

// parseInboxSession reads the request's members into the service's input, refusing a
// member of the wrong JSON type by name. The subscriber's id is subscriber.subscriberId,
// or the top-level subscriberId when that is empty.
func parseInboxSession(b inboxSessionBody) (service.InboxSessionRequest, error) {
	var req service.InboxSessionRequest
	var err error
	if req.ApplicationIdentifier, err = stringMember("applicationIdentifier", b.ApplicationIdentifier); err != nil {
		return req, err
	}
	if req.SubscriberHash, err = stringMember("subscriberHash", b.SubscriberHash); err != nil {
		return req, err
	}
	topLevel, err := stringMember("subscriberId", b.SubscriberID)
	if err != nil {
		return req, err
	}
	var sub inboxSubscriberBody
	if len(b.Subscriber) > 0 && string(b.Subscriber) != "null" {
		if err := json.Unmarshal(b.Subscriber, &sub); err != nil {
			return req, models.Invalid("subscriber", rawValue(b.Subscriber),
				"subscriber must be an object of strings: subscriberId, firstName, lastName, email, phone, avatar, locale, timezone, and data an object")
		}
	}
	if sub.SubscriberID == "" {
		sub.SubscriberID = topLevel
	}
	if string(sub.Data) == "null" {
		sub.Data = nil
	}
	if len(sub.Data) > 0 && sub.Data[0] != '{' {
		return req, models.Invalid("subscriber.data", rawValue(json.RawMessage(sub.Data)), "subscriber.data must be an object")
	}
	if sub.Data.Depth() > models.MaxJSONDepth {
		return req, models.Invalid("subscriber.data", nil, fmt.Sprintf("subscriber.data must not nest deeper than %d levels", models.MaxJSONDepth))
	}
	req.Subscriber = models.Subscriber{SubscriberID: sub.SubscriberID, FirstName: sub.FirstName, LastName: sub.LastName,
		Email: sub.Email, Phone: sub.Phone, Avatar: sub.Avatar, Locale: sub.Locale, Timezone: sub.Timezone, Data: sub.Data}
	return req, nil
}

// stringMember reads an optional string member; another JSON type is refused by name.
func stringMember(name string, raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var v string
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", models.Invalid(name, rawValue(raw), name+" must be a string")
	}
	return v, nil
}
