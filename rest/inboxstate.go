package rest

import (
	"encoding/json"
	"net/http"
	"slices"

	"messages/models"
)

// inboxChanges are the state changes of PATCH /v1/inbox/notifications/{id}/{change},
// each as the client shows it at once (its optimistic update): reading or marking
// unread takes a message out of the archive, archiving or unarchiving reads it.
var inboxChanges = map[string]models.StateChange{
	"read":      {Read: models.Bool(true), Archived: models.Bool(false)},
	"unread":    {Read: models.Bool(false), Archived: models.Bool(false)},
	"archive":   {Archived: models.Bool(true), Read: models.Bool(true)},
	"unarchive": {Archived: models.Bool(false), Read: models.Bool(true)},
	"unsnooze":  {Unsnooze: true},
}

// inboxChange serves PATCH /v1/inbox/notifications/{id}/{change}: read, unread, archive,
// unarchive, snooze (body {"snoozeUntil"}), unsnooze, and complete and revert (body
// {"actionType": "primary" | "secondary"}), which press a call-to-action button or take
// the press back. It answers the message as changed; another subscriber's message is not
// found, and so is one that is not in-app.
func (s *Server) inboxChange(w http.ResponseWriter, r *http.Request) {
	caller, err := inboxCaller(r)
	if err != nil {
		s.errors.WriteError(w, r, err)
		return
	}
	id, name := r.PathValue("id"), r.PathValue("change")
	var m *models.Message
	switch name {
	case "complete", "revert":
		m, err = s.inboxAction(r, w, caller, id, name)
	case "snooze":
		m, err = s.inboxSnooze(r, w, caller, id)
	default:
		c, ok := inboxChanges[name]
		if !ok {
			s.errors.WriteError(w, r, RouteNotFound(r))
			return
		}
		m, err = s.changeOne(r, caller, id, c)
	}
	if err != nil {
		s.errors.WriteError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, envelope{models.NewInboxNotification(m)})
}

// changeOne applies c to the session's in-app message id and returns it as changed.
func (s *Server) changeOne(r *http.Request, caller models.Caller, id string, c models.StateChange) (*models.Message, error) {
	changed, err := s.service.StateChange(r.Context(), models.StateTarget{SubscriberID: caller.SubscriberID,
		MessageIDs: []string{id}, Channel: &inAppChannel}, c)
	if err != nil {
		return nil, err
	}
	for _, m := range changed.Messages {
		if m.ID == id {
			return m, nil
		}
	}
	return nil, notificationNotFound()
}

func notificationNotFound() error {
	return models.Errorf(models.ENOTFOUND, "notification not found: no in-app message of this subscriber has that id")
}

// inboxSnooze snoozes the message until the body's snoozeUntil, an ISO 8601 time.
func (s *Server) inboxSnooze(r *http.Request, w http.ResponseWriter, caller models.Caller, id string) (*models.Message, error) {
	var body struct {
		SnoozeUntil json.RawMessage `json:"snoozeUntil"`
	}
	if err := readOptionalJSONObject(w, r, &body); err != nil {
		return nil, err
	}
	text, err := stringMember("snoozeUntil", body.SnoozeUntil)
	if err != nil {
		return nil, err
	}
	until, err := models.ParseTime(text)
	if err != nil {
		return nil, models.Invalid("snoozeUntil", rawValue(body.SnoozeUntil),
			"snoozeUntil is required: an ISO 8601 time in the future, as 2030-01-02T15:04:05.000Z")
	}
	return s.changeOne(r, caller, id, models.StateChange{SnoozedUntil: &until})
}

// inboxAction completes (presses) or reverts a call-to-action button of the in-app
// message: the mark of /v1, done or pending, for the body's actionType.
func (s *Server) inboxAction(r *http.Request, w http.ResponseWriter, caller models.Caller, id, name string) (*models.Message, error) {
	var body struct {
		ActionType json.RawMessage `json:"actionType"`
	}
	if err := readOptionalJSONObject(w, r, &body); err != nil {
		return nil, err
	}
	button, err := stringMember("actionType", body.ActionType)
	if err != nil {
		return nil, err
	}
	if !models.ButtonType(button).Valid() {
		return nil, models.Invalid("actionType", rawValue(body.ActionType), "actionType must be primary or secondary")
	}
	status := models.ActionDone
	if name == "revert" {
		status = models.ActionPending
	}
	m, err := s.service.Mark(r.Context(), models.MarkAction{SubscriberID: caller.SubscriberID, MessageID: id,
		Type: models.ButtonType(button), Status: status, Channel: &inAppChannel})
	if models.ErrorCode(err) == models.ENOTFOUND {
		return nil, notificationNotFound()
	}
	return m, err
}

// readOptionalJSONObject is readJSONObject for a body the client may leave out.
func readOptionalJSONObject(w http.ResponseWriter, r *http.Request, v any) error {
	if r.ContentLength == 0 {
		return nil
	}
	return readJSONObject(w, r, v)
}

