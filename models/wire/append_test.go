package wire

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"messages/models"
)

// The appenders write what encoding/json writes with the records' struct tags, but for
// the records whose /v1 form differs from their tags (content blocks, buttons and
// subscribers' channel entries, which the SDK requires whole): those as the reference
// forms below say. The reference for a message and a subscriber is their own struct
// rebuilt by reflection with only those records swapped for their reference forms, so
// a field added to either is in the reference without a line here. Each record is
// filled at random, field by field: empty, zero, nil or set, with text that needs
// escaping, so every omitempty and every escape is crossed.

// referenceBlock and referenceButton are the wire forms of a content block and a
// button as structs, encoded by encoding/json: the definition the appenders follow.
// TestReferencesNameEveryField holds them to their records' fields.
func referenceBlock(b models.ContentBlock) any {
	type wireStyles struct {
		TextAlign string `json:"textAlign"`
	}
	var styles *wireStyles
	if b.Styles != nil {
		styles = &wireStyles{b.Styles.TextAlign}
	}
	return struct {
		Type    string      `json:"type"`
		Content string      `json:"content"`
		URL     string      `json:"url,omitempty"`
		Styles  *wireStyles `json:"styles,omitempty"`
	}{b.Type, b.Content, b.URL, styles}
}

func referenceButton(b models.CTAButton) any {
	return struct {
		Type          models.ButtonType `json:"type"`
		Content       string            `json:"content"`
		ResultContent string            `json:"resultContent,omitempty"`
	}{b.Type, b.Content, b.ResultContent}
}

func referenceChannel(c models.SubscriberChannel) any {
	credentials := c.Credentials
	if credentials == nil {
		credentials = &models.ChannelCredentials{}
	}
	return struct {
		ProviderID            string                     `json:"providerId"`
		IntegrationIdentifier string                     `json:"integrationIdentifier,omitempty"`
		IntegrationID         string                     `json:"_integrationId"`
		Credentials           *models.ChannelCredentials `json:"credentials"`
	}{c.ProviderID, c.IntegrationIdentifier, c.IntegrationID, credentials}
}

// refBlock, refButton and refChannel encode as their reference forms.
type (
	refBlock   models.ContentBlock
	refButton  models.CTAButton
	refChannel models.SubscriberChannel
)

func (b refBlock) MarshalJSON() ([]byte, error) {
	return marshalWire(referenceBlock(models.ContentBlock(b)))
}

func (b refButton) MarshalJSON() ([]byte, error) {
	return marshalWire(referenceButton(models.CTAButton(b)))
}

func (c refChannel) MarshalJSON() ([]byte, error) {
	return marshalWire(referenceChannel(models.SubscriberChannel(c)))
}

// referenceTypes swaps each record whose wire form is not its tags' for its reference.
var referenceTypes = map[reflect.Type]reflect.Type{
	reflect.TypeFor[models.ContentBlock]():      reflect.TypeFor[refBlock](),
	reflect.TypeFor[models.CTAButton]():         reflect.TypeFor[refButton](),
	reflect.TypeFor[models.SubscriberChannel](): reflect.TypeFor[refChannel](),
}

// mirror is t with every type of referenceTypes in it swapped: structs that hold one
// are rebuilt with the same fields and tags; every other type is t itself.
func mirror(t reflect.Type) reflect.Type {
	if r, ok := referenceTypes[t]; ok {
		return r
	}
	switch t.Kind() {
	case reflect.Pointer:
		if e := mirror(t.Elem()); e != t.Elem() {
			return reflect.PointerTo(e)
		}
	case reflect.Slice:
		if e := mirror(t.Elem()); e != t.Elem() {
			return reflect.SliceOf(e)
		}
	case reflect.Struct:
		fields := make([]reflect.StructField, t.NumField())
		swapped := false
		for i := range fields {
			f := t.Field(i)
			if !f.IsExported() {
				return t
			}
			if m := mirror(f.Type); m != f.Type {
				f.Type, swapped = m, true
			}
			f.Index, f.Offset = nil, 0
			fields[i] = f
		}
		if swapped {
			return reflect.StructOf(fields)
		}
	}
	return t
}

