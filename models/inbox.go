package models

// The inbox state of a message: whether its subscriber read it, saw it, archived it and
// snoozed it, and its severity. These make a State, the unit the counters are kept by
// (migrations 9 and 12).

// State is a message's inbox state: four bits, and its severity's level above them
// (StateSeverityShift); the key of its counter rows.
type State uint8

// The bits of a State.
const (
	StateRead     State = 1
	StateSeen     State = 2
	StateArchived State = 4
	StateSnoozed  State = 8
	// StateSeverityShift is where the severity's level (0 none, 1 low, 2 medium, 3 high)
	// starts.
	StateSeverityShift = 4
	// States is how many states there are.
	States = 64
)

// StateOf is m's state: snoozed while SnoozedUntil is set (an ended snooze is cleared
// by the store's sweep, which is when the message counts as unsnoozed).
func StateOf(m *Message) State {
	var s State
	if m.Read {
		s |= StateRead
	}
	if m.Seen {
		s |= StateSeen
	}
	if m.Archived {
		s |= StateArchived
	}
	if m.SnoozedUntil != nil {
		s |= StateSnoozed
	}
	return s | m.Severity.level()<<StateSeverityShift
}

// StateFilter narrows messages by their inbox state; a nil field, or no severities,
// does not filter.
type StateFilter struct {
	Read, Seen, Archived, Snoozed *bool
	// Severities keeps messages of these severities (none also those without one).
	Severities SeveritySet `json:",omitempty"`
}

// IsZero reports whether f filters nothing.
func (f StateFilter) IsZero() bool {
	return f.Read == nil && f.Seen == nil && f.Archived == nil && f.Snoozed == nil && f.Severities == 0
}

// Matches reports whether a message in state s passes f.
func (f StateFilter) Matches(s State) bool {
	return matchBit(f.Read, s&StateRead != 0) && matchBit(f.Seen, s&StateSeen != 0) &&
		matchBit(f.Archived, s&StateArchived != 0) && matchBit(f.Snoozed, s&StateSnoozed != 0) &&
		(f.Severities == 0 || f.Severities&(1<<(s>>StateSeverityShift)) != 0)
}

func matchBit(want *bool, has bool) bool { return want == nil || *want == has }

// States lists the states f matches, in order; all of them when f is zero.
func (f StateFilter) States() []State {
	out := make([]State, 0, States)
	for s := range State(States) {
		if f.Matches(s) {
			out = append(out, s)
		}
	}
	return out
}

// StateCounts is how many of a set of messages are in each state.
type StateCounts [States]int

// Count is how many of the messages f matches.
func (c StateCounts) Count(f StateFilter) int {
	n := 0
	for s, k := range c {
		if f.Matches(State(s)) {
			n += k
		}
	}
	return n
}

// StateChange is what a write of the inbox state sets; a nil field is kept. Setting
// Read, Seen or Archived stamps its time (lastReadDate, lastSeenDate and firstSeenDate,
// archivedAt) when the message was not in that state yet, so repeating a change changes
// nothing. Unarchiving clears archivedAt.
type StateChange struct {
	Read, Seen, Archived *bool
	// SnoozedUntil snoozes the message until then; Unsnooze ends a snooze.
	SnoozedUntil *Time
	Unsnooze     bool
}

// Changes reports whether c writes a message in state s: whether s is not yet in a
// state c sets.
func (c StateChange) Changes(s State) bool {
	differs := func(want *bool, has bool) bool { return want != nil && *want != has }
	return differs(c.Read, s&StateRead != 0) || differs(c.Seen, s&StateSeen != 0) ||
		differs(c.Archived, s&StateArchived != 0) || c.SnoozedUntil != nil ||
		(c.Unsnooze && s&StateSnoozed != 0)
}

// IsZero reports whether c changes nothing.
func (c StateChange) IsZero() bool {
	return c.Read == nil && c.Seen == nil && c.Archived == nil && c.SnoozedUntil == nil && !c.Unsnooze
}

// StateTarget is which of a subscriber's messages a state change applies to: the ones
// named by MessageIDs (of Channel, when set), or, when there are none, every one of the
// subscriber's messages that Channel and Filter match.
type StateTarget struct {
	// SubscriberID is the external subscriber id the messages must belong to.
	SubscriberID string
	MessageIDs   []string
	Channel      *ChannelType
	Filter       StateFilter
	// Tags narrows a change of all messages to those of workflows with these tags
	// (groups, each met by any of its tags): the inbox client's tags filter. The service
	// resolves them to TemplateIDs, which the store applies.
	Tags        [][]string
	TemplateIDs []string
	// TransactionID, when set, narrows a change of all messages to those of one
	// transaction (a workflow run): what a server-side workflow marks of what it sent.
	TransactionID string
}

// MaxStateMessageIDs bounds the messages one change names.
const MaxStateMessageIDs = 100

// StateChanged is what a state change did: how many messages it changed, and, when
// messages were named, each of them as stored after it (named messages that do not
// exist, or are another subscriber's, are left out).
type StateChanged struct {
	Changed  int
	Messages []*Message
	// JobID is set when a change of all messages was accepted but not finished by the
	// answer: it carries on after it, as the job of that id, until done (surviving a
	// restart); Changed is then how many it had changed by the answer.
	JobID string
	// Total, for a change carried on after its answer, is how many messages it changes
	// in all when its caller counted them as it was asked (MarkMessagesAs does, for
	// /v1's mark-all, whose clients take a number and nothing else): the messages not yet
	// in the state then, as the counters had them. Zero when not counted.
	Total int
}

// Done reports whether the change was complete when answered.
func (c *StateChanged) Done() bool { return c.JobID == "" }

// Unread is the badge's filter: messages not read, archived or snoozed.
func Unread() StateFilter {
	return StateFilter{Read: Bool(false), Archived: Bool(false), Snoozed: Bool(false)}
}

// Unseen is messages not seen, archived or snoozed.
func Unseen() StateFilter {
	return StateFilter{Seen: Bool(false), Archived: Bool(false), Snoozed: Bool(false)}
}

// Bool returns a pointer to v, for the optional flags of filters and changes.
func Bool(v bool) *bool { return &v }

// Counts is one answer of a live count stream: the counts by state, or Err, which ends
// the stream (the server shut down, or the client read too slowly).
type Counts struct {
	States StateCounts
	Err    error
}
