package store

import "messages/models"

// ScanColumns exposes the columns readMessages reads by hand to the external tests, which
// check them against the record's GORM columns.
func ScanColumns() (message []string) {
	for _, c := range messageColumns {
		message = append(message, c.name)
	}
	return message
}

// IsJSON exposes the check of a free-form JSON column to the external tests, which hold
// it to json.Valid.
func IsJSON(b []byte) bool { return isJSON(models.JSON(b)) }
