package graph

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"messages/models"
)

// parseListArgs validates the arguments of messages, applies the defaults and builds
// the store's filter and page. GraphQL and /v1 both come through here.
func parseListArgs(channel *models.ChannelType, subscriberID *string, transactionIDs []string, page, limit *int) (models.ListFilter, models.Page, error) {
	var f models.ListFilter
	if channel != nil {
		if !channel.Valid() {
			return f, models.Page{}, models.Invalid("channel", string(*channel), "channel must be one of "+channelList())
		}
		f.Channel = channel
	}
	if subscriberID != nil {
		if err := checkText("subscriberId", *subscriberID); err != nil {
			return f, models.Page{}, err
		}
		f.SubscriberID = subscriberID
	}
	if len(transactionIDs) > models.MaxTransactionIDs {
		return f, models.Page{}, models.Invalid("transactionId", len(transactionIDs),
			fmt.Sprintf("transactionId accepts at most %d values, got %d", models.MaxTransactionIDs, len(transactionIDs)))
	}
	for _, id := range transactionIDs {
		if err := checkText("transactionId", id); err != nil {
			return f, models.Page{}, err
		}
	}
	f.TransactionIDs = transactionIDs

	p := models.Page{Number: 0, Size: models.DefaultPageSize}
	if page != nil {
		if *page < 0 || *page > models.MaxPage {
			return f, p, models.Invalid("page", *page, fmt.Sprintf("page must be an integer from 0 to %d", models.MaxPage))
		}
		p.Number = *page
	}
	if limit != nil {
		if *limit < 1 || *limit > models.MaxPageSize {
			return f, p, models.Invalid("limit", *limit, fmt.Sprintf("limit must be an integer from 1 to %d", models.MaxPageSize))
		}
		p.Size = *limit
	}
	return f, p, nil
}

// parseMarkAction validates the arguments of markMessageAction.
func parseMarkAction(subscriberID, messageID string, typ models.ButtonType, status models.MessageActionStatus, payload models.JSON) (models.MarkAction, error) {
	a := models.MarkAction{SubscriberID: subscriberID, MessageID: messageID, Type: typ, Status: status, Payload: payload}
	if err := checkText("subscriberId", subscriberID); err != nil {
		return a, err
	}
	if !typ.Valid() {
		return a, models.Invalid("type", string(typ), "type must be one of primary, secondary")
	}
	if !status.Valid() {
		var value any = string(status)
		if status == "" {
			value = nil
		}
		return a, models.Invalid("status", value, "status must be one of pending, done")
	}
	if len(payload) > models.MaxActionPayloadBytes {
		return a, models.Invalid("payload", nil, fmt.Sprintf("payload must be at most %d KiB", models.MaxActionPayloadBytes>>10))
	}
	if payload != nil && !utf8.Valid(payload) {
		return a, models.Invalid("payload", nil, "payload must be valid UTF-8")
	}
	if payload != nil && !payload.IsObject() {
		return a, models.Invalid("payload", payload, "payload must be an object")
	}
	if payload.Depth() > models.MaxJSONDepth {
		return a, models.Invalid("payload", nil, fmt.Sprintf("payload must not nest deeper than %d levels", models.MaxJSONDepth))
	}
	return a, nil
}

// checkText refuses identifiers no record can have: longer than the column or not UTF-8.
func checkText(field, value string) error {
	if !utf8.ValidString(value) {
		return models.Invalid(field, strings.ToValidUTF8(value, "\uFFFD"), field+" must be valid UTF-8")
	}
	if utf8.RuneCountInString(value) > models.MaxFilterLength {
		return models.Invalid(field, value[:models.MaxFilterLength]+"...",
			fmt.Sprintf("%s must be at most %d characters", field, models.MaxFilterLength))
	}
	return nil
}

func channelList() string {
	names := make([]string, len(models.Channels))
	for i, c := range models.Channels {
		names[i] = string(c)
	}
	return strings.Join(names, ", ")
}
