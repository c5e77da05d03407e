package models

// NodeQuery names the records Query.nodes asks for, by record id and kind, and whom for.
type NodeQuery struct {
	Messages, Subscribers, Templates []string
	// SubscriberID is the external id of the subscriber a session is scoped to
	// (Caller.SubscriberID): only that subscriber's messages and the subscriber itself are
	// found. Empty (an API key) finds any of the environment's.
	SubscriberID string
	// EmbedSubscribers and EmbedTemplates say which records to embed in the messages found.
	EmbedSubscribers, EmbedTemplates bool
}

// Nodes are the records a NodeQuery found, by record id; what is missing was not found
// in the environment, or is not the scoped subscriber's.
type Nodes struct {
	Messages    map[string]*Message
	Subscribers map[string]*Subscriber
	Templates   map[string]*Template
}
