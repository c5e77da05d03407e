package graph

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"time"

	"github.com/vektah/gqlparser/v2/gqlerror"

	"messages/models"
	"messages/models/changefeed"
)

// DefaultEventRetention is how old a messageEvents cursor may be by default. Resuming
// reads the changes from the messages table itself, so the window bounds the work of
// one resumption, not what is kept.
const DefaultEventRetention = 7 * 24 * time.Hour

func (r *Resolver) eventRetention() time.Duration {
	if r.EventRetention > 0 {
		return r.EventRetention
	}
	return DefaultEventRetention
}

// An event cursor is base64url (unpadded) of
//
//	version (1) | complete (1) | position's changed_at in Unix microseconds (8, big-endian) |
//	floor in Unix microseconds (8, big-endian) | floor's id (uvarint length, bytes) |
//	position's id (uvarint length, bytes) | recent count (uvarint) |
//	per recent change: changed_at minus the position's, in microseconds (zigzag varint), id |
//	tag (32)
//
// where tag is HMAC-SHA256 under the cursor secret of eventCursorLabel, the environment,
// the filters and everything before it: a cursor resumes only the stream it came from,
// and cannot be forged or edited.
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
type eventCursors struct {
	secret []byte
	bound  []byte
}

func (r *Resolver) eventCursors(f models.ChangeFilter) eventCursors {
	b := appendString(nil, eventCursorLabel)
	b = appendString(b, f.EnvironmentID)
	b = appendFilter(b, models.ListFilter{Channel: f.Channel, SubscriberID: f.SubscriberID})
	return eventCursors{secret: r.cursorSecret(), bound: b}
}

func (c eventCursors) tag(payload []byte) []byte {
	mac := hmac.New(sha256.New, c.secret)
	mac.Write(c.bound)
	mac.Write(payload)
	return mac.Sum(nil)
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
	return base64.RawURLEncoding.EncodeToString(append(b, c.tag(b)...))
}

// badEventCursor is the one answer for any cursor that does not verify.
func badEventCursor() error {
	return models.Invalid("after", nil, "after must be the cursor of an event of messageEvents with the same filters")
}

// decode verifies a cursor and returns where it resumes; a cursor older than retention
// (by now) is refused with CURSOR_EXPIRED.
func (c eventCursors) decode(cursor string, now time.Time, retention time.Duration) (*changefeed.Resume, error) {
	if len(cursor) > maxEventCursorLength {
		return nil, badEventCursor()
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(cursor)
	if err != nil || len(raw) < 2+8+8+1+1+1+sha256.Size || raw[0] != eventCursorVersion {
		return nil, badEventCursor()
	}
	payload, tag := raw[:len(raw)-sha256.Size], raw[len(raw)-sha256.Size:]
	if !hmac.Equal(tag, c.tag(payload)) {
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
		return nil, &gqlerror.Error{
			Message:    "after is older than the retention window of " + retention.String() + ": load the list again and subscribe without after",
			Extensions: map[string]any{"code": "CURSOR_EXPIRED", "field": "after"},
		}
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

// streamEnded is the error of the last event of a stream the server closed: the client
// fell behind, or the catch-up could not read the database.
func streamEnded(err error) error {
	if errors.Is(err, changefeed.ErrSlowConsumer) {
		return &gqlerror.Error{Message: err.Error(), Extensions: map[string]any{"code": "SLOW_CONSUMER"}}
	}
	if errors.Is(err, changefeed.ErrShuttingDown) {
		return &gqlerror.Error{Message: err.Error(), Extensions: map[string]any{"code": "SHUTTING_DOWN"}}
	}
	return err
}
