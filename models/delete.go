package models

// DeleteTarget is which messages a delete removes, for good: the ones MessageIDs names,
// or, when it names none, every message of TransactionID, or every one of the
// subscriber's that Channel, Filter and Tags match. Channel narrows each shape.
type DeleteTarget struct {
	// SubscriberID, when set, is the external id of the subscriber whose messages alone
	// may be deleted: a session's own, or the one a filter applies to. An API key
	// deleting by id or by transaction leaves it out to reach any subscriber of its
	// environment.
	SubscriberID  *string
	MessageIDs    []string
	TransactionID *string
	Channel       *ChannelType
	Filter        StateFilter
	// Tags narrows a delete by filter to the messages of workflows with these tags, as
	// StateTarget.Tags does; the service resolves them to TemplateIDs.
	Tags        [][]string
	TemplateIDs []string
}

// ByFilter reports whether t deletes by filter: it names no message and no transaction.
func (t DeleteTarget) ByFilter() bool { return len(t.MessageIDs) == 0 && t.TransactionID == nil }

// MaxDeleteMessageIDs bounds the messages one delete names.
const MaxDeleteMessageIDs = MaxStateMessageIDs

// Deleted is what a delete did: how many messages it removed, and which of the named
// ones (those that did not exist, or were not the caller's to delete, are left out).
type Deleted struct {
	Deleted int
	IDs     []string
	// JobID is set when a delete by filter was accepted but not finished by the answer:
	// it carries on, as the job of that id, until done.
	JobID string
}

// Done reports whether the delete was complete when answered.
func (d *Deleted) Done() bool { return d.JobID == "" }
