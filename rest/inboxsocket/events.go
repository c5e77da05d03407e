package inboxsocket

import (
	"bytes"
	"encoding/json"
	"strconv"

	"messages/models"
	"messages/models/wire"
)

// The socket's messages, as the client's PartySocketClient parses them: a JSON object
// {"event", "data"} per text message.
//
//	notification_received  data.message: the message, which the client maps to a
//	                       notification (mapToNotification)
//	unread_count_changed   data.counts: {"total", "severity": {"high", "medium", "low",
//	                       "none"}}, the badge, set as given; sent when any of them
//	                       changes
//	unseen_count_changed   data.unseenCount: a number
//
// The client answers nothing and ignores "pong", which the server sends for each "ping".

// pong answers the client's "ping".
var pong = []byte("pong")

// followCounts follows the subscriber's in-app counts, which every socket and GraphQL
// stream of the same subscriber shares (one read per change, service.FollowCounts), and
// takes the first as what the client starts from. Each new read calls s.ready, and the
// goroutine taking events sends the counts it changed (sendCounts).
func (s *socket) followCounts() error {
	f, err := s.h.service.FollowCounts(s.ctx, nil, &inApp, s.ready)
	if err != nil {
		return err
	}
	u, _ := f.Next()
	s.counts, s.unread, s.unseen = f, u.States.UnreadCounts(), u.States.Count(models.Unseen())
	return nil
}

// sendCounts sends the counts that changed since the client was told, when a new read
// of them waits. It reports false once the socket is over.
func (s *socket) sendCounts() bool {
	u, ok := s.counts.Next()
	// The change these counts were read after is queued on the socket's own stream by
	// now (the watch reads once the feed has offered it to every subscription): its
	// notification goes first, as the client would see it from one stream.
	if ok && !s.takeEvents() {
		return false
	}
	switch {
	case !ok:
		return !s.closing.Load()
	case u.End != nil:
		s.end(u.End)
		return false
	case u.Err != nil:
		// The badge stays as it was until the next read, and then both are sent
		// whatever they are.
		s.h.logger.Warn("inbox socket: the counts could not be read", "error", u.Err)
		s.unread, s.unseen = models.UnreadCounts{Total: -1}, -1
		return true
	}
	if n := u.States.UnreadCounts(); n != s.unread {
		s.unread = n
		if !s.send(unreadCountChanged(n)) {
			return false
		}
	}
	if n := u.States.Count(models.Unseen()); n != s.unseen {
		s.unseen = n
		if !s.send(unseenCountChanged(n)) {
			return false
		}
	}
	return true
}

// unreadCountChanged is the badge's count: messages not read, archived or snoozed, in
// all and by severity.
func unreadCountChanged(c models.UnreadCounts) []byte {
	b := []byte(`{"event":"unread_count_changed","data":{"counts":{"total":`)
	b = strconv.AppendInt(b, int64(c.Total), 10)
	b = append(b, `,"severity":{`...)
	for i, s := range models.Severities {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, s...)
		b = append(b, `":`...)
		b = strconv.AppendInt(b, int64(c.BySeverity[i]), 10)
	}
	return append(b, "}}}}"...)
}

// unseenCountChanged is the count of messages not seen, archived or snoozed.
func unseenCountChanged(total int) []byte {
	b := []byte(`{"event":"unseen_count_changed","data":{"unseenCount":`)
	b = strconv.AppendInt(b, int64(total), 10)
	return append(b, "}}"...)
}

// notificationReceived announces m, a message new to the subscriber's inbox: its /v1
// form (every field, cta included, models/wire), with content as the in-app body the
// client shows (the client maps content to the notification's body, which it renders as
// text: the /v1 array of blocks would show as "[object Object]"), and after it the
// fields of the platform's message the client copies that the /v1 form does not have.
// Body, tags, workflow and severity are the inbox API's (models.NewInboxNotification),
// so the socket and the list agree.
func notificationReceived(m *models.Message) ([]byte, error) {
	var subscriber, template []byte
	var err error
	if m.Subscriber != nil {
		if subscriber, err = wire.Subscriber(m.Subscriber); err != nil {
			return nil, err
		}
	}
	if m.Template != nil {
		if template, err = wire.Template(m.Template); err != nil {
			return nil, err
		}
	}
	b := []byte(`{"event":"notification_received","data":{"message":`)
	if b, err = wire.AppendMessageMembers(b, m, subscriber, template, "content"); err != nil {
		return nil, err
	}
	n := models.NewInboxNotification(m)
	var more bytes.Buffer
	enc := json.NewEncoder(&more)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(socketFields{Content: n.Body, Tags: n.Tags, Workflow: n.Workflow, Severity: n.Severity}); err != nil {
		return nil, err
	}
	// Its members after the message's own (the message always has _id), and its "}"
	// closing the message; Encode's newline dropped.
	b = append(b, ',')
	b = append(b, bytes.TrimSuffix(more.Bytes(), []byte("\n"))[1:]...)
	return append(b, "}}"...), nil
}

// socketFields are the members notification_received's message has beyond the /v1 form.
type socketFields struct {
	Content  string                `json:"content"`
	Tags     []string              `json:"tags"`
	Workflow *models.InboxWorkflow `json:"workflow,omitempty"`
	Severity models.Severity       `json:"severity"`
}
