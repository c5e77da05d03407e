package rest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"reflect"
	"strconv"
	"strings"

	"messages/models"
	"messages/models/wire"
)

// MaxBodyBytes bounds a request body; a larger one is refused with 413.
const MaxBodyBytes = 1 << 20

// statusMessage is the service's refusal of a status, repeated for non-string statuses.
const statusMessage = "status must be one of pending, done"

// markMessageAction serves POST /v1/subscribers/{subscriberId}/messages/{messageId}/actions/{type}.
func (s *Server) markMessageAction(w http.ResponseWriter, r *http.Request) {
	body, err := parseActionBody(w, r)
	if err != nil {
		s.errors.WriteError(w, r, err)
		return
	}
	msg, err := s.service.Mark(r.Context(), models.MarkAction{SubscriberID: r.PathValue("subscriberId"),
		MessageID: r.PathValue("messageId"), Type: models.ButtonType(r.PathValue("type")), Status: body.status, Payload: body.payload})
	if err != nil {
		s.errors.WriteError(w, r, err)
		return
	}
	b, err := wire.Message(msg)
	if err != nil {
		s.errors.WriteError(w, r, err)
		return
	}
	writeEncoded(w, http.StatusCreated, b)
}

// actionBody is the request body in the service's input types.
type actionBody struct {
	status  models.MessageActionStatus
	payload models.JSON
}

// parseActionBody reads {"status": ..., "payload"?: ...}. A body that is not one JSON
// object is malformed (400); a status that is not a JSON string is refused (422); the
// service validates everything else.
func parseActionBody(w http.ResponseWriter, r *http.Request) (actionBody, error) {
	var b actionBody
	var fields struct {
		Status  json.RawMessage `json:"status"`
		Payload json.RawMessage `json:"payload"`
	}
	if err := readJSONObject(w, r, &fields); err != nil {
		return b, err
	}
	if len(fields.Status) > 0 && !bytes.Equal(fields.Status, []byte("null")) {
		var s string
		if err := json.Unmarshal(fields.Status, &s); err != nil {
			// Not a string: refused here, where its JSON type is still known, so the
			// error echoes the value as sent (5, not "5").
			var v any
			_ = json.Unmarshal(fields.Status, &v)
			return b, models.Invalid("status", v, statusMessage)
		}
		b.status = models.MessageActionStatus(s)
	}
	if err := b.payload.UnmarshalJSON(fields.Payload); len(fields.Payload) > 0 && err != nil {
		return b, models.Errorf(models.EMALFORMED, "request body is not valid JSON")
	}
	return b, nil
}

// readJSONObject decodes a request body that must be one JSON object into v: another
// media type is 415, over MaxBodyBytes 413, anything but one object 400, a member of the
// wrong JSON type 422 naming it.
func readJSONObject(w http.ResponseWriter, r *http.Request, v any) error {
	raw, err := readJSONBody(w, r)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(v); err != nil {
		return decodeError(err, reflect.TypeOf(v), "")
	}
	if _, err := dec.Token(); err != io.EOF {
		return models.Errorf(models.EMALFORMED, "request body has data after the JSON object")
	}
	return nil
}

// readJSONBody reads a request body that must be one JSON object: another media type is
// 415, a body over the limit 413 (the limit it met, MaxBodyBytes or an edge's lower one),
// anything but an object 400.
func readJSONBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
			return nil, &statusError{http.StatusUnsupportedMediaType, "Content-Type must be application/json"}
		}
	}
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return nil, &statusError{http.StatusRequestEntityTooLarge, "request body is larger than " + byteSize(tooLarge.Limit)}
	}
	if err != nil {
		return nil, models.Errorf(models.EMALFORMED, "request body could not be read")
	}
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return nil, models.Errorf(models.EMALFORMED, "request body must be a JSON object")
	}
	return trimmed, nil
}

// byteSize is a size limit as people write it: 16 KiB, 1 MiB, or bytes.
func byteSize(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + " MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.FormatInt(n>>10, 10) + " KiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}
