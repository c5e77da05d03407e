package service

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"time"

	"messages/models"
)

// Cursors, of lists (messagesConnection) and of live events (messageEvents), are
// base64url (unpadded) of a payload and a tag: HMAC-SHA256, under the cursor secret, of
// what the cursor is bound to (its kind's label, the caller's environment, the filters)
// and the payload. A cursor therefore works only for the caller and the filters it was
// issued for, and a client can neither forge one nor edit the position inside: any of
// these is refused as bad input before anything is read.

// cursorKey is the secret cursors are signed with.
type cursorKey []byte

// signer signs and verifies the cursors bound to one thing.
type signer struct {
	key   cursorKey
	bound []byte
}

func (k cursorKey) signer(label, environmentID string, f models.ListFilter) signer {
	b := appendString(nil, label)
	b = appendString(b, environmentID)
	return signer{key: k, bound: f.AppendKey(b)}
}

func (s signer) tag(payload []byte) []byte {
	mac := hmac.New(sha256.New, s.key)
	mac.Write(s.bound)
	mac.Write(payload)
	return mac.Sum(nil)
}

// seal returns the cursor of payload.
func (s signer) seal(payload []byte) string {
	return base64.RawURLEncoding.EncodeToString(append(payload, s.tag(payload)...))
}

// open returns the payload of a cursor that verifies, of at least min bytes and at most
// maxLength characters; ok is false for anything else.
func (s signer) open(cursor string, min, maxLength int) (payload []byte, ok bool) {
	if len(cursor) > maxLength {
		return nil, false
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(cursor)
	if err != nil || len(raw) < min+sha256.Size {
		return nil, false
	}
	payload, tag := raw[:len(raw)-sha256.Size], raw[len(raw)-sha256.Size:]
	return payload, hmac.Equal(tag, s.tag(payload))
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// A list cursor's payload is
//
//	version (1 byte) | createdAt in Unix milliseconds (8 bytes, big-endian) | id
const (
	listCursorVersion = 1
	listCursorLabel   = "messages.messagesConnection.cursor"
	// maxListCursorLength bounds the text decoded; a real cursor is under 100 characters.
	maxListCursorLength = 256
)

// listCursors signs and verifies the cursors of one list: one environment and filter.
type listCursors struct{ signer }

func (k cursorKey) list(environmentID string, f models.ListFilter) listCursors {
	return listCursors{k.signer(listCursorLabel, environmentID, f)}
}

// encode returns the cursor of position p.
func (c listCursors) encode(p models.Keyset) string {
	payload := make([]byte, 0, 1+8+len(p.ID)+sha256.Size)
	payload = append(payload, listCursorVersion)
	payload = binary.BigEndian.AppendUint64(payload, uint64(p.CreatedAt.UnixMilli()))
	return c.seal(append(payload, p.ID...))
}

// decode verifies a cursor and returns its position.
func (c listCursors) decode(cursor string) (*models.Keyset, error) {
	payload, ok := c.open(cursor, 1+8+1, maxListCursorLength)
	if !ok || payload[0] != listCursorVersion {
		// One answer for any cursor that does not verify, so a caller cannot tell a
		// forged cursor from another tenant's or another filter's.
		return nil, models.Invalid("after", nil,
			"after must be a cursor returned by messagesConnection for the same filters (pageInfo.endCursor or an edge's cursor)")
	}
	ms := int64(binary.BigEndian.Uint64(payload[1:9]))
	return &models.Keyset{CreatedAt: models.NewTime(time.UnixMilli(ms)), ID: string(payload[9:])}, nil
}
