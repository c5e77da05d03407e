package models

import "strings"

// The platform's inbox clients (@novu/js 3.19.2, which @novu/react's <Inbox /> runs on)
// read a message as a notification of their own shape: InboxNotification, built from a
// stored Message by NewInboxNotification. Every field the client's Notification class
// copies is here; those this server has no value for are omitted, and docs/inbox.md says
// why for each.

// InboxNotification is a message as the platform's inbox clients read it.
type InboxNotification struct {
	ID            string          `json:"id"`
	TransactionID string          `json:"transactionId"`
	Subject       string          `json:"subject,omitempty"`
	Body          string          `json:"body"`
	To            InboxSubscriber `json:"to"`
	IsRead        bool            `json:"isRead"`
	IsSeen        bool            `json:"isSeen"`
	IsArchived    bool            `json:"isArchived"`
	IsSnoozed     bool            `json:"isSnoozed"`
	SnoozedUntil  *Time           `json:"snoozedUntil"`
	DeliveredAt   []Time          `json:"deliveredAt,omitempty"`
	CreatedAt     Time            `json:"createdAt"`
	ReadAt        *Time           `json:"readAt"`
	FirstSeenAt   *Time           `json:"firstSeenAt"`
	ArchivedAt    *Time           `json:"archivedAt"`
	Avatar        string          `json:"avatar,omitempty"`
	Primary       *InboxAction    `json:"primaryAction,omitempty"`
	Secondary     *InboxAction    `json:"secondaryAction,omitempty"`
	ChannelType   ChannelType     `json:"channelType"`
	Tags          []string        `json:"tags"`
	Data          JSON            `json:"data,omitempty"`
	Redirect      *InboxRedirect  `json:"redirect,omitempty"`
	Workflow      *InboxWorkflow  `json:"workflow,omitempty"`
	Severity      Severity        `json:"severity"`
}

// InboxSubscriber is the notification's recipient, as the client's Subscriber type.
type InboxSubscriber struct {
	ID           string `json:"id,omitempty"`
	SubscriberID string `json:"subscriberId"`
	FirstName    string `json:"firstName,omitempty"`
	LastName     string `json:"lastName,omitempty"`
	Email        string `json:"email,omitempty"`
	Phone        string `json:"phone,omitempty"`
	Avatar       string `json:"avatar,omitempty"`
	Locale       string `json:"locale,omitempty"`
	Data         JSON   `json:"data,omitempty"`
	Timezone     string `json:"timezone,omitempty"`
}

// InboxAction is one of the call-to-action buttons as the client's Action type: its
// label, and whether it is the button the subscriber pressed and completed.
type InboxAction struct {
	Label       string `json:"label"`
	IsCompleted bool   `json:"isCompleted"`
}

// InboxRedirect is where opening the notification goes: the redirect call-to-action's
// URL.
type InboxRedirect struct {
	URL string `json:"url"`
}

// InboxWorkflow is the workflow (template) a notification came from, as the client's
// Workflow type.
type InboxWorkflow struct {
	ID         string   `json:"id"`
	Identifier string   `json:"identifier"`
	Name       string   `json:"name"`
	Critical   bool     `json:"critical"`
	Tags       []string `json:"tags"`
	Severity   Severity `json:"severity"`
}

// NewInboxNotification is m in the inbox client's shape. The body is the text of m's
// content blocks, one per line (its title without any); the actions are its call-to-action buttons, completed
// when the action is done with that button's result; the redirect is a redirect
// call-to-action's URL. The read time is the last read date while m is read.
func NewInboxNotification(m *Message) InboxNotification {
	n := InboxNotification{
		ID: m.ID, TransactionID: m.TransactionID, Subject: m.Subject, Body: inboxBody(m),
		IsRead: m.Read, IsSeen: m.Seen, IsArchived: m.Archived, IsSnoozed: m.SnoozedUntil != nil,
		SnoozedUntil: m.SnoozedUntil, DeliveredAt: m.DeliveredAt, CreatedAt: m.CreatedAt,
		FirstSeenAt: m.FirstSeenDate, ArchivedAt: m.ArchivedAt, ChannelType: m.Channel,
		Tags: []string{}, Severity: m.Severity.Or(),
	}
	if m.Read {
		n.ReadAt = m.LastReadDate
	}
	if !m.Archived {
		n.ArchivedAt = nil
	}
	if s := m.Subscriber; s != nil {
		n.To = InboxSubscriber{ID: s.ID, SubscriberID: s.SubscriberID, FirstName: s.FirstName, LastName: s.LastName,
			Email: s.Email, Phone: s.Phone, Avatar: s.Avatar, Locale: s.Locale, Data: s.Data, Timezone: s.Timezone}
	}
	if t := m.Template; t != nil {
		n.Workflow = inboxWorkflow(t, m.TemplateIdentifier)
		n.Tags = n.Workflow.Tags
	}
	if m.CTA.Type == "redirect" && m.CTA.Data != nil && m.CTA.Data.URL != "" {
		n.Redirect = &InboxRedirect{URL: m.CTA.Data.URL}
	}
	if a := m.CTA.Action; a != nil {
		for _, b := range a.Buttons {
			action := &InboxAction{Label: b.Content,
				IsCompleted: a.Status == ActionDone && a.Result != nil && a.Result.Type == b.Type}
			switch {
			case b.Type == ButtonPrimary && n.Primary == nil:
				n.Primary = action
			case b.Type == ButtonSecondary && n.Secondary == nil:
				n.Secondary = action
			}
		}
	}
	return n
}

// NewInboxWorkflow is t as the client's Workflow: its identifier is its first trigger's
// (what the platform triggers it by), else fallback, else its id.
func NewInboxWorkflow(t *Template) *InboxWorkflow { return inboxWorkflow(t, "") }

func inboxWorkflow(t *Template, fallback string) *InboxWorkflow {
	w := &InboxWorkflow{ID: t.ID, Identifier: fallback, Name: t.Name, Critical: t.Critical, Tags: t.Tags, Severity: t.Severity.Or()}
	if len(t.Triggers) > 0 && t.Triggers[0].Identifier != "" {
		w.Identifier = t.Triggers[0].Identifier
	}
	if w.Identifier == "" {
		w.Identifier = t.ID
	}
	if w.Tags == nil {
		w.Tags = []string{}
	}
	return w
}

// inboxBody is the text of m's content blocks, one per line, an in-app message's body;
// its title when it has no text block.
func inboxBody(m *Message) string {
	var lines []string
	for _, b := range m.Content {
		if b.Type == "text" && b.Content != "" {
			lines = append(lines, b.Content)
		}
	}
	if len(lines) == 0 {
		return m.Title
	}
	return strings.Join(lines, "\n")
}
