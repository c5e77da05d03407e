package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"messages/models"
	"messages/models/dbtest"
	"messages/models/seed"
	"messages/models/store"
)

// Walking every numbered page returns each message once, in order; a page deep in the
// list that continues where the previous page ended reads from that position instead of
// skipping an offset; after an insert under the filter, and for a jump, the page is what
// OFFSET gives on the current rows.
func TestListMessagesWalkFromBoundaries(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		stats := dbtest.Seed(t, s, seed.Options{Seed: 5, Messages: 2_600, Subscribers: 10, Templates: 3})
		env := stats.EnvironmentID
		ctx := context.Background()
		ordered := func(t *testing.T) []string {
			t.Helper()
			var ids []string
			if err := s.DB().Raw(`SELECT id FROM messages WHERE environment_id = ? ORDER BY created_at DESC, id DESC`, env).
				Scan(&ids).Error; err != nil {
				t.Fatal(err)
			}
			return ids
		}
		log := dbtest.RecordStatements(t, s)
		const size = 100
		// page reads page number and reports its ids and whether its statement skipped
		// rows with OFFSET.
		page := func(t *testing.T, number int) (ids []string, offset bool) {
			t.Helper()
			log.Take()
			p := list(t, s, env, models.ListFilter{}, models.Page{Number: number, Size: size}, models.Everything)
			for _, st := range log.Take() {
				if strings.Contains(st.SQL, "JOIN (SELECT") && strings.Contains(strings.ToUpper(st.SQL), "OFFSET") {
					offset = true
				}
			}
			if p.TotalCount != len(ordered(t)) {
				t.Errorf("page %d: totalCount %d, want %d", number, p.TotalCount, len(ordered(t)))
			}
			for _, m := range p.Data {
				ids = append(ids, m.ID)
			}
			return ids, offset
		}

		t.Run("list200WalkReturnsEveryMessageOnceInOrder", func(t *testing.T) {
			want := ordered(t)
			var walked []string
			for number := 0; number*size < len(want); number++ {
				ids, offset := page(t, number)
				// Page 10 starts at offset 1,000, the first with a boundary worth keeping;
				// page 11 on continue from the page before.
				if wantOffset := number > 0 && number <= 10; offset != wantOffset {
					t.Errorf("page %d: OFFSET %v, want %v", number, offset, wantOffset)
				}
				walked = append(walked, ids...)
			}
			if diff := cmp.Diff(want, walked); diff != "" {
				t.Errorf("walked ids (-list order +walk):\n%s", diff)
			}
		})

		t.Run("list200AfterAnInsertTheOffsetAnswer", func(t *testing.T) {
			for number := 10; number <= 14; number++ {
				page(t, number)
			}
			e, err := s.Environment(ctx, env)
			if err != nil {
				t.Fatal(err)
			}
			var sub string
			if err := s.DB().Raw(`SELECT id FROM subscribers WHERE environment_id = ? LIMIT 1`, env).Scan(&sub).Error; err != nil {
				t.Fatal(err)
			}
			dbtest.RawMessage(t, s.DB(), e, sub, nil)
			want := ordered(t)
			ids, offset := page(t, 15)
			if !offset {
				t.Error("page 15 continued from a boundary read before the insert")
			}
			if diff := cmp.Diff(want[1500:1600], ids); diff != "" {
				t.Errorf("page 15 after an insert (-offset answer +got):\n%s", diff)
			}
			ids, offset = page(t, 16)
			if offset {
				t.Error("page 16 did not continue from page 15, read after the insert")
			}
			if diff := cmp.Diff(want[1600:1700], ids); diff != "" {
				t.Errorf("page 16 (-offset answer +got):\n%s", diff)
			}
		})

		for _, number := range []int{25, 12, 20} {
			t.Run(fmt.Sprintf("list200JumpToPage%d", number), func(t *testing.T) {
				want := ordered(t)
				ids, _ := page(t, number)
				if diff := cmp.Diff(want[number*size:min((number+1)*size, len(want))], ids); diff != "" {
					t.Errorf("page %d (-offset answer +got):\n%s", number, diff)
				}
			})
		}
	})
}
