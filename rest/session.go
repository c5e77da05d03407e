package rest

import (
	"encoding/json"
	"net/http"

	"messages/models"
)

// createSession serves POST /v1/inbox/session: a backend exchanges its API key for a
// token a browser may hold, scoped to one subscriber. Without an Authorization header it
// is the platform's inbox client's session instead, proved by its subscriberHash
// (openInboxSession).
func (s *Server) createSession(w http.ResponseWriter, r *http.Request) {
	if Keyless(r) {
		s.openInboxSession(w, r)
		return
	}
	var body struct {
		SubscriberID json.RawMessage `json:"subscriberId"`
		ExpiresIn    json.RawMessage `json:"expiresIn"`
	}
	if err := readJSONObject(w, r, &body); err != nil {
		s.errors.WriteError(w, r, err)
		return
	}
	var subscriberID string
	if len(body.SubscriberID) == 0 || json.Unmarshal(body.SubscriberID, &subscriberID) != nil {
		s.errors.WriteError(w, r, models.Invalid("subscriberId", rawValue(body.SubscriberID), "subscriberId must be a string of 1 to 255 characters"))
		return
	}
	var expiresIn *int
	if len(body.ExpiresIn) > 0 && string(body.ExpiresIn) != "null" {
		var n int
		if err := json.Unmarshal(body.ExpiresIn, &n); err != nil {
			s.errors.WriteError(w, r, models.Invalid("expiresIn", rawValue(body.ExpiresIn), "expiresIn must be an integer number of seconds from 60 to 86400"))
			return
		}
		expiresIn = &n
	}
	session, err := s.service.CreateSession(r.Context(), subscriberID, expiresIn)
	if err != nil {
		s.errors.WriteError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, session)
}

// rawValue is a JSON value as the client sent it, for echoing in a 422; nil when absent.
func rawValue(raw json.RawMessage) any {
	var v any
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &v)
	}
	return v
}
