package bench

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"messages/models"
)

// floorMessage is the REST Message record as the floor encodes it: the same field names,
// order and omissions, with the JSON text columns passed through undecoded.
type floorMessage struct {
	ID                 string           `json:"_id"`
	TemplateID         string           `json:"_templateId,omitempty"`
	EnvironmentID      string           `json:"_environmentId"`
	MessageTemplateID  string           `json:"_messageTemplateId,omitempty"`
	OrganizationID     string           `json:"_organizationId"`
	NotificationID     string           `json:"_notificationId"`
	SubscriberID       string           `json:"_subscriberId"`
	Subscriber         *floorSubscriber `json:"subscriber,omitempty"`
	Template           *floorTemplate   `json:"template,omitempty"`
	TemplateIdentifier string           `json:"templateIdentifier,omitempty"`
	CreatedAt          models.Time      `json:"createdAt"`
	DeliveredAt        json.RawMessage  `json:"deliveredAt,omitempty"`
	LastSeenDate       *models.Time     `json:"lastSeenDate,omitempty"`
	LastReadDate       *models.Time     `json:"lastReadDate,omitempty"`
	Content            json.RawMessage  `json:"content"`
	TransactionID      string           `json:"transactionId"`
	Subject            string           `json:"subject,omitempty"`
	Channel            string           `json:"channel"`
	Read               bool             `json:"read"`
	Seen               bool             `json:"seen"`
	SnoozedUntil       *models.Time     `json:"snoozedUntil,omitempty"`
	Email              string           `json:"email,omitempty"`
	Phone              string           `json:"phone,omitempty"`
	DirectWebhookURL   string           `json:"directWebhookUrl,omitempty"`
	ProviderID         string           `json:"providerId,omitempty"`
	DeviceTokens       json.RawMessage  `json:"deviceTokens,omitempty"`
	Title              string           `json:"title,omitempty"`
	CTA                json.RawMessage  `json:"cta"`
	FeedID             string           `json:"_feedId,omitempty"`
	Status             string           `json:"status"`
	ErrorID            string           `json:"errorId,omitempty"`
	ErrorText          string           `json:"errorText,omitempty"`
	Payload            json.RawMessage  `json:"payload,omitempty"`
	Overrides          json.RawMessage  `json:"overrides,omitempty"`
}

const messageColumns = "id, template_id, environment_id, message_template_id, organization_id, notification_id, " +
	"subscriber_id, template_identifier, created_at, delivered_at, last_seen_date, last_read_date, content, " +
	"transaction_id, subject, channel, `read`, seen, snoozed_until, email, phone, direct_webhook_url, provider_id, " +
	"device_tokens, title, cta, feed_id, status, error_id, error_text, payload, overrides, " +
	"action_status, action_result_type, action_result_payload"

