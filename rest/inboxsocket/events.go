package inboxsocket

import (
	"bytes"
	"encoding/json"
	"strconv"

	"messages/models"
)

// The socket's messages, as the client's PartySocketClient parses them: a JSON object
// {"event", "data"} per text message.
//
//	notification_received  data.message: the message, which the client maps to a
//	                       notification (mapToNotification)
//	unread_count_changed   data.counts: {"total", "severity": {"high", "medium", "low",
//	                       "none"}}, the badge, set as given
//	unseen_count_changed   data.unseenCount: a number
//
// The client answers nothing and ignores "pong", which the server sends for each "ping".

// pong answers the client's "ping".
var pong = []byte("pong")

// unreadCountChanged is the badge's count: messages not read, archived or snoozed.
func unreadCountChanged(total int) []byte {
	b := []byte(`{"event":"unread_count_changed","data":{"counts":{"total":`)
	b = strconv.AppendInt(b, int64(total), 10)
	b = append(b, `,"severity":{`...)
	for i, s := range models.Severities {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, s...)
		b = append(b, `":`...)
		n := 0
		if s == models.SeverityNone {
			n = total
		}
		b = strconv.AppendInt(b, int64(n), 10)
	}
	return append(b, "}}}}"...)
}

// unseenCountChanged is the count of messages not seen, archived or snoozed.
func unseenCountChanged(total int) []byte {
	b := []byte(`{"event":"unseen_count_changed","data":{"unseenCount":`)
	b = strconv.AppendInt(b, int64(total), 10)
	return append(b, "}}"...)
}

// socketMessage is a message as notification_received carries it: its /v1 form (every
// field, cta included), with content as the in-app body the client shows (the client
// maps content to the notification's body, which it renders as text: the /v1 array of
// blocks would show as "[object Object]"), and the fields of the platform's message the
// client copies that the /v1 form does not have. Body, tags, workflow and severity are
// the inbox API's (models.NewInboxNotification), so the socket and the list agree.
type socketMessage struct {
	*models.Message
	Content  string                `json:"content"`
	Tags     []string              `json:"tags"`
	Workflow *models.InboxWorkflow `json:"workflow,omitempty"`
	Severity string                `json:"severity"`
}

// notificationReceived announces m, a message new to the subscriber's inbox.
func notificationReceived(m *models.Message) ([]byte, error) {
	n := models.NewInboxNotification(m)
	sm := socketMessage{Message: m, Content: n.Body, Tags: n.Tags, Workflow: n.Workflow, Severity: n.Severity}
	var b bytes.Buffer
	b.WriteString(`{"event":"notification_received","data":{"message":`)
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(sm); err != nil {
		return nil, err
	}
	b.Truncate(b.Len() - 1) // Encode's newline
	b.WriteString("}}")
	return b.Bytes(), nil
}
