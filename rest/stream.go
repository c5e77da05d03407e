package rest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"

	"messages/models"
	"messages/models/wire"
)

// A page of 1,000 messages is about 4 MB, nearly all of it the embedded subscriber and
// template, which repeat across messages. writeJSON would build the whole body in the
// encoder's buffer, encode every message's template and subscriber again, and copy each
// of those encodings once more while checking it. writePage writes the same bytes with
// one message in memory at a time and each distinct template and subscriber encoded once
// (a template once for as long as the store keeps it: wire.Template).
//
// A message is appended field by field (wire.AppendMessage, which the tests hold
// to encoding/json's bytes), with the memoized subscriber and template bytes written
// in their places. The page's envelope is encoded by encoding/json, split around data:
// its parts are types made from MessagesPage's own fields at start-up, so a field added
// to it follows.

// streamBufferSize is how much of a page is written to the connection at once.
const streamBufferSize = 32 << 10

var pageParts = splitStruct(reflect.TypeFor[models.MessagesPage](), "Data", "Data")

// writePage answers with page as writeJSON(w, http.StatusOK, page) would, byte for byte.
// The page is whole before the status is written; an error here is a write error or a
// stored value that is not JSON, found after the status went out.
func writePage(w http.ResponseWriter, page *models.MessagesPage) error {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	out := bufio.NewWriterSize(w, streamBufferSize)
	p := newPageWriter(out)
	if err := p.write(page); err != nil {
		return err
	}
	return out.Flush()
}

// pageWriter encodes pages into out, reusing its scratch space from message to message.
type pageWriter struct {
	out         *bufio.Writer
	scratch     bytes.Buffer
	enc         *json.Encoder
	encoded     []byte // a message's encoding, reused from message to message
	subscribers map[*models.Subscriber][]byte
	templates   map[*models.Template][]byte
}

func newPageWriter(out *bufio.Writer) *pageWriter {
	p := &pageWriter{
		out:         out,
		subscribers: make(map[*models.Subscriber][]byte),
		templates:   make(map[*models.Template][]byte),
	}
	p.enc = json.NewEncoder(&p.scratch)
	// HTML characters stay as stored, as writeJSON writes them.
	p.enc.SetEscapeHTML(false)
	return p
}

// write writes page and the newline json.Encoder ends a value with.
func (p *pageWriter) write(page *models.MessagesPage) error {
	head, tail, err := p.encodeParts(pageParts, reflect.ValueOf(page).Elem(),
		reflect.New(pageParts.head).Elem(), reflect.New(pageParts.tail).Elem())
	if err != nil {
		return &recordError{err}
	}
	// The envelope's few bytes must outlive the scratch space the messages reuse.
	head, tail = bytes.Clone(head), bytes.Clone(tail)
	p.out.Write(head)
	p.member(len(head) > 1, pageParts.keys[0])
	if page.Data == nil {
		p.out.WriteString("null")
	} else {
		p.out.WriteByte('[')
		for i, m := range page.Data {
			if i > 0 {
				p.out.WriteByte(',')
			}
			if err := p.message(m); err != nil {
				return err
			}
		}
		p.out.WriteByte(']')
	}
	if err := p.close(true, tail); err != nil {
		return err
	}
	_, err = p.out.WriteString("\n")
	return err
}

// message writes one message as encoding/json would. Its error is the writer's, or a
// *recordError.
func (p *pageWriter) message(m *models.Message) error {
	if m == nil {
		_, err := p.out.WriteString("null")
		return err
	}
	var subscriber, template []byte
	var err error
	if m.Subscriber != nil {
		if subscriber, err = p.subscriber(m.Subscriber); err != nil {
			return &recordError{fmt.Errorf("subscriber %s of message %s: %w", m.Subscriber.ID, m.ID, err)}
		}
	}
	if m.Template != nil {
		if template, err = p.template(m.Template); err != nil {
			return &recordError{fmt.Errorf("template %s of message %s: %w", m.Template.ID, m.ID, err)}
		}
	}
	p.encoded, err = wire.AppendMessage(p.encoded[:0], m, subscriber, template)
	if err != nil {
		return &recordError{fmt.Errorf("message %s: %w", m.ID, err)}
	}
	_, err = p.out.Write(p.encoded)
	return err
}

