package service

import (
	"context"
	"encoding/binary"
	"errors"
	"time"

	"messages/models"
	"messages/models/changefeed"
)

// EventsQuery is a stream of changes to the caller's messages as GraphQL's messageEvents
// asks for it.
type EventsQuery struct {
	SubscriberID *string
	Channel      *models.ChannelType
	// After is the cursor of the last event a client received: the stream first delivers
	// what changed since, then continues live.
	After *string
	// Ready, when set, is called without blocking each time events are queued, for a
	// client that takes them as they come instead of waiting on the stream
	// (changefeed.Feed.SubscribeReady says what it may do).
	Ready func()
}

// Events opens a stream of the changes to the caller's messages; it ends when ctx does.
func (s *Service) Events(ctx context.Context, q EventsQuery) (*changefeed.Subscription, error) {
	caller, err := models.CallerFrom(ctx)
	if err != nil {
		return nil, err
	}
	if s.feed == nil {
		return nil, models.Errorf(models.EUNAVAILABLE, "live events are not served by this server")
	}
	if q.SubscriberID, err = scopedSubscriber(caller, q.SubscriberID); err != nil {
		return nil, err
	}
	list, err := listFilter(q.Channel, q.SubscriberID, nil)
	if err != nil {
		return nil, err
	}
	filter := models.ChangeFilter{EnvironmentID: caller.EnvironmentID, SubscriberID: list.SubscriberID, Channel: list.Channel}
	var from *changefeed.Resume
	if q.After != nil {
		if from, err = s.cursors.events(filter).decode(*q.After, s.now(), s.retention); err != nil {
			return nil, err
		}
	}
	sub := s.feed.SubscribeReady(ctx, filter, from, q.Ready)
	context.AfterFunc(ctx, sub.Close)
	return sub, nil
}

// EventCursor is the cursor a client that saw e resumes from; "" for the last event of a
// stream the server ended.
func (s *Service) EventCursor(e *changefeed.Event) string {
	if e.Err != nil {
		return ""
	}
	return s.cursors.events(e.Filter()).encode(e.Resume)
}

// An event cursor's payload is
//
//	version (1) | complete (1) | position's changed_at in Unix microseconds (8, big-endian) |
//	floor in Unix microseconds (8, big-endian) | floor's id (uvarint length, bytes) |
//	position's id (uvarint length, bytes) | recent count (uvarint) |
//	per recent change: changed_at minus the position's, in microseconds (zigzag varint), id
const (
	eventCursorVersion = 1
	eventCursorLabel   = "messages.messageEvents.cursor"
	// maxEventCursorLength bounds the text decoded: 16 recent changes with 24-character
	// ids make about 750 characters.
	maxEventCursorLength = 2048
	// maxRecent bounds the recent changes a cursor may carry.
	maxRecent = 64
)

// eventCursors signs and verifies the cursors of one subscription's filters.
type eventCursors struct{ signer }

func (k cursorKey) events(f models.ChangeFilter) eventCursors {
	return eventCursors{k.signer(eventCursorLabel, f.EnvironmentID, models.ListFilter{Channel: f.Channel, SubscriberID: f.SubscriberID})}
}

func (c eventCursors) encode(r changefeed.Resume) string {
	b := []byte{eventCursorVersion, 0}
	if r.Complete {
		b[1] = 1
	}
	at := r.Position.At.UnixMicro()
	b = binary.BigEndian.AppendUint64(b, uint64(at))
	b = binary.BigEndian.AppendUint64(b, uint64(r.Floor.At.UnixMicro()))
	b = appendString(b, r.Floor.ID)
	b = appendString(b, r.Position.ID)
	b = binary.AppendUvarint(b, uint64(len(r.Recent)))
	for _, k := range r.Recent {
		b = binary.AppendVarint(b, k.At.UnixMicro()-at)
		b = appendString(b, k.ID)
	}
	return c.seal(b)
}

// badEventCursor is the one answer for any cursor that does not verify.
func badEventCursor() error {
	return models.Invalid("after", nil, "after must be the cursor of an event of messageEvents with the same filters")
}

// decode verifies a cursor and returns where it resumes; a cursor older than retention
// (by now) is refused as expired.
func (c eventCursors) decode(cursor string, now time.Time, retention time.Duration) (*changefeed.Resume, error) {
	payload, ok := c.open(cursor, 2+8+8+1+1+1, maxEventCursorLength)
	if !ok || payload[0] != eventCursorVersion {
		return nil, badEventCursor()
	}
	d := cursorReader{b: payload[18:]}
	at := int64(binary.BigEndian.Uint64(payload[2:10]))
	floor := int64(binary.BigEndian.Uint64(payload[10:18]))
	r := &changefeed.Resume{Complete: payload[1] == 1}
	r.Floor = models.Position{At: time.UnixMicro(floor).UTC(), ID: d.string()}
	r.Position = models.Position{At: time.UnixMicro(at).UTC(), ID: d.string()}
	n := d.uvarint()
	if n > maxRecent {
		return nil, badEventCursor()
	}
	for range n {
		delta := d.varint()
		r.Recent = append(r.Recent, models.ChangeKey{At: time.UnixMicro(at + delta).UTC(), ID: d.string()})
	}
	if d.err != nil || len(d.b) != 0 {
		return nil, badEventCursor()
	}
	if now.Sub(r.Position.At) > retention {
		return nil, &models.Error{Code: models.ECURSOREXPIRED,
			Message: "after is older than the retention window of " + retention.String() + ": load the list again and subscribe without after",
			Fields:  map[string]models.FieldError{"after": {Messages: []string{"the cursor is older than " + retention.String()}}}}
	}
	return r, nil
}

// cursorReader reads the varint-framed parts of a verified cursor.
type cursorReader struct {
	b   []byte
	err error
}

var errShortCursor = errors.New("short cursor")

func (d *cursorReader) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = errShortCursor
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *cursorReader) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.err = errShortCursor
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *cursorReader) string() string {
	n := d.uvarint()
	if d.err != nil || n > uint64(len(d.b)) {
		d.err = errShortCursor
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}
