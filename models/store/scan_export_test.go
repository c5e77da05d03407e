package store

// ScanColumns exposes the columns readMessages reads by hand to the external tests, which
// check them against the record's GORM columns.
func ScanColumns() (message []string) {
	for _, c := range messageColumns {
		message = append(message, c.name)
	}
	return message
}
