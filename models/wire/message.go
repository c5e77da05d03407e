package wire

import "messages/models"

// AppendMessage appends m's /v1 form, as encoding/json writes the Message struct (HTML
// characters as stored), with subscriber and template written as given: the encodings
// of m.Subscriber and m.Template, nil where m has none. The error is a stored JSON value
// that is not JSON.
func AppendMessage(dst []byte, m *models.Message, subscriber, template []byte) ([]byte, error) {
	w := wire{b: dst}
	w.str(`"_id":`, m.ID)
	w.strOmit(`"_templateId":`, m.TemplateID)
	w.str(`"_environmentId":`, m.EnvironmentID)
	w.strOmit(`"_messageTemplateId":`, m.MessageTemplateID)
	w.str(`"_organizationId":`, m.OrganizationID)
	w.str(`"_notificationId":`, m.NotificationID)
	w.str(`"_subscriberId":`, m.SubscriberID)
	if subscriber != nil {
		w.key(`"subscriber":`)
		w.b = append(w.b, subscriber...)
	}
	if template != nil {
		w.key(`"template":`)
		w.b = append(w.b, template...)
	}
	w.strOmit(`"templateIdentifier":`, m.TemplateIdentifier)
	w.timestamp(`"createdAt":`, m.CreatedAt)
	if len(m.DeliveredAt) > 0 {
		w.key(`"deliveredAt":`)
		w.b = appendList(w.b, m.DeliveredAt, appendTime)
	}
	w.timeOmit(`"lastSeenDate":`, m.LastSeenDate)
	w.timeOmit(`"lastReadDate":`, m.LastReadDate)
	w.timeOmit(`"firstSeenDate":`, m.FirstSeenDate)
	w.key(`"content":`)
	w.b = appendList(w.b, m.Content, appendBlock)
	w.str(`"transactionId":`, m.TransactionID)
	w.strOmit(`"subject":`, m.Subject)
	w.str(`"channel":`, string(m.Channel))
	w.boolean(`"read":`, m.Read)
	w.boolean(`"seen":`, m.Seen)
	if m.Archived {
		w.boolean(`"archived":`, m.Archived)
	}
	w.timeOmit(`"archivedAt":`, m.ArchivedAt)
	w.timeOmit(`"snoozedUntil":`, m.SnoozedUntil)
	w.strOmit(`"email":`, m.Email)
	w.strOmit(`"phone":`, m.Phone)
	w.strOmit(`"directWebhookUrl":`, m.DirectWebhookURL)
	w.strOmit(`"providerId":`, m.ProviderID)
	if len(m.DeviceTokens) > 0 {
		w.strings(`"deviceTokens":`, m.DeviceTokens)
	}
	w.strOmit(`"title":`, m.Title)
	w.key(`"cta":`)
	w.b, w.err = appendCTA(w.b, m.CTA, w.err)
	w.strOmit(`"_feedId":`, m.FeedID)
	w.str(`"status":`, m.Status)
	w.strOmit(`"errorId":`, m.ErrorID)
	w.strOmit(`"errorText":`, m.ErrorText)
	w.rawOmit(`"payload":`, m.Payload)
	w.rawOmit(`"overrides":`, m.Overrides)
	return w.end(), w.err
}
