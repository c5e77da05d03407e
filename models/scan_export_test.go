package models

// ScanColumns exposes the columns readMessages reads by hand to the external tests, which
// check them against the records' GORM columns.
func ScanColumns() (message, subscriber []string) {
	for _, c := range messageColumns {
		message = append(message, c.name)
	}
	for _, c := range subscriberColumns {
		subscriber = append(subscriber, c.name)
	}
	return message, subscriber
}
