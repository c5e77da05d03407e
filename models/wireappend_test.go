package models

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
)

// The appenders write what encoding/json writes: Message as its struct tags say, the
// content blocks, buttons and subscribers as their wire structs say (the forms below,
// which the appenders replaced). Each record is filled at random, field by field: empty,
// zero, nil or set, with text that needs escaping, so every omitempty and every escape
// is crossed.

// referenceBlock, referenceButton and referenceSubscriber are the wire forms as structs,
// encoded by encoding/json: the definition the appenders follow.
func referenceBlock(b ContentBlock) any {
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

func referenceButton(b CTAButton) any {
	return struct {
		Type          ButtonType `json:"type"`
		Content       string     `json:"content"`
		ResultContent string     `json:"resultContent,omitempty"`
	}{b.Type, b.Content, b.ResultContent}
}

func referenceSubscriber(s Subscriber) any {
	var channels []wireChannel
	for _, c := range s.Channels {
		credentials := c.Credentials
		if credentials == nil {
			credentials = &ChannelCredentials{}
		}
		channels = append(channels, wireChannel{c.ProviderID, c.IntegrationIdentifier, c.IntegrationID, credentials})
	}
	return struct {
		ID             string        `json:"_id"`
		FirstName      string        `json:"firstName,omitempty"`
		LastName       string        `json:"lastName,omitempty"`
		Email          string        `json:"email,omitempty"`
		Phone          string        `json:"phone,omitempty"`
		Avatar         string        `json:"avatar,omitempty"`
		Locale         string        `json:"locale,omitempty"`
		Channels       []wireChannel `json:"channels,omitempty"`
		Topics         []string      `json:"topics,omitempty"`
		IsOnline       *bool         `json:"isOnline,omitempty"`
		LastOnlineAt   *Time         `json:"lastOnlineAt,omitempty"`
		Version        int           `json:"__v"`
		Data           JSON          `json:"data,omitempty"`
		Timezone       string        `json:"timezone,omitempty"`
		SubscriberID   string        `json:"subscriberId"`
		OrganizationID string        `json:"_organizationId"`
		EnvironmentID  string        `json:"_environmentId"`
		Deleted        bool          `json:"deleted"`
		CreatedAt      Time          `json:"createdAt"`
		UpdatedAt      Time          `json:"updatedAt"`
	}{s.ID, s.FirstName, s.LastName, s.Email, s.Phone, s.Avatar, s.Locale, channels, s.Topics,
		s.IsOnline, s.LastOnlineAt, s.Version, s.Data, s.Timezone, s.SubscriberID, s.OrganizationID,
		s.EnvironmentID, s.Deleted, s.CreatedAt, s.UpdatedAt}
}

// referenceMessage encodes m by its struct tags. Its blocks, buttons and subscriber go
// through their own MarshalJSON (appenders too), which checkAppenders compares apart.
func referenceMessage(m *Message) ([]byte, error) {
	type plainMessage Message // without methods: encoding/json's own encoding of every field
	return marshalWire(plainMessage(*m))
}

// texts are the strings the filler picks from: empty, plain, and each escape.
var texts = []string{"", "s", `q"b\`, "<&>", "\u2028\u2029", "tab\tnl\ncr\rbs\bff\f", "\x00\x1f\x7f", "bad\xffutf8\xc3", "é日本🙂"}

// randomFill sets v and everything in it at random: each field empty or set, strings from
// texts plus text.
func randomFill(r *rand.Rand, v reflect.Value, text string) {
	switch p := v.Addr().Interface().(type) {
	case *Time:
		*p = NewTime(time.Date(1990+r.IntN(60), 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(r.Int64N(int64(365 * 24 * time.Hour)))))
		return
	case *Stamp:
		return
	case *JSON:
		quoted, _ := json.Marshal(text)
		switch r.IntN(4) {
		case 0:
			*p = nil
		case 1:
			*p = JSON(`{"k": [1, 2.50, "<&>", "\u2028"], "t": ` + string(quoted) + ` }`)
		case 2:
			*p = JSON(quoted)
		default:
			*p = JSON(`[ ]`)
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
	var m Message
	randomFill(r, reflect.ValueOf(&m).Elem(), text)
	m.Subscriber, m.Template = nil, nil

	got, gotErr := m.AppendWire(nil, nil, nil)
	want, wantErr := referenceMessage(&m)
	if (gotErr != nil) != (wantErr != nil) || gotErr == nil && !bytes.Equal(got, want) {
		t.Fatalf("seed %d, text %q: message\n got %s (%v)\nwant %s (%v)", seed, text, got, gotErr, want, wantErr)
	}

	for _, b := range m.Content {
		got, _ := b.MarshalJSON()
		want, _ := marshalWire(referenceBlock(b))
		if !bytes.Equal(got, want) {
			t.Fatalf("seed %d: content block\n got %s\nwant %s", seed, got, want)
		}
	}
	if m.CTA.Action != nil {
		for _, b := range m.CTA.Action.Buttons {
			got, _ := b.MarshalJSON()
			want, _ := marshalWire(referenceButton(b))
			if !bytes.Equal(got, want) {
				t.Fatalf("seed %d: button\n got %s\nwant %s", seed, got, want)
			}
		}
	}

	var s Subscriber
	randomFill(r, reflect.ValueOf(&s).Elem(), text)
	gotSub, gotErr := s.MarshalJSON()
	wantSub, wantErr := marshalWire(referenceSubscriber(s))
	if (gotErr != nil) != (wantErr != nil) || gotErr == nil && !bytes.Equal(gotSub, wantSub) {
		t.Fatalf("seed %d, text %q: subscriber\n got %s (%v)\nwant %s (%v)", seed, text, gotSub, gotErr, wantSub, wantErr)
	}

	// Embedded: the given bytes stand where encoding/json writes the records.
	if gotErr == nil {
		m.Subscriber = &s
		tmpl := []byte(`{"_id":"t"}`)
		got, err := m.AppendWire(nil, gotSub, tmpl)
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