func (f *rawFloor) messages(ctx context.Context, query string, args ...any) ([]*floorMessage, error) {
	rows, err := f.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*floorMessage
	for rows.Next() {
		m := &floorMessage{}
		var deliveredAt, content, deviceTokens, cta, payload, overrides, markPayload []byte
		var markStatus, markType string
		if err := rows.Scan(&m.ID, &m.TemplateID, &m.EnvironmentID, &m.MessageTemplateID, &m.OrganizationID, &m.NotificationID,
			&m.SubscriberID, &m.TemplateIdentifier, &m.CreatedAt, &deliveredAt, &m.LastSeenDate, &m.LastReadDate, &content,
			&m.TransactionID, &m.Subject, &m.Channel, &m.Read, &m.Seen, &m.SnoozedUntil, &m.Email, &m.Phone, &m.DirectWebhookURL, &m.ProviderID,
			&deviceTokens, &m.Title, &cta, &m.FeedID, &m.Status, &m.ErrorID, &m.ErrorText, &payload, &overrides,
			&markStatus, &markType, &markPayload); err != nil {
			return nil, err
		}
		m.DeliveredAt, m.Content, m.DeviceTokens = rawJSON(deliveredAt), rawArray(content), rawJSON(deviceTokens)
		m.CTA, m.Payload, m.Overrides = rawJSON(cta), rawJSON(payload), rawJSON(overrides)
		if m.CTA == nil {
			m.CTA = json.RawMessage("{}")
		}
		if markStatus != "" || markType != "" || markPayload != nil {
			if m.CTA, err = foldMark(m.CTA, markStatus, markType, rawJSON(markPayload)); err != nil {
				return nil, err
			}
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// floorSubscriber is the REST Subscriber record.
type floorSubscriber struct {
	ID             string          `json:"_id"`
	FirstName      string          `json:"firstName,omitempty"`
	LastName       string          `json:"lastName,omitempty"`
	Email          string          `json:"email,omitempty"`
	Phone          string          `json:"phone,omitempty"`
	Avatar         string          `json:"avatar,omitempty"`
	Locale         string          `json:"locale,omitempty"`
	Channels       []floorChannel  `json:"channels,omitempty"`
	Topics         json.RawMessage `json:"topics,omitempty"`
	IsOnline       *bool           `json:"isOnline,omitempty"`
	LastOnlineAt   *models.Time    `json:"lastOnlineAt,omitempty"`
	Version        int             `json:"__v"`
	Data           json.RawMessage `json:"data,omitempty"`
	Timezone       string          `json:"timezone,omitempty"`
	SubscriberID   string          `json:"subscriberId"`
	OrganizationID string          `json:"_organizationId"`
	EnvironmentID  string          `json:"_environmentId"`
	Deleted        bool            `json:"deleted"`
	CreatedAt      models.Time     `json:"createdAt"`
	UpdatedAt      models.Time     `json:"updatedAt"`
}

func (f *rawFloor) subscribers(ctx context.Context, ids []any) (map[string]*floorSubscriber, error) {
	out := make(map[string]*floorSubscriber, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := f.db.QueryContext(ctx, "SELECT id, first_name, last_name, email, phone, avatar, locale, channels, topics, "+
		"is_online, last_online_at, v, data, timezone, subscriber_id, organization_id, environment_id, deleted, created_at, updated_at "+
		"FROM subscribers WHERE environment_id = ? AND id IN ("+placeholders(len(ids))+")", append([]any{f.environmentID}, ids...)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		s := &floorSubscriber{}
		var channels, topics, data []byte
		var online sql.NullBool
		if err := rows.Scan(&s.ID, &s.FirstName, &s.LastName, &s.Email, &s.Phone, &s.Avatar, &s.Locale, &channels, &topics,
			&online, &s.LastOnlineAt, &s.Version, &data, &s.Timezone, &s.SubscriberID, &s.OrganizationID, &s.EnvironmentID,
			&s.Deleted, &s.CreatedAt, &s.UpdatedAt); err != nil {
			return nil, err
		}
		if len(rawJSON(channels)) > 0 {
			if err := json.Unmarshal(channels, &s.Channels); err != nil {
				return nil, fmt.Errorf("channels: %w", err)
			}
			for i := range s.Channels {
				if s.Channels[i].Credentials == nil { // as the server writes it
					s.Channels[i].Credentials = json.RawMessage("{}")
				}
			}
		}
		s.Topics, s.Data = rawJSON(topics), rawJSON(data)
		if online.Valid {
			s.IsOnline = &online.Bool
		}
		out[s.ID] = s
	}
	return out, rows.Err()
}

// floorChannel is a subscriber's channel entry as the server writes it: _integrationId
// and credentials always there.
type floorChannel struct {
	ProviderID            string          `json:"providerId"`
	IntegrationIdentifier string          `json:"integrationIdentifier,omitempty"`
	IntegrationID         string          `json:"_integrationId"`
	Credentials           json.RawMessage `json:"credentials"`
}

// floorTemplate is the REST Template record.
type floorTemplate struct {
	ID                        string          `json:"_id"`
	Name                      string          `json:"name"`
	Description               string          `json:"description"`
	Active                    bool            `json:"active"`
	Draft                     bool            `json:"draft"`
	PreferenceSettings        json.RawMessage `json:"preferenceSettings"`
	Critical                  bool            `json:"critical"`
	Tags                      json.RawMessage `json:"tags"`
	Steps                     json.RawMessage `json:"steps"`
	OrganizationID            string          `json:"_organizationId"`
	CreatorID                 string          `json:"_creatorId"`
	EnvironmentID             string          `json:"_environmentId"`
	Triggers                  json.RawMessage `json:"triggers"`
	NotificationGroupID       string          `json:"_notificationGroupId"`
	ParentID                  string          `json:"_parentId,omitempty"`
	Deleted                   bool            `json:"deleted"`
	DeletedAt                 string          `json:"deletedAt"`
	DeletedBy                 string          `json:"deletedBy"`
	NotificationGroup         json.RawMessage `json:"notificationGroup,omitempty"`
	Data                      json.RawMessage `json:"data,omitempty"`
	WorkflowIntegrationStatus json.RawMessage `json:"workflowIntegrationStatus,omitempty"`
}

func (f *rawFloor) templates(ctx context.Context, ids []any) (map[string]*floorTemplate, error) {
	out := make(map[string]*floorTemplate, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := f.db.QueryContext(ctx, "SELECT id, name, description, active, draft, preference_settings, critical, tags, steps, "+
		"organization_id, creator_id, environment_id, triggers, notification_group_id, parent_id, deleted, deleted_at, deleted_by, "+
		"notification_group, data, workflow_integration_status "+
		"FROM templates WHERE environment_id = ? AND id IN ("+placeholders(len(ids))+")", append([]any{f.environmentID}, ids...)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		t := &floorTemplate{}
		var prefs, tags, steps, triggers, group, data, status []byte
		var deletedAt sql.NullString
		if err := rows.Scan(&t.ID, &t.Name, &t.Description, &t.Active, &t.Draft, &prefs, &t.Critical, &tags, &steps,
			&t.OrganizationID, &t.CreatorID, &t.EnvironmentID, &triggers, &t.NotificationGroupID, &t.ParentID, &t.Deleted,
			&deletedAt, &t.DeletedBy, &group, &data, &status); err != nil {
			return nil, err
		}
		// As the server writes them: "" and {} when the template has none.
		t.DeletedAt = deletedAt.String
		if t.PreferenceSettings = rawJSON(prefs); t.PreferenceSettings == nil {
			t.PreferenceSettings = json.RawMessage("{}")
		}
		t.Tags, t.Steps, t.Triggers = rawArray(tags), rawArray(steps), rawArray(triggers)
		t.NotificationGroup, t.Data, t.WorkflowIntegrationStatus = rawJSON(group), rawJSON(data), rawJSON(status)
		out[t.ID] = t
	}
	return out, rows.Err()
}

// foldMark overlays a message's last mark (its action_* columns) on its cta document, as
// the server does on every read; only marked messages pay for it.
func foldMark(cta json.RawMessage, status, typ string, payload json.RawMessage) (json.RawMessage, error) {
	var c models.CTA
	if err := json.Unmarshal(cta, &c); err != nil {
		return nil, fmt.Errorf("cta: %w", err)
	}
	if c.Action == nil {
		c.Action = &models.CTAAction{}
	}
	if status != "" {
		c.Action.Status = models.MessageActionStatus(status)
	}
	if typ != "" || payload != nil {
		if c.Action.Result == nil {
			c.Action.Result = &models.CTAResult{}
		}
		if typ != "" {
			c.Action.Result.Type = models.ButtonType(typ)
		}
		if payload != nil {
			c.Action.Result.Payload = models.JSON(payload)
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // as the server writes it: "<" stays "<"
	if err := enc.Encode(c); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
