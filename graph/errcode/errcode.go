// Package errcode is GraphQL's word for each error code of models: the extensions.code
// clients switch on. It is the one table the error presenter, the transports and the
// extensions read, so a code is named the same whichever of them answers.
package errcode

import "messages/models"

// For is the GraphQL extensions.code of a models error code (models.ENOTFOUND and the
// rest), "" for a code it does not know.
func For(code string) string {
	switch code {
	case models.EINVALID, models.EMALFORMED:
		return "BAD_USER_INPUT"
	case models.ENOTFOUND:
		return "NOT_FOUND"
	case models.EUNAUTHORIZED:
		return "UNAUTHENTICATED"
	case models.EFORBIDDEN:
		return "FORBIDDEN"
	case models.ERATELIMITED:
		return "RATE_LIMITED"
	case models.ECONFLICT:
		return "CONFLICT"
	case models.ETOOLARGE:
		return "RESPONSE_TOO_LARGE"
	case models.ECURSOREXPIRED:
		return "CURSOR_EXPIRED"
	case models.EUNAVAILABLE:
		return "SERVICE_UNAVAILABLE"
	case models.EINTERNAL:
		return "INTERNAL_SERVER_ERROR"
	}
	return ""
}

// Of is the GraphQL extensions.code of err; anything uncoded is internal.
func Of(err error) string { return For(models.ErrorCode(err)) }
