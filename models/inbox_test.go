package models

import (
	"testing"
	"time"
)

// TestStateChangeChanges holds Changes to the store's rule: a message is written only
// when it is not yet in a state the change sets (what /v1's mark-all counts before it
// answers for a change it carries on).
func TestStateChangeChanges(t *testing.T) {
	yes, no := true, false
	until := NewTime(time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC))
	read, seen := StateRead, StateSeen
	tests := []struct {
		name   string
		change StateChange
		state  State
		want   bool
	}{
		{"readChangesUnread", StateChange{Read: &yes, Seen: &yes}, 0, true},
		{"readChangesReadUnseen", StateChange{Read: &yes, Seen: &yes}, read, true},
		{"readKeepsReadSeen", StateChange{Read: &yes, Seen: &yes}, read | seen, false},
		{"unreadChangesRead", StateChange{Read: &no, Seen: &yes}, read | seen, true},
		{"unreadKeepsUnreadSeen", StateChange{Read: &no, Seen: &yes}, seen, false},
		{"seenIgnoresRead", StateChange{Seen: &yes}, seen | StateArchived, false},
		{"archiveChangesUnarchived", StateChange{Archived: &yes}, read, true},
		{"snoozeChangesAny", StateChange{SnoozedUntil: &until}, StateSnoozed, true},
		{"unsnoozeKeepsUnsnoozed", StateChange{Unsnooze: true}, read, false},
		{"unsnoozeChangesSnoozed", StateChange{Unsnooze: true}, StateSnoozed, true},
		{"severityIsNoState", StateChange{Read: &yes}, read | 3<<StateSeverityShift, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.change.Changes(tt.state); got != tt.want {
				t.Errorf("Changes(%b) = %v, want %v", tt.state, got, tt.want)
			}
		})
	}
}
