package changefeed

import (
	"testing"
	"time"
)

// A poll's window starts on a whole millisecond: the query compares stamps with it at
// the database's precision (SQLite's are text in milliseconds), and the changes already
// published are forgotten below it. A window starting at .829400 forgot a change stamped
// .829, which the next query (changed_at >= '.829') read and published again.
func TestWindowStartsOnAMillisecond(t *testing.T) {
	lastPoll := time.Date(2025, 3, 1, 9, 0, 2, 829_400_000, time.UTC)
	stamp := time.Date(2025, 3, 1, 9, 0, 0, 829_000_000, time.UTC)
	from := windowFrom(lastPoll, 2*time.Second, time.Time{})
	if want := stamp; !from.Equal(want) {
		t.Fatalf("from = %s, want %s", from.Format(time.RFC3339Nano), want.Format(time.RFC3339Nano))
	}
	if stamp.Before(from) {
		t.Fatal("a change the next query reads would be forgotten")
	}
	hold := time.Date(2025, 3, 1, 8, 59, 0, 123_456_789, time.UTC)
	if got, want := windowFrom(lastPoll, 2*time.Second, hold), time.Date(2025, 3, 1, 8, 59, 0, 123_000_000, time.UTC); !got.Equal(want) {
		t.Fatalf("from with a hold = %s, want %s", got.Format(time.RFC3339Nano), want.Format(time.RFC3339Nano))
	}
}
