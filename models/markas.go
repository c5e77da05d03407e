package models

// MarkAs is a mark of /v1's mark-all and mark-as calls (the platform's
// MessagesStatusEnum): read, seen, unread or unseen.
type MarkAs string

// The marks of MarkAs.
const (
	MarkRead   MarkAs = "read"
	MarkSeen   MarkAs = "seen"
	MarkUnread MarkAs = "unread"
	MarkUnseen MarkAs = "unseen"
)

// MarkAsValues are the marks, in the order the SDKs list them.
var MarkAsValues = []MarkAs{MarkRead, MarkSeen, MarkUnread, MarkUnseen}

// Change is the state change m makes, as the platform's message repository writes it:
// read also sees, and so does unread (a message marked unread has been looked at);
// seen and unseen touch seen only. Archive and snooze are kept.
func (m MarkAs) Change() (StateChange, bool) {
	switch m {
	case MarkRead:
		return StateChange{Read: Bool(true), Seen: Bool(true)}, true
	case MarkUnread:
		return StateChange{Read: Bool(false), Seen: Bool(true)}, true
	case MarkSeen:
		return StateChange{Seen: Bool(true)}, true
	case MarkUnseen:
		return StateChange{Seen: Bool(false)}, true
	}
	return StateChange{}, false
}