// mirrored copies v into a value of mirror(v.Type()).
func mirrored(v reflect.Value) reflect.Value {
	t := mirror(v.Type())
	if t == v.Type() {
		return v
	}
	out := reflect.New(t).Elem()
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			p := reflect.New(t.Elem())
			p.Elem().Set(mirrored(v.Elem()))
			out.Set(p)
		}
	case reflect.Slice:
		if !v.IsNil() {
			out.Set(reflect.MakeSlice(t, v.Len(), v.Len()))
			for i := range v.Len() {
				out.Index(i).Set(mirrored(v.Index(i)))
			}
		}
	case reflect.Struct:
		if _, ok := referenceTypes[v.Type()]; ok {
			return v.Convert(t)
		}
		for i := range v.NumField() {
			out.Field(i).Set(mirrored(v.Field(i)))
		}
	}
	return out
}

// reference encodes v as encoding/json encodes its mirror.
func reference(v any) ([]byte, error) {
	return marshalWire(mirrored(reflect.ValueOf(v)).Interface())
}

// referenceMessage encodes m by its struct tags (its subscriber's too).
func referenceMessage(m *models.Message) ([]byte, error) { return reference(*m) }

// The hand-written reference forms name every field of their records, in order: a
// field added to a content block, a button or a channel entry fails here until its
// wire form says how it is written.
func TestReferencesNameEveryField(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		record    reflect.Type
		reference any
	}{
		{reflect.TypeFor[models.ContentBlock](), referenceBlock(models.ContentBlock{})},
		{reflect.TypeFor[models.CTAButton](), referenceButton(models.CTAButton{})},
		{reflect.TypeFor[models.SubscriberChannel](), referenceChannel(models.SubscriberChannel{})},
	} {
		if got, want := jsonNames(reflect.TypeOf(c.reference)), jsonNames(c.record); !slices.Equal(got, want) {
			t.Errorf("%s: the reference names %v, the record %v", c.record, got, want)
		}
	}
}

// jsonNames are the JSON names of t's fields, in order.
func jsonNames(t reflect.Type) []string {
	var names []string
	for i := range t.NumField() {
		if name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); name != "-" {
			names = append(names, name)
		}
	}
	return names
}

