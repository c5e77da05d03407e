package wire

import (
	"bytes"
	"strconv"
	"unicode/utf8"

	jsonv1 "github.com/go-json-experiment/json/v1"

	"messages/models"
)

// The /v1 wire form of a message, its content blocks, buttons and subscriber, appended
// to a byte slice field by field instead of built as a struct and encoded by reflection:
// a /v1 page of 100 messages spent most of its encoding time in encoding/json's
// reflection and in one json.Encoder per content block and button. The bytes are the
// ones encoding/json writes with HTML escaping off (marshalWire), which the tests prove
// on every field, empty and filled (append_test.go): Message's struct tags stay the
// definition of its wire form, and its appender is generated from them.

// wire appends one JSON object's members; the first member opens it.
type wire struct {
	b      []byte
	opened bool
	err    error
}

// key starts a member named by k, a JSON key with its quotes and colon.
func (w *wire) key(k string) {
	if w.opened {
		w.b = append(w.b, ',')
	} else {
		w.b = append(w.b, '{')
		w.opened = true
	}
	w.b = append(w.b, k...)
}

// end closes the object, "{}" when it has no member.
func (w *wire) end() []byte {
	if !w.opened {
		w.b = append(w.b, '{')
	}
	return append(w.b, '}')
}

func (w *wire) str(k, v string) {
	w.key(k)
	w.b = appendString(w.b, v)
}

// strOmit writes a string member unless it is empty (omitempty).
func (w *wire) strOmit(k, v string) {
	if v != "" {
		w.str(k, v)
	}
}

func (w *wire) boolean(k string, v bool) {
	w.key(k)
	if v {
		w.b = append(w.b, "true"...)
	} else {
		w.b = append(w.b, "false"...)
	}
}

func (w *wire) timestamp(k string, t models.Time) {
	w.key(k)
	w.b = appendTime(w.b, t)
}

// timeOmit writes an optional timestamp unless it is nil (omitempty).
func (w *wire) timeOmit(k string, t *models.Time) {
	if t != nil {
		w.timestamp(k, *t)
	}
}

// rawOmit writes a stored JSON value unless it is empty (omitempty), compacted as
// encoding/json writes a Marshaler's bytes.
func (w *wire) rawOmit(k string, v models.JSON) {
	if len(v) == 0 {
		return
	}
	w.key(k)
	w.b, w.err = appendCompactJSON(w.b, v, w.err)
}

// strings writes a list of strings, null for nil.
func (w *wire) strings(k string, v []string) {
	w.key(k)
	w.b = appendList(w.b, v, appendString)
}

// appendList appends items as a JSON array, each by appendItem; nil is null.
func appendList[T any](dst []byte, items []T, appendItem func([]byte, T) []byte) []byte {
	if items == nil {
		return append(dst, "null"...)
	}
	dst = append(dst, '[')
	for i, item := range items {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendItem(dst, item)
	}
	return append(dst, ']')
}

// appendCTA appends c as the CTA struct encodes: every part omitted when empty.
func appendCTA(dst []byte, c models.CTA, err error) ([]byte, error) {
	w := wire{b: dst, err: err}
	w.strOmit(`"type":`, c.Type)
	if c.Data != nil {
		w.key(`"data":`)
		d := wire{b: w.b}
		d.strOmit(`"url":`, c.Data.URL)
		w.b = d.end()
	}
	if a := c.Action; a != nil {
		w.key(`"action":`)
		aw := wire{b: w.b, err: w.err}
		aw.strOmit(`"status":`, string(a.Status))
		if len(a.Buttons) > 0 {
			aw.key(`"buttons":`)
			aw.b = appendList(aw.b, a.Buttons, appendButton)
		}
		if r := a.Result; r != nil {
			aw.key(`"result":`)
			rw := wire{b: aw.b, err: aw.err}
			rw.rawOmit(`"payload":`, r.Payload)
			rw.strOmit(`"type":`, string(r.Type))
			aw.b, aw.err = rw.end(), rw.err
		}
		w.b, w.err = aw.end(), aw.err
	}
	return w.end(), w.err
}