// inboxBulk are the bulk changes of POST /v1/inbox/notifications/{bulk}, each on every
// in-app message of the session's subscriber its filter matches: all read, all
// archived (and read), the read ones archived.
var inboxBulk = map[string]struct {
	filter models.StateFilter
	change models.StateChange
}{
	"read":         {change: models.StateChange{Read: models.Bool(true)}},
	"archive":      {change: models.StateChange{Archived: models.Bool(true), Read: models.Bool(true)}},
	"read-archive": {filter: models.StateFilter{Read: models.Bool(true)}, change: models.StateChange{Archived: models.Bool(true)}},
	"seen":         {change: models.StateChange{Seen: models.Bool(true)}},
}

// inboxBulkChange serves POST /v1/inbox/notifications/{seen,read,archive,read-archive}.
// Each takes the client's tags filter (the messages of workflows with those tags) and
// transactionId (the messages of one transaction); seen takes notificationIds to see
// only those. The answer says how many messages changed:
// 200 {"data": {"changed": n}}; or, for a change of all messages not done shortly
// before the request's deadline, 202 {"data": {"changed": n, "jobId": id}}: accepted,
// n changed so far, the rest carried on until done (models/service/statejobs.go).
func (s *Server) inboxBulkChange(w http.ResponseWriter, r *http.Request) {
	caller, err := inboxCaller(r)
	if err != nil {
		s.errors.WriteError(w, r, err)
		return
	}
	name := r.PathValue("bulk")
	bulk, ok := inboxBulk[name]
	if !ok {
		s.errors.WriteError(w, r, RouteNotFound(r))
		return
	}
	body, err := readBulkBody(w, r, name)
	if err != nil {
		s.errors.WriteError(w, r, err)
		return
	}
	if body.NotificationIDs != nil && len(*body.NotificationIDs) == 0 {
		// No message named, none changed: as the platform answers it, not all of them.
		writeJSON(w, http.StatusOK, envelope{bulkChanged{Changed: 0}})
		return
	}
	tags := body.Tags.groups
	target := models.StateTarget{SubscriberID: caller.SubscriberID, Channel: &inAppChannel, Filter: bulk.filter, Tags: tags}
	if body.NotificationIDs != nil {
		target.MessageIDs = *body.NotificationIDs
	}
	if body.TransactionID != nil {
		target.TransactionID = *body.TransactionID
	}
	changed, err := s.service.StateChange(r.Context(), target, bulk.change)
	if err != nil {
		s.errors.WriteError(w, r, err)
		return
	}
	status := http.StatusOK
	if !changed.Done() {
		// Accepted: the change carries on after the answer until done (docs/inbox.md).
		status = http.StatusAccepted
	}
	writeJSON(w, status, envelope{bulkChanged{changed.Changed, changed.JobID}})
}

// bulkChanged is the answer of a bulk change: how many messages changed and, when it
// was accepted and carries on, the job that carries it.
type bulkChanged struct {
	Changed int    `json:"changed"`
	JobID   string `json:"jobId,omitempty"`
}

// inboxBulkBody is the body of a bulk change, as the client sends it: the messages to
// see by id (seen only), the tags filter, and the data filter, JSON text; and, this
// server's own, transactionId, the messages of one transaction (a workflow run).
type inboxBulkBody struct {
	NotificationIDs *[]string       `json:"notificationIds"`
	Tags            tagsFilter      `json:"tags"`
	Data            json.RawMessage `json:"data"`
	TransactionID   *string         `json:"transactionId"`
}

// readBulkBody reads the body of the bulk change name, which the client may leave out,
// refusing what the change cannot apply.
func readBulkBody(w http.ResponseWriter, r *http.Request, name string) (inboxBulkBody, error) {
	var body inboxBulkBody
	if r.ContentLength != 0 {
		raw, err := readJSONBody(w, r)
		if err != nil {
			return body, err
		}
		if err := decodeStrict(raw, &body, "notificationIds (seen only), tags, data and transactionId"); err != nil {
			return body, err
		}
	}
	return body, body.check(name)
}

// check refuses what the bulk change name cannot apply: notificationIds but on seen,
// an id that is not a non-empty string, and a data filter.
func (b inboxBulkBody) check(name string) error {
	if b.NotificationIDs != nil {
		if name != "seen" {
			return models.Invalid("notificationIds", *b.NotificationIDs,
				"notificationIds is taken by POST /v1/inbox/notifications/seen only: "+name+" changes every message its tags match")
		}
		if slices.Contains(*b.NotificationIDs, "") {
			return models.Invalid("notificationIds", *b.NotificationIDs, "notificationIds must be an array of notification ids")
		}
	}
	if len(b.Data) > 0 && !emptyData(b.Data) {
		return unsupportedFilter("data", rawValue(b.Data))
	}
	if b.TransactionID != nil {
		if *b.TransactionID == "" {
			return models.Invalid("transactionId", "", "transactionId must be a transaction id: leave it out to change every message")
		}
		if b.NotificationIDs != nil {
			return models.Invalid("transactionId", *b.TransactionID, "name notifications or a transaction, not both")
		}
	}
	return nil
}

// emptyData reports a data filter that filters nothing: null, {}, or the client's
// stringified "{}".
func emptyData(raw json.RawMessage) bool {
	var text string
	if json.Unmarshal(raw, &text) == nil {
		return emptyObject([]byte(text))
	}
	return emptyObject(raw)
}