// texts are the strings the filler picks from: empty, plain, and each escape.
var texts = []string{"", "s", `q"b\`, "<&>", "\u2028\u2029", "tab\tnl\ncr\rbs\bff\f", "\x00\x1f\x7f", "bad\xffutf8\xc3", "é日本🙂"}

// randomFill sets v and everything in it at random: each field empty or set, strings from
// texts plus text.
func randomFill(r *rand.Rand, v reflect.Value, text string) {
	switch p := v.Addr().Interface().(type) {
	case *models.Time:
		*p = models.NewTime(time.Date(1990+r.IntN(60), 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(r.Int64N(int64(365 * 24 * time.Hour)))))
		return
	case *models.Stamp:
		return
	case *models.JSON:
		quoted, _ := json.Marshal(text)
		switch r.IntN(4) {
		case 0:
			*p = nil
		case 1:
			*p = models.JSON(`{"k": [1, 2.50, "<&>", "\u2028"], "t": ` + string(quoted) + ` }`)
		case 2:
			*p = models.JSON(quoted)
		default:
			*p = models.JSON(`[ ]`)
		}
		return
	}
	switch v.Kind() {
	case reflect.String:
		if r.IntN(len(texts)+1) == 0 {
			v.SetString(text)
		} else {
			v.SetString(texts[r.IntN(len(texts))])
		}
	case reflect.Bool:
		v.SetBool(r.IntN(2) == 0)
	case reflect.Int, reflect.Int64:
		v.SetInt(r.Int64N(2000) - 1000)
	case reflect.Float64:
		v.SetFloat(float64(r.IntN(100)) / 4)
	case reflect.Pointer:
		if r.IntN(3) == 0 {
			v.SetZero()
			return
		}
		v.Set(reflect.New(v.Type().Elem()))
		randomFill(r, v.Elem(), text)
	case reflect.Slice:
		switch n := r.IntN(4); n {
		case 0:
			v.SetZero()
		default:
			v.Set(reflect.MakeSlice(v.Type(), n-1, n-1))
			for i := range n - 1 {
				randomFill(r, v.Index(i), text)
			}
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				randomFill(r, v.Field(i), text)
			}
		}
	case reflect.Map, reflect.Interface:
		v.SetZero()
	}
}

// checkAppenders compares every appender with its reference on records filled from seed.
func checkAppenders(t *testing.T, seed uint64, text string) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, seed>>7))
	var m models.Message
	randomFill(r, reflect.ValueOf(&m).Elem(), text)
	m.Subscriber, m.Template = nil, nil

	got, gotErr := AppendMessage(nil, &m, nil, nil)
	want, wantErr := referenceMessage(&m)
	if (gotErr != nil) != (wantErr != nil) || gotErr == nil && !bytes.Equal(got, want) {
		t.Fatalf("seed %d, text %q: message\n got %s (%v)\nwant %s (%v)", seed, text, got, gotErr, want, wantErr)
	}

	// The open form is the same members; with one omitted, the same object without it.
	if gotErr == nil {
		open, _ := AppendMessageMembers(nil, &m, nil, nil)
		if !bytes.Equal(append(open, '}'), got) {
			t.Fatalf("seed %d: AppendMessageMembers differs from AppendMessage\n got %s}\nwant %s", seed, open, got)
		}
		open, _ = AppendMessageMembers(nil, &m, nil, nil, "content")
		var whole, less map[string]json.RawMessage
		if err := json.Unmarshal(got, &whole); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(append(open, '}'), &less); err != nil {
			t.Fatalf("seed %d: the open form without content is no object: %v", seed, err)
		}
		delete(whole, "content")
		if len(whole) != len(less) {
			t.Fatalf("seed %d: without content, %d members, want %d", seed, len(less), len(whole))
		}
	}

	for _, b := range m.Content {
		got := appendBlock(nil, b)
		want, _ := marshalWire(referenceBlock(b))
		if !bytes.Equal(got, want) {
			t.Fatalf("seed %d: content block\n got %s\nwant %s", seed, got, want)
		}
	}
	if m.CTA.Action != nil {
		for _, b := range m.CTA.Action.Buttons {
			got := appendButton(nil, b)
			want, _ := marshalWire(referenceButton(b))
			if !bytes.Equal(got, want) {
				t.Fatalf("seed %d: button\n got %s\nwant %s", seed, got, want)
			}
		}
	}

	var s models.Subscriber
	randomFill(r, reflect.ValueOf(&s).Elem(), text)
	gotSub, gotErr := Subscriber(&s)
	wantSub, wantErr := reference(s)
	if (gotErr != nil) != (wantErr != nil) || gotErr == nil && !bytes.Equal(gotSub, wantSub) {
		t.Fatalf("seed %d, text %q: subscriber\n got %s (%v)\nwant %s (%v)", seed, text, gotSub, gotErr, wantSub, wantErr)
	}

	// Embedded: the given bytes stand where encoding/json writes the records.
	if gotErr == nil {
		m.Subscriber = &s
		tmpl := []byte(`{"_id":"t"}`)
		got, err := AppendMessage(nil, &m, gotSub, tmpl)
		if err == nil {
			m.Template = nil
			want, _ := referenceMessage(&m)
			// The reference has the subscriber after _subscriberId; add the template there.
			want = bytes.Replace(want, wantSub, append(append(append([]byte{}, wantSub...), `,"template":`...), tmpl...), 1)
			if !bytes.Equal(got, want) {
				t.Fatalf("seed %d: message with subscriber and template\n got %s\nwant %s", seed, got, want)
			}
		}
	}
}

func TestAppendersWriteWhatEncodingJSONWrites(t *testing.T) {
	t.Parallel()
	for seed := range uint64(3000) {
		checkAppenders(t, seed, texts[seed%uint64(len(texts))])
	}
}

func FuzzAppenders(f *testing.F) {
	for i, text := range texts {
		f.Add(uint64(i), text)
	}
	f.Fuzz(func(t *testing.T, seed uint64, text string) { checkAppenders(t, seed, text) })
}
