package store_test

import (
	"context"
	"fmt"
	"testing"

	"messages/models"
	"messages/models/dbtest"
	"messages/models/seed"
)

// BenchmarkListMessages reads pages of a seeded environment with their subscribers and
// templates, through the store's one read path for a message row (its scan).
func BenchmarkListMessages(b *testing.B) {
	s := dbtest.Open(b, "sqlite")
	stats := dbtest.Seed(b, s, seed.Options{Seed: 1, Messages: 1000, Subscribers: 100, Templates: 20})
	for _, size := range []int{100, 1000} {
		b.Run(fmt.Sprint(size), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.ListMessages(context.Background(), stats.EnvironmentID, models.ListFilter{}, models.Page{Size: size}, models.Everything); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
