package rest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"

	"messages/models"
	"messages/models/wire"
)

// The platform's /v1 marks of read and seen, as @novu/api 3.19.1 calls them
// (subscribers.messages.markAll and markAllAs) and @novu/node 2.6.6 (markAllMessagesAs):
// the same service.StateChange as the inbox API, with the platform's semantics
// (models.MarkAs.Change: read also sees, and so does unread).

// markAllMessages serves POST /v1/subscribers/{subscriberId}/messages/mark-all: every
// in-app message of the subscriber marked as the body's markAs, as the platform's
// mark-all changes its in-app feed only. It answers 201 with how many messages it
// changes, a bare number, as @novu/api takes it (any other status it raises as an
// error). For a change not done shortly before the request's deadline (a subscriber
// with tens of thousands of messages) the number is how many it changes in all, counted
// as it was asked, and the rest is carried on until done (models/service/statejobs.go),
// the job named in a Job-Id header: the change is kept, surviving a restart, once
// answered. feedIdentifier narrows to feeds, which this server does not keep: given, it
// is refused rather than ignored.
func (s *Server) markAllMessages(w http.ResponseWriter, r *http.Request) {
	var body struct {
		MarkAs         models.MarkAs   `json:"markAs"`
		FeedIdentifier json.RawMessage `json:"feedIdentifier"`
	}
	err := readStrictObject(w, r, &body, "markAs and feedIdentifier")
	if err == nil && len(body.FeedIdentifier) > 0 && !bytes.Equal(body.FeedIdentifier, []byte("null")) {
		err = models.Invalid("feedIdentifier", rawValue(body.FeedIdentifier),
			"this server keeps no feeds, so it cannot narrow a mark to one (docs/api.md): leave feedIdentifier out to mark every in-app message")
	}
	if err != nil {
		s.errors.WriteError(w, r, err)
		return
	}
	changed, err := s.service.MarkMessagesAs(r.Context(),
		models.StateTarget{SubscriberID: r.PathValue("subscriberId"), Channel: &inAppChannel}, body.MarkAs)
	if err != nil {
		s.errors.WriteError(w, r, err)
		return
	}
	if !changed.Done() {
		w.Header().Set("Job-Id", changed.JobID)
		writeJSON(w, http.StatusCreated, max(changed.Total, changed.Changed))
		return
	}
	writeJSON(w, http.StatusCreated, changed.Changed)
}

// markMessagesAs serves POST /v1/subscribers/{subscriberId}/messages/mark-as: the
// messages the body's messageId names (one id, or an array of them), of any channel,
// marked as its markAs. It answers 201 with each of them as stored after the mark, in
// the /v1 record form, newest first; ids that name no message of the subscriber (unknown,
// or another subscriber's or environment's) are left out, as the platform leaves them.
func (s *Server) markMessagesAs(w http.ResponseWriter, r *http.Request) {
	var body struct {
		MessageID json.RawMessage `json:"messageId"`
		MarkAs    models.MarkAs   `json:"markAs"`
	}
	var ids []string
	err := readStrictObject(w, r, &body, "messageId and markAs")
	if err == nil {
		ids, err = messageIDsMember(body.MessageID)
	}
	if err != nil {
		s.errors.WriteError(w, r, err)
		return
	}
	changed, err := s.service.MarkMessagesAs(r.Context(),
		models.StateTarget{SubscriberID: r.PathValue("subscriberId"), MessageIDs: ids}, body.MarkAs)
	s.writeMarked(w, r, changed, err)
}

// markMessagesByMark serves POST /v1/subscribers/{subscriberId}/messages/markAs, the
// platform's older form of mark-as that @novu/node 2.6.6 calls (markMessageSeen,
// markMessageRead, markMessageAs): body {"messageId", "mark": {"seen"?, "read"?}}, each
// flag set as given and nothing else (read does not imply seen here, as the platform's
// own older route). It answers as mark-as does.
func (s *Server) markMessagesByMark(w http.ResponseWriter, r *http.Request) {
	var body struct {
		MessageID json.RawMessage `json:"messageId"`
		Mark      *struct {
			Seen *bool `json:"seen"`
			Read *bool `json:"read"`
		} `json:"mark"`
	}
	var ids []string
	err := readStrictObject(w, r, &body, "messageId and mark (seen and read)")
	if err == nil {
		ids, err = messageIDsMember(body.MessageID)
	}
	if err == nil && (body.Mark == nil || (body.Mark.Seen == nil && body.Mark.Read == nil)) {
		err = models.Invalid("mark", nil, "mark is required: an object with seen, read or both, each true or false")
	}
	if err != nil {
		s.errors.WriteError(w, r, err)
		return
	}
	changed, err := s.service.MarkSubscriberMessages(r.Context(),
		models.StateTarget{SubscriberID: r.PathValue("subscriberId"), MessageIDs: ids},
		models.StateChange{Seen: body.Mark.Seen, Read: body.Mark.Read})
	s.writeMarked(w, r, changed, err)
}

// writeMarked answers a mark of named messages: 201 with each as stored after it, in
// the /v1 record form, or the error.
func (s *Server) writeMarked(w http.ResponseWriter, r *http.Request, changed *models.StateChanged, err error) {
	if err != nil {
		s.errors.WriteError(w, r, err)
		return
	}
	out := []byte{'['}
	for i, m := range changed.Messages {
		b, err := wire.Message(m)
		if err != nil {
			s.errors.WriteError(w, r, err)
			return
		}
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, b...)
	}
	writeEncoded(w, http.StatusCreated, append(out, ']'))
}

// readStrictObject reads a body that must be one JSON object of the members v takes
// (fields names them for the refusal of any other), as readJSONBody and decodeStrict.
func readStrictObject(w http.ResponseWriter, r *http.Request, v any, fields string) error {
	raw, err := readJSONBody(w, r)
	if err != nil {
		return err
	}
	return decodeStrict(raw, v, fields)
}

// messageIDsMember reads messageId: one id, or a non-empty array of them.
func messageIDsMember(raw json.RawMessage) ([]string, error) {
	const must = "messageId is required: a message id, or a non-empty array of them"
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, models.Invalid("messageId", nil, must)
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		if one == "" {
			return nil, models.Invalid("messageId", one, must)
		}
		return []string{one}, nil
	}
	var ids []string
	if err := json.Unmarshal(raw, &ids); err != nil || len(ids) == 0 || slices.Contains(ids, "") {
		return nil, models.Invalid("messageId", rawValue(raw), must)
	}
	if len(ids) > models.MaxStateMessageIDs {
		return nil, models.Invalid("messageId", len(ids),
			fmt.Sprintf("at most %d messages may be named at once, got %d", models.MaxStateMessageIDs, len(ids)))
	}
	return ids, nil
}
