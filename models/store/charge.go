package store

import "messages/models"

// messageFixedBytes is what a message holds besides its text and JSON: ids, times,
// flags, and the keys and punctuation of its encoding.
const messageFixedBytes = 768

// messageBytes is about what m holds in memory and takes to encode: its text and JSON, and
// a fixed part for the rest. It is what a read charges a request's budget per message.
func messageBytes(m *models.Message) int {
	n := messageFixedBytes + len(m.TransactionID) + len(m.Subject) + len(m.Email) + len(m.Phone) +
		len(m.DirectWebhookURL) + len(m.ProviderID) + len(m.Title) + len(m.FeedID) + len(m.Status) +
		len(m.ErrorID) + len(m.ErrorText) + len(m.TemplateIdentifier) + len(m.Payload) + len(m.Overrides) +
		len(m.ActionResultPayload) + 32*len(m.DeliveredAt)
	for _, c := range m.Content {
		n += 48 + len(c.Type) + len(c.Content) + len(c.URL)
	}
	for _, t := range m.DeviceTokens {
		n += 4 + len(t)
	}
	if m.CTA.Data != nil {
		n += len(m.CTA.Data.URL)
	}
	if a := m.CTA.Action; a != nil {
		for _, b := range a.Buttons {
			n += 48 + len(b.Content) + len(b.ResultContent)
		}
		if a.Result != nil {
			n += len(a.Result.Payload)
		}
	}
	return n
}

// subscriberBytes is about what s takes to encode once more, embedded in a message.
func subscriberBytes(s *models.Subscriber) int {
	n := 512 + len(s.FirstName) + len(s.LastName) + len(s.Email) + len(s.Phone) + len(s.Avatar) + len(s.Locale) +
		len(s.Data) + len(s.Timezone) + len(s.SubscriberID)
	for _, t := range s.Topics {
		n += 4 + len(t)
	}
	for _, c := range s.Channels {
		n += 96 + len(c.ProviderID) + len(c.IntegrationIdentifier) + len(c.IntegrationID)
		if cr := c.Credentials; cr != nil {
			n += len(cr.WebhookURL) + len(cr.Channel) + len(cr.AlertUID) + len(cr.Title)
			for _, t := range cr.DeviceTokens {
				n += 4 + len(t)
			}
		}
	}
	return n
}

// templateBytes is about what t takes to encode once more, embedded in a message: its
// text and JSON, and a fixed part for each record's keys and punctuation.
func templateBytes(t *models.Template) int {
	n := 640 + len(t.ID) + len(t.Name) + len(t.Description) + len(t.OrganizationID) + len(t.CreatorID) +
		len(t.EnvironmentID) + len(t.NotificationGroupID) + len(t.ParentID) + len(t.DeletedBy) +
		len(t.Data) + len(t.WorkflowIntegrationStatus)
	for _, tag := range t.Tags {
		n += 4 + len(tag)
	}
	for _, s := range t.Steps {
		n += stepBytes(s.ID, s.UUID, s.Name, s.TemplateID, s.ParentID, s.Template, s.Filters)
		for _, v := range s.Variants {
			n += stepBytes(v.ID, v.UUID, v.Name, v.TemplateID, v.ParentID, v.Template, v.Filters)
		}
	}
	for _, tr := range t.Triggers {
		n += 96 + len(tr.Type) + len(tr.Identifier)
		for _, v := range tr.Variables {
			n += 16 + len(v.Name)
		}
		for _, v := range tr.SubscriberVariables {
			n += 16 + len(v.Name)
		}
	}
	if g := t.NotificationGroup; g != nil {
		n += 128 + len(g.ID) + len(g.Name) + len(g.EnvironmentID) + len(g.OrganizationID) + len(g.ParentID)
	}
	return n
}

// stepBytes is about what one step or variant of a template takes to encode.
func stepBytes(id, uuid, name, templateID, parentID string, template models.JSON, filters []models.StepFilter) int {
	n := 384 + len(id) + len(uuid) + len(name) + len(templateID) + len(parentID) + len(template)
	for _, f := range filters {
		n += 64 + len(f.Type) + len(f.Value)
		for _, c := range f.Children {
			n += 64 + len(c.Field) + len(c.Value) + len(c.Operator) + len(c.On)
		}
	}
	return n
}

// chargeMessages charges b what msgs hold and take to encode, for a read that did not
// charge its rows as it scanned them.
func chargeMessages(b *models.Budget, msgs []*models.Message) error {
	if b == nil {
		return nil
	}
	for _, m := range msgs {
		if err := b.Charge(messageBytes(m)); err != nil {
			return err
		}
	}
	return chargeEmbedded(b, msgs)
}

// chargeEmbedded charges b the embedded subscribers and templates of msgs: each is read
// once but written once per message that embeds it.
func chargeEmbedded(b *models.Budget, msgs []*models.Message) error {
	if b == nil {
		return nil
	}
	for _, m := range msgs {
		n := 0
		if m.Subscriber != nil {
			n += subscriberBytes(m.Subscriber)
		}
		if m.Template != nil {
			n += templateBytes(m.Template)
		}
		if err := b.Charge(n); err != nil {
			return err
		}
	}
	return nil
}
