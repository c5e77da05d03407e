package models

import (
	"errors"
	"fmt"
	"time"
)

// Error codes. Each maps to one HTTP status (rest) and one GraphQL extensions.code (graph).
const (
	EINVALID      = "invalid"      // input failed validation: 422, BAD_USER_INPUT
	EMALFORMED    = "malformed"    // the request body could not be read: 400, BAD_USER_INPUT
	ENOTFOUND     = "not_found"    // no such record in the caller's environment: 404, NOT_FOUND
	EUNAUTHORIZED = "unauthorized" // no valid API key or session token: 401, UNAUTHENTICATED
	EFORBIDDEN    = "forbidden"    // the credential may not do this: 403, FORBIDDEN
	ERATELIMITED  = "rate_limited" // too many requests; retry later: 429, RATE_LIMITED
	ECONFLICT     = "conflict"     // the request collides with another: 409
	ETOOLARGE     = "too_large"    // the answer would pass the request's byte budget: 422, RESPONSE_TOO_LARGE
	// ECURSOREXPIRED: a cursor older than what the server keeps: 422, CURSOR_EXPIRED.
	ECURSOREXPIRED = "cursor_expired"
	EUNAVAILABLE   = "unavailable" // a dependency is down; retry later: 503
	EINTERNAL      = "internal"    // anything uncoded: 500, INTERNAL_SERVER_ERROR
)

// Error is an error the API may show to its caller: a code, a human message and, for
// validation failures, the offending fields.
type Error struct {
	Code    string
	Message string
	Fields  map[string]FieldError
	// ID identifies an internal error in the log; clients see only the id.
	ID string
}

// FieldError explains why one input field was refused and echoes the value given
// (omitted when no value was given).
type FieldError struct {
	Messages []string `json:"messages"`
	Value    any      `json:"value,omitempty"`
}

func (e *Error) Error() string { return e.Message }

// Errorf returns a coded error with a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Invalid returns a validation error about one field.
func Invalid(field string, value any, message string) *Error {
	return &Error{
		Code:    EINVALID,
		Message: message,
		Fields:  map[string]FieldError{field: {Messages: []string{message}, Value: value}},
	}
}

// ErrorCode returns the code of a coded error, EUNAVAILABLE for an uncoded error that
// means the database is unreachable (see IsUnavailable), or EINTERNAL for anything else.
func ErrorCode(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	if IsUnavailable(err) {
		return EUNAVAILABLE
	}
	return EINTERNAL
}

// ErrorMessage returns the message of a coded error, UnavailableMessage for an unreachable
// database, or "internal error" for anything else, so uncoded details never reach a client.
func ErrorMessage(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	if IsUnavailable(err) {
		return UnavailableMessage
	}
	return "internal error"
}

// Internal wraps an unexpected failure: the cause goes to the log under a fresh error id,
// and the caller sees only "internal error" and the id.
func Internal(now time.Time) *Error {
	return &Error{Code: EINTERNAL, Message: "internal error", ID: NewID(now)}
}

// UnavailableRetryAfter is the Retry-After, in seconds, of every 503 for an unreachable
// database: long enough for a dropped connection to be replaced, short enough that
// clients do not give up.
const UnavailableRetryAfter = "2"
