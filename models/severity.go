package models

import (
	"io"
	"slices"
)

// Severity is how urgent a message is, as the platform's SeverityLevelEnum: high,
// medium, low or none. The inbox client filters, counts (unreadCount.severity) and
// colours notifications by it. Stored per message; a message without one (empty, as a
// row another writer inserted) is none.
type Severity string

// The severities of Severity.
const (
	SeverityHigh   Severity = "high"
	SeverityMedium Severity = "medium"
	SeverityLow    Severity = "low"
	SeverityNone   Severity = "none"
)

// Severities are the severity levels, in the order the inbox client counts them.
var Severities = []Severity{SeverityHigh, SeverityMedium, SeverityLow, SeverityNone}

// Valid reports whether s is one of Severities; the empty severity is not (it is stored
// as none's spelling of "no value", never sent by a client).
func (s Severity) Valid() bool { return slices.Contains(Severities, s) }

// Or is s, or none when s is empty.
func (s Severity) Or() Severity {
	if s == "" {
		return SeverityNone
	}
	return s
}

// level is s's place in a State (StateSeverityShift): none (and anything unknown) 0,
// low 1, medium 2, high 3, as the counters' triggers number them (migration 12).
func (s Severity) level() State {
	switch s {
	case SeverityLow:
		return 1
	case SeverityMedium:
		return 2
	case SeverityHigh:
		return 3
	}
	return 0
}

// SeveritySet is a set of severities, a bit for each level; the zero set filters
// nothing.
type SeveritySet uint8

// NewSeveritySet is the set of list; it reports false for a severity it does not know.
func NewSeveritySet(list []Severity) (SeveritySet, bool) {
	var set SeveritySet
	for _, s := range list {
		if !s.Valid() {
			return 0, false
		}
		set |= 1 << s.level()
	}
	return set, true
}

// Has reports whether s is in the set.
func (set SeveritySet) Has(s Severity) bool { return set&(1<<s.level()) != 0 }

// List is the set's severities, in the order of Severities.
func (set SeveritySet) List() []Severity {
	var out []Severity
	for _, s := range Severities {
		if set.Has(s) {
			out = append(out, s)
		}
	}
	return out
}

// All reports whether the set holds every severity: it then matches every message.
func (set SeveritySet) All() bool { return set == 0b1111 }

// UnreadCounts is the inbox badge: how many messages are unread (Unread), in all and of
// each severity, in the order of Severities.
type UnreadCounts struct {
	Total      int
	BySeverity [4]int
}

// UnreadCounts is the badge of the messages c counts.
func (c StateCounts) UnreadCounts() UnreadCounts {
	out := UnreadCounts{Total: c.Count(Unread())}
	for i, s := range Severities {
		set, _ := NewSeveritySet([]Severity{s})
		f := Unread()
		f.Severities = set
		out.BySeverity[i] = c.Count(f)
	}
	return out
}

// MarshalGQL writes the severity, none when empty.
func (s Severity) MarshalGQL(w io.Writer) { marshalEnum(w, s.Or()) }

// UnmarshalGQL reads the severity.
func (s *Severity) UnmarshalGQL(v any) error { return unmarshalEnum(s, v, "Severity") }
