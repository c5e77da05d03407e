package service

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"messages/models"
)

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

// scopedSubscriber applies a session's scope to a list's subscriberId: omitted means the
// session's subscriber, another one is forbidden. An API key's lists are not narrowed.
func scopedSubscriber(caller models.Caller, subscriberID *string) (*string, error) {
	if !caller.Scoped() {
		return subscriberID, nil
	}
	if subscriberID != nil && *subscriberID != caller.SubscriberID {
		return nil, models.Errorf(models.EFORBIDDEN, "this session may read only its own subscriber's messages")
	}
	own := caller.SubscriberID
	return &own, nil
}
