package models

// Limits of a list request, enforced by the resolver and documented in the API.
const (
	DefaultPageSize   = 10
	MaxPageSize       = 1000
	MaxPage           = 10_000_000
	MaxTransactionIDs = 100
	MaxFilterLength   = 255
)

// ListFilter narrows a list of messages. Nil and empty fields do not filter.
type ListFilter struct {
	Channel *ChannelType
	// SubscriberID is the external subscriber id (Subscriber.subscriberId).
	SubscriberID   *string
	TransactionIDs []string
	// StateFilter narrows by read, seen, archived and snoozed.
	StateFilter
}

// Page selects one page of a list: Number counts from 0, Size is the page length.
type Page struct {
	Number int
	Size   int
}

// ListOptions says which parts of a page the caller will use, so GraphQL queries that
// do not select totalCount, subscriber or template do not pay for them.
type ListOptions struct {
	Count       bool
	Subscribers bool
	Templates   bool
}

// Everything is what /v1 always returns.
var Everything = ListOptions{Count: true, Subscribers: true, Templates: true}

// MessagesPage is one page of messages and what the caller needs to fetch the next.
type MessagesPage struct {
	TotalCount int        `json:"totalCount"`
	HasMore    bool       `json:"hasMore"`
	Data       []*Message `json:"data"`
	PageSize   int        `json:"pageSize"`
	Page       int        `json:"page"`
}
