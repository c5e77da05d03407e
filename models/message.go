package models

//go:generate go run ./internal/recordgen

import "gorm.io/gorm"

// Message is one delivered notification: the record both /v1 operations return.
// Field order and JSON names follow the documented record; optional fields without a
// value are omitted (never null) because the published TypeScript SDK rejects null.
// The store's scan of a row and the /v1 appender are generated from these fields and
// their tags (go generate: models/internal/recordgen).
type Message struct {
	ID                 string      `json:"_id" gorm:"primaryKey;size:24"`
	TemplateID         string      `json:"_templateId,omitempty"`
	EnvironmentID      string      `json:"_environmentId"`
	MessageTemplateID  string      `json:"_messageTemplateId,omitempty"`
	OrganizationID     string      `json:"_organizationId"`
	NotificationID     string      `json:"_notificationId"`
	SubscriberID       string      `json:"_subscriberId"`
	Subscriber         *Subscriber `json:"subscriber,omitempty" gorm:"-"`
	Template           *Template   `json:"template,omitempty" gorm:"-"`
	TemplateIdentifier string      `json:"templateIdentifier,omitempty"`
	CreatedAt          Time        `json:"createdAt"`
	DeliveredAt        []Time      `json:"deliveredAt,omitempty" gorm:"serializer:jsontext"`
	LastSeenDate       *Time       `json:"lastSeenDate,omitempty"`
	LastReadDate       *Time       `json:"lastReadDate,omitempty"`
	// FirstSeenDate is when the subscriber first saw the message; not in the platform's
	// /v1 record, so sent only when set.
	FirstSeenDate *Time `json:"firstSeenDate,omitempty"`
	// Content is always sent as an array, empty when the message has no blocks.
	Content       []ContentBlock `json:"content" gorm:"serializer:jsontext"`
	TransactionID string         `json:"transactionId"`
	Subject       string         `json:"subject,omitempty"`
	Channel       ChannelType    `json:"channel"`
	Read          bool           `json:"read"`
	Seen          bool           `json:"seen"`
	// Archived and ArchivedAt are not in the platform's /v1 record either: sent only for
	// an archived message, so the records of every other message keep their bytes.
	Archived         bool     `json:"archived,omitempty"`
	ArchivedAt       *Time    `json:"archivedAt,omitempty"`
	SnoozedUntil     *Time    `json:"snoozedUntil,omitempty"`
	Email            string   `json:"email,omitempty"`
	Phone            string   `json:"phone,omitempty"`
	DirectWebhookURL string   `json:"directWebhookUrl,omitempty"`
	ProviderID       string   `json:"providerId,omitempty"`
	DeviceTokens     []string `json:"deviceTokens,omitempty" gorm:"serializer:jsontext"`
	Title            string   `json:"title,omitempty"`
	CTA              CTA      `json:"cta" gorm:"column:cta;serializer:jsontext"`
	FeedID           string   `json:"_feedId,omitempty"`
	Status           string   `json:"status"`
	ErrorID          string   `json:"errorId,omitempty"`
	ErrorText        string   `json:"errorText,omitempty"`
	Payload          JSON     `json:"payload,omitempty"`
	Overrides        JSON     `json:"overrides,omitempty"`
	// Severity is the platform's severity of the message (high, medium, low, none); not
	// in its /v1 record, so sent only when set. Empty is none.
	Severity Severity `json:"severity,omitempty"`

	// The last mark, kept beside the cta document so a mark is one plain UPDATE; empty
	// (nil) means never marked (payload never given). AfterFind folds them into CTA.
	ActionStatus        MessageActionStatus `json:"-"`
	ActionResultType    ButtonType          `json:"-"`
	ActionResultPayload JSON                `json:"-"`

	// When the database inserted the row and last changed it (migration 00005), stamped
	// by the database for every writer and never written here: the live event feed
	// reads messages in ChangedAt order (changes.go).
	InsertedAt Stamp `json:"-" gorm:"->"`
	ChangedAt  Stamp `json:"-" gorm:"->"`
}

// AfterFind folds the last mark into the call-to-action, so every reader sees one record.
func (m *Message) AfterFind(*gorm.DB) error {
	m.ApplyMark()
	return nil
}

// ApplyMark overlays the mark columns on CTA.
func (m *Message) ApplyMark() {
	if m.ActionStatus == "" && m.ActionResultType == "" && m.ActionResultPayload == nil {
		return
	}
	if m.CTA.Action == nil {
		m.CTA.Action = &CTAAction{}
	}
	if m.ActionStatus != "" {
		m.CTA.Action.Status = m.ActionStatus
	}
	if m.ActionResultType != "" || m.ActionResultPayload != nil {
		if m.CTA.Action.Result == nil {
			m.CTA.Action.Result = &CTAResult{}
		}
		if m.ActionResultType != "" {
			m.CTA.Action.Result.Type = m.ActionResultType
		}
		if m.ActionResultPayload != nil {
			m.CTA.Action.Result.Payload = m.ActionResultPayload
		}
	}
}

// ContentBlock is one element of Message.content.
type ContentBlock struct {
	Type    string         `json:"type"`
	Content string         `json:"content,omitempty"`
	URL     string         `json:"url,omitempty"`
	Styles  *ContentStyles `json:"styles,omitempty"`
}

// ContentStyles holds a content block's presentation hints.
type ContentStyles struct {
	TextAlign string `json:"textAlign,omitempty"`
}

// CTA is a message's call-to-action.
type CTA struct {
	Type   string     `json:"type,omitempty"`
	Data   *CTAData   `json:"data,omitempty"`
	Action *CTAAction `json:"action,omitempty"`
}

// CTAData is where a redirect call-to-action points.
type CTAData struct {
	URL string `json:"url,omitempty"`
}

// CTAAction is the actionable part of a call-to-action: its state, buttons and result.
type CTAAction struct {
	Status  MessageActionStatus `json:"status,omitempty"`
	Buttons []CTAButton         `json:"buttons,omitempty"`
	Result  *CTAResult          `json:"result,omitempty"`
}

// CTAButton is one button a subscriber can press.
type CTAButton struct {
	Type          ButtonType `json:"type"`
	Content       string     `json:"content,omitempty"`
	ResultContent string     `json:"resultContent,omitempty"`
}

// CTAResult records which button was pressed and with what payload.
type CTAResult struct {
	Payload JSON       `json:"payload,omitempty"`
	Type    ButtonType `json:"type,omitempty"`
}

// Normalize fills the arrays the wire always carries, so they never encode as null.
func (m *Message) Normalize() {
	if m.Content == nil {
		m.Content = []ContentBlock{}
	}
}
