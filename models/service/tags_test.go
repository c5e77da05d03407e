package service_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"messages/models"
	"messages/models/dbtest"
	"messages/models/service"
	"messages/models/store"
)

// Tags resolve to the workflows of the caller's environment that carry them (a group: any
// of its tags; several groups: each), so a session's counts, pages and bulk changes by
// tags hold its own messages of those workflows, exactly, and nothing of another tenant.
func TestInboxByTags(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		a, b := dbtest.NewTenant(t, s, "tags-a"), dbtest.NewTenant(t, s, "tags-b")
		sub := a.Subscriber(t, "ada")
		plain, billing, both := a.Template(t, "plain"), a.Template(t, "billing"), a.Template(t, "both")
		theirs := b.Template(t, "billing")
		for id, tags := range map[string]string{billing.ID: `["billing"]`, both.ID: `["billing","urgent"]`, theirs.ID: `["billing"]`} {
			if err := s.DB().Exec("UPDATE templates SET tags = ? WHERE id = ?", tags, id).Error; err != nil {
				t.Fatal(err)
			}
		}
		for _, tpl := range []*models.Template{plain, billing, billing, both} {
			a.Message(t, sub, tpl, nil)
		}
		b.Message(t, b.Subscriber(t, "ada"), theirs, nil)
		svc := service.New(service.Options{Store: s})
		session := a.Caller
		session.SubscriberID = "ada"
		ctx := models.WithCaller(t.Context(), session)
		inApp := models.ChannelInApp

		got, err := svc.InboxCounts(ctx, nil, &inApp, []service.InboxFilter{
			{Tags: [][]string{{"billing"}}}, {Tags: [][]string{{"billing"}, {"urgent"}}}, {Tags: [][]string{{"urgent", "fixture"}}},
			{Tags: [][]string{{"nosuch"}}}, {State: models.Unread()}, {Tags: [][]string{{"billing"}}, State: models.StateFilter{Read: models.Bool(true)}},
		})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]int{3, 1, 2, 0, 4, 0}, got); diff != "" {
			t.Errorf("counts (-want +got):\n%s", diff)
		}
		page, _, err := svc.Inbox(ctx, service.InboxQuery{Channel: &inApp, Tags: [][]string{{"billing"}, {"urgent"}}})
		if err != nil || len(page) != 1 || page[0].TemplateID != both.ID {
			t.Fatalf("the page of billing and urgent: %v %v", page, err)
		}
		changed, err := svc.StateChange(ctx, models.StateTarget{SubscriberID: "ada", Channel: &inApp, Tags: [][]string{{"billing"}}},
			models.StateChange{Read: models.Bool(true)})
		if err != nil || changed.Changed != 3 {
			t.Fatalf("read by tag changed %v (%v), want 3", changed, err)
		}
		counts, err := s.CountStates(t.Context(), b.Env.ID, nil, nil)
		if err != nil || counts.Count(models.Unread()) != 1 {
			t.Errorf("the other tenant's unread: %d (%v), want 1", counts.Count(models.Unread()), err)
		}
		// dbtest's messages are created a second apart from dbtest.Base; A's are its first four.
		from, to := models.NewTime(dbtest.Base.Add(2*time.Second)), models.NewTime(dbtest.Base.Add(3*time.Second))
		ranged, err := svc.InboxCounts(ctx, nil, &inApp, []service.InboxFilter{{CreatedFrom: &from, CreatedTo: &to},
			{CreatedFrom: &from, Tags: [][]string{{"urgent"}}}, {CreatedTo: &from, State: models.StateFilter{Read: models.Bool(true)}}})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]int{2, 1, 1}, ranged); diff != "" {
			t.Errorf("counts by creation (-want +got):\n%s", diff)
		}
		inRange, _, err := svc.Inbox(ctx, service.InboxQuery{Channel: &inApp, CreatedFrom: &from, CreatedTo: &to})
		if err != nil || len(inRange) != 2 || !inRange[0].CreatedAt.Equal(to.Time) {
			t.Fatalf("the page created from %s to %s: %v %v", from, to, inRange, err)
		}
		// A group without tags is refused, not taken for no filter: nothing changes.
		for _, groups := range [][][]string{{{}}, {{"billing"}, {}}} {
			_, err := svc.StateChange(ctx, models.StateTarget{SubscriberID: "ada", Channel: &inApp, Tags: groups}, models.StateChange{Archived: models.Bool(true)})
			if models.ErrorCode(err) != models.EINVALID {
				t.Errorf("archive by the tags %q: %v, want invalid", groups, err)
			}
			if _, err := svc.InboxCounts(ctx, nil, &inApp, []service.InboxFilter{{Tags: groups}}); models.ErrorCode(err) != models.EINVALID {
				t.Errorf("count by the tags %q: %v, want invalid", groups, err)
			}
		}
		if counts, err := s.CountStates(t.Context(), a.Env.ID, nil, nil); err != nil || counts.Count(models.StateFilter{Archived: models.Bool(true)}) != 0 {
			t.Errorf("archived after refused archives: %d (%v), want 0", counts.Count(models.StateFilter{Archived: models.Bool(true)}), err)
		}
		many := make([]string, service.MaxTags+1)
		for i := range many {
			many[i] = strings.Repeat("t", i+1)
		}
		if _, err := svc.InboxCounts(ctx, nil, &inApp, []service.InboxFilter{{Tags: [][]string{many}}}); models.ErrorCode(err) != models.EINVALID {
			t.Errorf("%d tags: %v, want invalid", len(many), err)
		}
	})
}
