package store_test

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"gorm.io/gorm/schema"

	"messages/models"
	"messages/models/dbtest"
	"messages/models/store"
)

// The columns a page reads by hand are exactly the message's columns: a column added to
// Message without its place in the scan fails here, not as a field that is silently
// always empty.
func TestScanColumnsAreTheRecordsColumns(t *testing.T) {
	sch, err := schema.Parse(&models.Message{}, &sync.Map{}, schema.NamingStrategy{})
	if err != nil {
		t.Fatal(err)
	}
	want, got := slices.Clone(sch.DBNames), store.ScanColumns()
	slices.Sort(want)
	slices.Sort(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("scanned columns differ from GORM's (-want +got):\n%s", diff)
	}
}

// A page reads every field of a message and of its subscriber as GORM reads them: one
// message with every column set, one with every optional column NULL and no subscriber
// row, on both databases.
func TestPageReadsEveryField(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		tn := dbtest.NewTenant(t, s, "scan")
		if empty := list(t, s, tn.Env.ID, models.ListFilter{}, models.Page{Size: 10}, models.Everything); empty.Data == nil {
			t.Fatal("an empty page's data is nil (null on the wire), want an empty list")
		}
		sub, tpl := tn.Subscriber(t, "sub-scan"), tn.Template(t, "scan")
		full := tn.Message(t, sub, tpl, func(m *models.Message) {
			m.LastSeenDate, m.LastReadDate = models.TimePtr(dbtest.Base.Add(time.Minute)), models.TimePtr(dbtest.Base.Add(2*time.Minute))
			m.SnoozedUntil = models.TimePtr(dbtest.Base.Add(time.Hour))
			m.Read, m.Seen = true, true
			m.Email, m.Phone, m.DirectWebhookURL, m.ProviderID = "a@example.com", "+15550101", "https://hooks.example.com/m", "sendgrid"
			m.DeviceTokens = []string{"device-1", "device-2"}
			m.ErrorID, m.ErrorText = "E1", "bounced"
			m.ActionStatus, m.ActionResultType = models.ActionDone, models.ButtonSecondary
			m.ActionResultPayload = models.JSON(`{"why":"<&>"}`)
		})
		bare := dbtest.RawMessage(t, s.DB(), tn.Env, models.NewID(time.Now()), nil) // its subscriber does not exist

		page := list(t, s, tn.Env.ID, models.ListFilter{}, models.Page{Size: 10}, models.Everything)
		if len(page.Data) != 2 {
			t.Fatalf("page holds %d messages, want 2", len(page.Data))
		}
		for _, got := range page.Data {
			want := dbtest.LoadMessage(t, s, got.ID)
			if got.ID == full.ID {
				var subscriber models.Subscriber
				if err := s.DB().First(&subscriber, "id = ?", sub.ID).Error; err != nil {
					t.Fatal(err)
				}
				want.Subscriber = &subscriber
			} else if got.ID != bare {
				t.Fatalf("unexpected message %s", got.ID)
			}
			if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(models.Message{}, "Template")); diff != "" {
				t.Errorf("message %s as a page reads it differs from GORM's (-gorm +page):\n%s", got.ID, diff)
			}
		}
		if got := page.Data[1]; got.ID != full.ID || got.Template == nil || got.Template.ID != tpl.ID || got.Subscriber == nil {
			t.Errorf("the full message lacks its template or subscriber: %+v", got)
		}
		if got := page.Data[0]; got.Subscriber != nil || got.Template != nil || got.DeliveredAt != nil || got.LastSeenDate != nil {
			t.Errorf("the bare message gained values it does not have: %+v", got)
		}
	})
}
