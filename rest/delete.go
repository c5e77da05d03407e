package rest

import (
	"net/http"
	"net/url"

	"messages/models"
)

// Deleting messages, as the platform's clients ask for it: @novu/api's messages.delete
// and messages.deleteByTransactionId on /v1, and @novu/js's notification.delete() and
// its bulk delete on the inbox API. Each deletes for good (models/service.Delete).

const (
	deleteMessagePattern     = "DELETE /v1/messages/{messageId}"
	deleteTransactionPattern = "DELETE /v1/messages/transaction/{transactionId}"
)

// deleteAnswer is what the platform answers a deleted message with, in the envelope the
// SDK unwraps.
var deleteAnswer = envelope{struct {
	Acknowledged bool   `json:"acknowledged"`
	Status       string `json:"status"`
}{true, "deleted"}}

// deleteMessage serves DELETE /v1/messages/{messageId}: 200 {"data": {"acknowledged":
// true, "status": "deleted"}}, or 404 when the environment has no such message (one
// deleted already included), as the platform answers.
func (s *Server) deleteMessage(w http.ResponseWriter, r *http.Request) {
	if err := noQuery(r, "DELETE /v1/messages/{messageId} takes no query parameters"); err != nil {
		s.errors.WriteError(w, r, err)
		return
	}
	id := r.PathValue("messageId")
	deleted, err := s.service.Delete(r.Context(), models.DeleteTarget{MessageIDs: []string{id}})
	if err != nil {
		s.errors.WriteError(w, r, err)
		return
	}
	if deleted.Deleted == 0 {
		s.errors.WriteError(w, r, models.Errorf(models.ENOTFOUND, "message not found: no message of this environment has id %s", quote(id, maxQuoted)))
		return
	}
	writeJSON(w, http.StatusOK, deleteAnswer)
}

// deleteTransaction serves DELETE /v1/messages/transaction/{transactionId}?channel=:
// every message of the transaction (of that channel, when given), then 204; 404 when
// there are none, as the platform answers ("Invalid transactionId or channel").
func (s *Server) deleteTransaction(w http.ResponseWriter, r *http.Request) {
	values, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		s.errors.WriteError(w, r, models.Errorf(models.EMALFORMED, "query string is malformed: %s", err))
		return
	}
	if err := checkParams(values, []string{"channel"}, func(string) bool { return false },
		"DELETE /v1/messages/transaction/{transactionId} takes channel"); err != nil {
		s.errors.WriteError(w, r, err)
		return
	}
	txn := r.PathValue("transactionId")
	t := models.DeleteTarget{TransactionID: &txn}
	if c, ok := first(values, "channel"); ok {
		ch := models.ChannelType(c)
		t.Channel = &ch
	}
	deleted, err := s.service.Delete(r.Context(), t)
	if err != nil {
		s.errors.WriteError(w, r, err)
		return
	}
	if deleted.Deleted == 0 {
		s.errors.WriteError(w, r, models.Errorf(models.ENOTFOUND, "Invalid transactionId or channel: no message of this environment has transactionId %s", quote(txn, maxQuoted)))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// inboxDelete serves DELETE /v1/inbox/notifications/{id}/delete: the session's in-app
// message, then 204; 404 when it has none of that id (deleted already included).
func (s *Server) inboxDelete(w http.ResponseWriter, r *http.Request) {
	caller, err := inboxCaller(r)
	if err != nil {
		s.errors.WriteError(w, r, err)
		return
	}
	own := caller.SubscriberID
	deleted, err := s.service.Delete(r.Context(), models.DeleteTarget{SubscriberID: &own,
		MessageIDs: []string{r.PathValue("id")}, Channel: &inAppChannel})
	if err != nil {
		s.errors.WriteError(w, r, err)
		return
	}
	if deleted.Deleted == 0 {
		s.errors.WriteError(w, r, notificationNotFound())
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// inboxDeleteAll serves POST /v1/inbox/notifications/delete: every in-app message of the
// session's subscriber that the body's tags filter matches (all of them without one), or
// of its transactionId, with the filters of the other bulk calls and their refusals. The answer says how many
// it deleted: 200 {"data": {"deleted": n}}; or, for a delete not done shortly before the
// request's deadline, 202 {"data": {"deleted": n, "jobId": id}}: accepted, n deleted so
// far, the rest carried on until done, as the other bulk calls are.
func (s *Server) inboxDeleteAll(w http.ResponseWriter, r *http.Request) {
	caller, err := inboxCaller(r)
	if err != nil {
		s.errors.WriteError(w, r, err)
		return
	}
	body, err := readBulkBody(w, r, "delete")
	if err != nil {
		s.errors.WriteError(w, r, err)
		return
	}
	own := caller.SubscriberID
	// With a transactionId, as the other bulk calls take it: that transaction's only.
	deleted, err := s.service.Delete(r.Context(), models.DeleteTarget{SubscriberID: &own, Channel: &inAppChannel, Tags: body.Tags.groups,
		TransactionID: body.TransactionID})
	if err != nil {
		s.errors.WriteError(w, r, err)
		return
	}
	status := http.StatusOK
	if !deleted.Done() {
		status = http.StatusAccepted
	}
	writeJSON(w, status, envelope{struct {
		Deleted int    `json:"deleted"`
		JobID   string `json:"jobId,omitempty"`
	}{deleted.Deleted, deleted.JobID}})
}

// noQuery refuses any query parameter of a route that takes none.
func noQuery(r *http.Request, takes string) error {
	values, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return models.Errorf(models.EMALFORMED, "query string is malformed: %s", err)
	}
	return checkParams(values, nil, func(string) bool { return false }, takes)
}
