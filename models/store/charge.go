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
			if wire, err := m.Template.WireJSON(); err == nil {
				n += len(wire)
			}
		}
		if err := b.Charge(n); err != nil {
			return err
		}
	}
	return nil
}
