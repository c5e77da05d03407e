package models

// MarkAction sets the state of a message's call-to-action, as a subscriber pressing one
// of its buttons would.
type MarkAction struct {
	// SubscriberID is the external subscriber id the message must belong to.
	SubscriberID string
	MessageID    string
	Type         ButtonType
	Status       MessageActionStatus
	// Payload replaces the stored result payload when set; nil keeps it.
	Payload JSON
	// Channel, when set, is the channel the message must be of: a message of another is
	// not found (the inbox API changes in-app messages only).
	Channel *ChannelType
}
