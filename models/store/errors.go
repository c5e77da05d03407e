package store

import "messages/models"

// errNotFound is the one answer for a missing record and for another tenant's record,
// so a caller cannot tell them apart.
func errNotFound(what string) *models.Error {
	return models.Errorf(models.ENOTFOUND, "%s not found", what)
}
