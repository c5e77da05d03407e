package rest

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"messages/models"
)

// statuses maps an error code to its HTTP status.
var statuses = map[string]int{
	models.EINVALID:       http.StatusUnprocessableEntity,
	models.EMALFORMED:     http.StatusBadRequest,
	models.ENOTFOUND:      http.StatusNotFound,
	models.EUNAUTHORIZED:  http.StatusUnauthorized,
	models.EFORBIDDEN:     http.StatusForbidden,
	models.ERATELIMITED:   http.StatusTooManyRequests,
	models.ECONFLICT:      http.StatusConflict,
	models.ETOOLARGE:      http.StatusUnprocessableEntity,
	models.ECURSOREXPIRED: http.StatusUnprocessableEntity,
	models.EUNAVAILABLE:   http.StatusServiceUnavailable,
	models.EINTERNAL:      http.StatusInternalServerError,
}

// statusError is a refusal that only HTTP has words for (405, 413, 415).
type statusError struct {
	status  int
	message string
}

func (e *statusError) Error() string { return e.message }

// HTTPStatus is the status of the refusal.
func (e *statusError) HTTPStatus() int { return e.status }

// httpStatusError is any refusal that only HTTP has words for: this package's own and the
// HTTP edge's (413, 415, 429), which the error body answers with their status.
type httpStatusError interface {
	error
	HTTPStatus() int
}

// ErrorBody is the documented error response of every 4xx and 5xx.
type ErrorBody struct {
	StatusCode int    `json:"statusCode"`
	Timestamp  string `json:"timestamp"`
	Path       string `json:"path"`
	Message    string `json:"message"`
	Error      string `json:"error"`
	// Errors details a 422 by field; on /graphql it is GraphQL's errors array.
	Errors  any    `json:"errors,omitempty"`
	ErrorID string `json:"errorId,omitempty"`
}

// ErrorWriter writes the documented error body; internal errors are logged with their id
// first. It is the edge's error writer of /v1 and, with WithErrors, of /graphql.
type ErrorWriter struct {
	logger *slog.Logger
	now    func() time.Time
	// details, when set, is the body's errors member instead of the fields of a 422.
	details func(err error) any
}

// NewErrorWriter returns the /v1 error writer, logging to logger and stamping bodies
// with now.
func NewErrorWriter(logger *slog.Logger, now func() time.Time) ErrorWriter {
	return ErrorWriter{logger: logger, now: now}
}

// WithErrors returns a writer whose bodies carry details(err) as their errors member:
// GraphQL's errors array on /graphql, so GraphQL clients find their usual shape.
func (ew ErrorWriter) WithErrors(details func(err error) any) ErrorWriter {
	ew.details = details
	return ew
}

// WriteError answers r with err. Uncoded errors become a 500 whose only detail is an errorId
// that leads to the cause in the log; an unreachable database becomes a 503 the same way,
// with Retry-After.
func (ew ErrorWriter) WriteError(w http.ResponseWriter, r *http.Request, err error) {
	status := http.StatusInternalServerError
	var se httpStatusError
	if errors.As(err, &se) {
		status = se.HTTPStatus()
	} else {
		var e *models.Error
		switch {
		case errors.As(err, &e) && (e.Code != models.EINTERNAL || e.ID != ""):
			// Coded, or internal and already logged under its id.
		case e == nil && models.IsUnavailable(err):
			unavailable := models.Unavailable(ew.now())
			ew.logger.ErrorContext(r.Context(), "database unavailable", "errorId", unavailable.ID, "method", r.Method, "path", r.URL.Path, "error", err)
			err = unavailable
		default:
			internal := models.Internal(ew.now())
			ew.logger.ErrorContext(r.Context(), "request failed", "errorId", internal.ID, "method", r.Method, "path", r.URL.Path, "error", err)
			err = internal
		}
		status = statuses[models.ErrorCode(err)]
	}
	body := ErrorBody{
		StatusCode: status,
		Timestamp:  models.NewTime(ew.now()).String(),
		Path:       bodyPath(r),
		Message:    err.Error(),
		Error:      http.StatusText(status),
	}
	var e *models.Error
	if errors.As(err, &e) {
		body.ErrorID = e.ID
		if len(e.Fields) > 0 {
			body.Errors = e.Fields
		}
	}
	if ew.details != nil {
		body.Errors = ew.details(err)
	}
	switch status {
	case http.StatusUnauthorized:
		w.Header().Set("WWW-Authenticate", "ApiKey")
	case http.StatusServiceUnavailable:
		w.Header().Set("Retry-After", models.UnavailableRetryAfter)
	}
	writeJSON(w, status, body)
}

// maxQuoted is the most of a request's path an error quotes, in its message or its
// body's path: enough to recognise, never the whole of a hostile one.
const maxQuoted = 200

// RouteNotFound is the 404 of a request no route serves, in the platform's words
// ("Cannot GET /v1/nope"), quoting at most 32 bytes of the method and maxQuoted of the
// path.
func RouteNotFound(r *http.Request) error {
	return &statusError{http.StatusNotFound, "Cannot " + quote(r.Method, 32) + " " + quote(r.URL.Path, maxQuoted)}
}

// bodyPath is the request's path and query as an error body quotes them.
func bodyPath(r *http.Request) string { return quote(r.URL.RequestURI(), maxQuoted) }

// quote is s cut to at most n bytes on a character boundary, with an ellipsis when cut,
// and invalid UTF-8 replaced.
func quote(s string, n int) string {
	if len(s) <= n && utf8.ValidString(s) {
		return s
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// writeJSON writes v as the response body. HTML characters stay unescaped so stored
// payloads come back byte for byte, as the platform's Node.js API sent them.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// writeEncoded writes a record already in its wire form as the response body, ended by
// the newline writeJSON's encoder writes.
func writeEncoded(w http.ResponseWriter, status int, b []byte) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}
