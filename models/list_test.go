package models_test

import (
	"bytes"
	"testing"
	"time"

	"messages/models"
)

// A filter's key tells apart every filter the inbox adds (templates, creation range) and
// keeps, for a filter without them, the bytes it had before they existed, so cursors
// issued then still open.
func TestListFilterKey(t *testing.T) {
	sub := "ada"
	at := models.NewTime(time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC))
	later := models.NewTime(at.Add(time.Millisecond))
	base := models.ListFilter{SubscriberID: &sub}
	filters := map[string]models.ListFilter{
		"base":          base,
		"templates":     {SubscriberID: &sub, TemplateIDs: []string{"t1"}},
		"templatesBoth": {SubscriberID: &sub, TemplateIDs: []string{"t2", "t1", "t2"}},
		"from":          {SubscriberID: &sub, CreatedFrom: &at},
		"to":            {SubscriberID: &sub, CreatedTo: &at},
		"fromLater":     {SubscriberID: &sub, CreatedFrom: &later},
		"range":         {SubscriberID: &sub, CreatedFrom: &at, CreatedTo: &later},
	}
	seen := map[string]string{}
	for name, f := range filters {
		key := string(f.AppendKey(nil))
		if other, dup := seen[key]; dup {
			t.Errorf("%s and %s have one key", name, other)
		}
		seen[key] = name
		if !f.Counted() {
			t.Errorf("%s of one subscriber is not answered from the counters, which keep a subscriber's by workflow and month", name)
		}
		f.SubscriberID = nil
		if name != "base" && f.Counted() {
			t.Errorf("%s across subscribers is answered from the counters, which know templates and times only per subscriber", name)
		}
	}
	same := models.ListFilter{SubscriberID: &sub, TemplateIDs: []string{"t1", "t2"}}
	if !bytes.Equal(same.AppendKey(nil), filters["templatesBoth"].AppendKey(nil)) {
		t.Error("the same templates in another order or repeated make another key")
	}
	// Before templates and times: the channel, the subscriber, no transaction ids.
	want := []byte{0, 1, 3, 'a', 'd', 'a', 0}
	if got := base.AppendKey(nil); !bytes.Equal(got, want) {
		t.Errorf("the key of a filter without the inbox's fields is %v, was %v", got, want)
	}
}
