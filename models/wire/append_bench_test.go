package wire_test

import (
	"context"
	"testing"

	"messages/models"
	"messages/models/dbtest"
	"messages/models/seed"
	"messages/models/wire"
)

// BenchmarkAppendMessage appends the 1,000 messages of a seeded page (subscribers and
// templates encoded once, as a page writes them) into one reused buffer.
func BenchmarkAppendMessage(b *testing.B) {
	s := dbtest.Open(b, "sqlite")
	stats := dbtest.Seed(b, s, seed.Options{Seed: 1, Messages: 1000, Subscribers: 100, Templates: 20})
	page, err := s.ListMessages(context.Background(), stats.EnvironmentID, models.ListFilter{}, models.Page{Size: 1000}, models.Everything)
	if err != nil {
		b.Fatal(err)
	}
	subscribers, templates := make([][]byte, len(page.Data)), make([][]byte, len(page.Data))
	for i, m := range page.Data {
		if m.Subscriber != nil {
			subscribers[i], _ = wire.Subscriber(m.Subscriber)
		}
		if m.Template != nil {
			templates[i], _ = wire.Template(m.Template)
		}
	}
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		for i, m := range page.Data {
			if buf, err = wire.AppendMessage(buf[:0], m, subscribers[i], templates[i]); err != nil {
				b.Fatal(err)
			}
		}
	}
}
