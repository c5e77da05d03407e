package inboxsocket

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

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

// severities are the client's severity levels; messages carry none, so every count is
// the "none" level's.
var severities = []string{"high", "medium", "low", "none"}

// pong answers the client's "ping".
var pong = []byte("pong")

// unreadCountChanged is the badge's count: messages not read, archived or snoozed.
func unreadCountChanged(total int) []byte {
	b := []byte(`{"event":"unread_count_changed","data":{"counts":{"total":`)
	b = strconv.AppendInt(b, int64(total), 10)
	b = append(b, `,"severity":{`...)
	for i, s := range severities {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, s...)
		b = append(b, `":`...)
		n := 0
		if s == "none" {
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
// client copies that the /v1 form does not have.
type socketMessage struct {
	*models.Message
	Content  string         `json:"content"`
	Tags     []string       `json:"tags"`
	Workflow *inboxWorkflow `json:"workflow,omitempty"`
	Severity string         `json:"severity"`
}

// inboxWorkflow is the template a message came from, as the client's Workflow.
type inboxWorkflow struct {
	ID         string   `json:"id"`
	Identifier string   `json:"identifier"`
	Name       string   `json:"name"`
	Critical   bool     `json:"critical"`
	Tags       []string `json:"tags"`
	Severity   string   `json:"severity"`
}

// notificationReceived announces m, a message new to the subscriber's inbox.
func notificationReceived(m *models.Message) ([]byte, error) {
	sm := socketMessage{Message: m, Content: body(m), Tags: []string{}, Severity: "none"}
	if t := m.Template; t != nil {
		w := &inboxWorkflow{ID: t.ID, Identifier: m.TemplateIdentifier, Name: t.Name, Critical: t.Critical, Tags: t.Tags, Severity: "none"}
		if len(t.Triggers) > 0 && t.Triggers[0].Identifier != "" {
			w.Identifier = t.Triggers[0].Identifier
		}
		if w.Identifier == "" {
			w.Identifier = t.ID
		}
		if w.Tags == nil {
			w.Tags = []string{}
		}
		sm.Workflow, sm.Tags = w, w.Tags
	}
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

// body is the text of m's content blocks, one per line; its title when it has none.
func body(m *models.Message) string {
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
