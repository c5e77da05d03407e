package main

import (
	"strings"
	"testing"
)

// Column names follow gorm's naming of the fields: an initialism stays one word.
func TestColumnName(t *testing.T) {
	t.Parallel()
	for field, want := range map[string]string{
		"ID": "id", "TemplateID": "template_id", "DirectWebhookURL": "direct_webhook_url",
		"ActionResultPayload": "action_result_payload", "CTA": "cta", "FirstSeenDate": "first_seen_date",
	} {
		if got := columnName(field); got != want {
			t.Errorf("columnName(%q) = %q, want %q", field, got, want)
		}
	}
}

// A field the generator cannot write or read stops it with the field's name, rather
// than being left out of the scan or the wire form.
func TestUnsupportedFieldStops(t *testing.T) {
	t.Parallel()
	for name, f := range map[string]field{
		"wire": {name: "Score", typ: "float64", json: "score", column: "score"},
		"scan": {name: "Owner", typ: "*string", json: "-", column: "owner"},
	} {
		rec := &record{name: "Message", fields: []field{f}, underlying: map[string]string{}}
		var err error
		if name == "wire" {
			_, err = wireAppender(rec)
		} else {
			_, err = storeColumns(rec)
		}
		if err == nil || !strings.Contains(err.Error(), "Message."+f.name) {
			t.Errorf("%s: error %v, want one naming Message.%s", name, err, f.name)
		}
	}
}

// The record is read from the source with its tags: the models package's Message.
func TestParseMessage(t *testing.T) {
	t.Parallel()
	rec, err := parseRecord("../..", "Message")
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]field{}
	for _, f := range rec.fields {
		byName[f.name] = f
	}
	if f := byName["CTA"]; f.column != "cta" || f.serializer != "jsontext" || f.json != "cta" || f.omitEmpty {
		t.Errorf("CTA read as %+v", f)
	}
	if f := byName["Subscriber"]; !f.noColumn || f.typ != "*Subscriber" || !f.omitEmpty {
		t.Errorf("Subscriber read as %+v", f)
	}
	if rec.underlying["ChannelType"] != "string" {
		t.Errorf("ChannelType's underlying type read as %q", rec.underlying["ChannelType"])
	}
}