// subscriber returns s's wire form, encoded once per page.
func (p *pageWriter) subscriber(s *models.Subscriber) ([]byte, error) {
	if b, ok := p.subscribers[s]; ok {
		return b, nil
	}
	b, err := wire.Subscriber(s)
	if err != nil {
		return nil, err
	}
	p.subscribers[s] = b
	return b, nil
}

// template returns t's wire form: encoded once for as long as t lives (wire.Template), and
// looked up once per page.
func (p *pageWriter) template(t *models.Template) ([]byte, error) {
	if b, ok := p.templates[t]; ok {
		return b, nil
	}
	b, err := wire.Template(t)
	if err != nil {
		return nil, err
	}
	p.templates[t] = b
	return b, nil
}

// encodeParts encodes the fields of v before and after the split fields into the
// scratch buffer, through head and tail (values of parts' types), and returns the two
// objects: head without its closing brace, tail without its opening one.
func (p *pageWriter) encodeParts(parts structParts, v, head, tail reflect.Value) ([]byte, []byte, error) {
	for i, f := range parts.headFields {
		head.Field(i).Set(v.Field(f))
	}
	for i, f := range parts.tailFields {
		tail.Field(i).Set(v.Field(f))
	}
	p.scratch.Reset()
	if err := p.enc.Encode(head.Addr().Interface()); err != nil {
		return nil, nil, err
	}
	headEnd := p.scratch.Len()
	if err := p.enc.Encode(tail.Addr().Interface()); err != nil {
		return nil, nil, err
	}
	b := p.scratch.Bytes()
	// Each ends in "}\n" and the second starts with "{".
	return b[:headEnd-2], b[headEnd+1 : len(b)-1], nil
}

// member starts a member written apart: its key, after a comma when members came
// before it.
func (p *pageWriter) member(after bool, key string) {
	if after {
		p.out.WriteByte(',')
	}
	p.out.WriteString(key)
}

// close writes an object's tail (its last members and "}"), after a comma when members
// came before both. Its error is the writer's first, if any: a client that went away
// stops the page.
func (p *pageWriter) close(after bool, tail []byte) error {
	if after && len(tail) > 1 {
		p.out.WriteByte(',')
	}
	_, err := p.out.Write(tail)
	return err
}

// recordError is a record that could not be encoded: a stored JSON value that is not
// JSON, found after the page's status was written.
type recordError struct{ err error }

func (e *recordError) Error() string { return "encoding the page: " + e.err.Error() }
func (e *recordError) Unwrap() error { return e.err }

// structParts is a struct type cut around a run of its fields, which are written apart:
// head and tail are struct types holding the fields before and after the run, with the
// same names and tags, so encoding/json writes them as it writes the whole type.
type structParts struct {
	head, tail             reflect.Type
	headFields, tailFields []int
	// keys are the run's JSON keys, quoted and followed by a colon.
	keys []string
}

// splitStruct cuts t around the fields from first to last. It panics if they are not
// plain fields of t in that order: a change to the record that this file must follow.
func splitStruct(t reflect.Type, first, last string) structParts {
	f, ok := t.FieldByName(first)
	l, ok2 := t.FieldByName(last)
	if !ok || !ok2 || len(f.Index) != 1 || len(l.Index) != 1 || f.Index[0] > l.Index[0] {
		panic(fmt.Sprintf("rest: %s has no fields %s..%s to stream apart", t, first, last))
	}
	var parts structParts
	var head, tail []reflect.StructField
	for i := range t.NumField() {
		field := t.Field(i)
		switch {
		case field.Anonymous || !field.IsExported():
			panic(fmt.Sprintf("rest: %s.%s cannot be streamed apart", t, field.Name))
		case i < f.Index[0]:
			head = append(head, field)
			parts.headFields = append(parts.headFields, i)
		case i > l.Index[0]:
			tail = append(tail, field)
			parts.tailFields = append(parts.tailFields, i)
		default:
			name, _, _ := strings.Cut(field.Tag.Get("json"), ",")
			if name == "" || name == "-" {
				panic(fmt.Sprintf("rest: %s.%s has no JSON name", t, field.Name))
			}
			key, _ := json.Marshal(name)
			parts.keys = append(parts.keys, string(key)+":")
		}
	}
	for i := range head {
		head[i].Index, head[i].Offset = nil, 0
	}
	for i := range tail {
		tail[i].Index, tail[i].Offset = nil, 0
	}
	parts.head, parts.tail = reflect.StructOf(head), reflect.StructOf(tail)
	return parts
}
