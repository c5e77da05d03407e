package models

import (
	"encoding/binary"
	"slices"
)

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
	// TemplateIDs keeps messages of these templates (workflows) only: the inbox client's
	// tags filter, resolved to the workflows that carry the tags.
	TemplateIDs []string
	// CreatedFrom and CreatedTo keep messages created in that range, both ends included:
	// the inbox client's createdGte and createdLte.
	CreatedFrom, CreatedTo *Time
	// StateFilter narrows by read, seen, archived, snoozed and severity.
	StateFilter
}

// Counted reports whether the counters answer f's count: they are kept per environment,
// subscriber, channel and inbox state (message_counts), and, for each subscriber, per
// channel, workflow, month of creation and state (message_workflow_counts), so workflows
// and creation ranges are counted when f names a subscriber. Transaction ids, and
// workflows or creation ranges across subscribers, are counted with COUNT over their
// rows. A new filter field is added here as one or the other.
func (f ListFilter) Counted() bool {
	if len(f.TransactionIDs) > 0 {
		return false
	}
	return f.SubscriberID != nil || (len(f.TemplateIDs) == 0 && f.CreatedFrom == nil && f.CreatedTo == nil)
}

// AppendKey appends a canonical encoding of f: equal for the same filter however it was
// spelled (transaction ids in any order, repeated), different for different filters.
// Cursors are signed over it (so a cursor works only for its filter) and the store keys
// page boundaries by it; a new filter field is added here once. Fields in a fixed order,
// each length-prefixed; the state filter, the templates and the creation range only when
// there are some, so the encoding of a filter without them is what it was before they
// existed.
func (f ListFilter) AppendKey(b []byte) []byte {
	var channel string
	if f.Channel != nil {
		channel = string(*f.Channel)
	}
	b = appendKeyString(b, channel)
	if f.SubscriberID == nil {
		b = append(b, 0)
	} else {
		b = append(b, 1)
		b = appendKeyString(b, *f.SubscriberID)
	}
	ids := slices.Compact(slices.Sorted(slices.Values(f.TransactionIDs)))
	b = binary.AppendUvarint(b, uint64(len(ids)))
	for _, id := range ids {
		b = appendKeyString(b, id)
	}
	if !f.StateFilter.IsZero() {
		b = append(b, 's')
		for _, v := range []*bool{f.Read, f.Seen, f.Archived, f.Snoozed} {
			switch {
			case v == nil:
				b = append(b, 0)
			case *v:
				b = append(b, 2)
			default:
				b = append(b, 1)
			}
		}
	}
	if len(f.TemplateIDs) > 0 {
		// Only when there are some, as for the state filter.
		templates := slices.Compact(slices.Sorted(slices.Values(f.TemplateIDs)))
		b = append(b, 't')
		b = binary.AppendUvarint(b, uint64(len(templates)))
		for _, id := range templates {
			b = appendKeyString(b, id)
		}
	}
	if f.CreatedFrom != nil || f.CreatedTo != nil {
		b = append(b, 'c')
		for _, t := range []*Time{f.CreatedFrom, f.CreatedTo} {
			if t == nil {
				b = append(b, 0)
				continue
			}
			b = append(b, 1)
			b = binary.AppendVarint(b, t.UnixMilli())
		}
	}
	if f.Severities != 0 {
		// Only when there are some, as for the others; beside the state filter's flags,
		// whose encoding is kept.
		b = append(b, 'v', byte(f.Severities))
	}
	return b
}

func appendKeyString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
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