// appendBlock appends b in its wire form: content always, textAlign always in styles.
func appendBlock(dst []byte, b models.ContentBlock) []byte {
	w := wire{b: dst}
	w.str(`"type":`, b.Type)
	w.str(`"content":`, b.Content)
	w.strOmit(`"url":`, b.URL)
	if b.Styles != nil {
		w.key(`"styles":`)
		s := wire{b: w.b}
		s.str(`"textAlign":`, b.Styles.TextAlign)
		w.b = s.end()
	}
	return w.end()
}

// appendButton appends b in its wire form: content always.
func appendButton(dst []byte, b models.CTAButton) []byte {
	w := wire{b: dst}
	w.str(`"type":`, string(b.Type))
	w.str(`"content":`, b.Content)
	w.strOmit(`"resultContent":`, b.ResultContent)
	return w.end()
}

// appendSubscriber appends s in its wire form. Its channels, rare and nested, are
// encoded by encoding/json.
func appendSubscriber(dst []byte, s *models.Subscriber) ([]byte, error) {
	w := wire{b: dst}
	w.str(`"_id":`, s.ID)
	w.strOmit(`"firstName":`, s.FirstName)
	w.strOmit(`"lastName":`, s.LastName)
	w.strOmit(`"email":`, s.Email)
	w.strOmit(`"phone":`, s.Phone)
	w.strOmit(`"avatar":`, s.Avatar)
	w.strOmit(`"locale":`, s.Locale)
	if len(s.Channels) > 0 {
		channels := make([]wireChannel, len(s.Channels))
		for i, c := range s.Channels {
			credentials := c.Credentials
			if credentials == nil {
				credentials = &models.ChannelCredentials{}
			}
			channels[i] = wireChannel{c.ProviderID, c.IntegrationIdentifier, c.IntegrationID, credentials}
		}
		b, err := marshalWire(channels)
		if err != nil {
			return nil, err
		}
		w.key(`"channels":`)
		w.b = append(w.b, b...)
	}
	if len(s.Topics) > 0 {
		w.strings(`"topics":`, s.Topics)
	}
	if s.IsOnline != nil {
		w.boolean(`"isOnline":`, *s.IsOnline)
	}
	w.timeOmit(`"lastOnlineAt":`, s.LastOnlineAt)
	w.key(`"__v":`)
	w.b = strconv.AppendInt(w.b, int64(s.Version), 10)
	w.rawOmit(`"data":`, s.Data)
	w.strOmit(`"timezone":`, s.Timezone)
	w.str(`"subscriberId":`, s.SubscriberID)
	w.str(`"_organizationId":`, s.OrganizationID)
	w.str(`"_environmentId":`, s.EnvironmentID)
	w.boolean(`"deleted":`, s.Deleted)
	w.timestamp(`"createdAt":`, s.CreatedAt)
	w.timestamp(`"updatedAt":`, s.UpdatedAt)
	return w.end(), w.err
}

// appendTime appends t in models.TimeLayout, quoted.
func appendTime(dst []byte, t models.Time) []byte {
	dst = append(dst, '"')
	dst = t.UTC().AppendFormat(dst, models.TimeLayout)
	return append(dst, '"')
}

// appendCompactJSON appends v without insignificant spaces, as encoding/json writes a
// Marshaler's bytes (through jsonv1, a third of encoding/json's time here); err, when not
// nil, is kept (the first error wins).
func appendCompactJSON(dst []byte, v models.JSON, err error) ([]byte, error) {
	buf := bytes.NewBuffer(dst)
	if cerr := jsonv1.Compact(buf, v); cerr != nil && err == nil {
		err = cerr
	}
	return buf.Bytes(), err
}

// appendString appends s quoted as encoding/json quotes it with HTML escaping off:
// quotes, backslashes and control characters escaped, invalid UTF-8 as U+FFFD, and
// U+2028 and U+2029 escaped.
func appendString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '\\', '"':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
