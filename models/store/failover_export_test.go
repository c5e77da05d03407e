package store

import "time"

// SetHostRetryAfter shortens how long a failed host is tried after the others, for one
// test, and returns what restores it.
func SetHostRetryAfter(d time.Duration) (restore func()) {
	old := hostRetryAfter
	hostRetryAfter = d
	return func() { hostRetryAfter = old }
}
