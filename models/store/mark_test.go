package store_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"messages/models"
	"messages/models/dbtest"
	"messages/models/store"
)

// markFixture is tenant A with sub-alice and sub-bob, one message each, and tenant B,
// whose subscriber shares the external id sub-alice.
type markFixture struct {
	a, b         *dbtest.Tenant
	alice, bob   *models.Subscriber
	tpl          *models.Template
	ofAlice      *models.Message
	ofBob        *models.Message
	ofOtherAlice *models.Message // tenant B's sub-alice
}

func newMarkFixture(t testing.TB, s *store.Store) *markFixture {
	t.Helper()
	f := &markFixture{a: dbtest.NewTenant(t, s, "a"), b: dbtest.NewTenant(t, s, "b")}
	f.alice, f.bob, f.tpl = f.a.Subscriber(t, "sub-alice"), f.a.Subscriber(t, "sub-bob"), f.a.Template(t, "tpl")
	f.ofAlice = f.a.Message(t, f.alice, f.tpl, nil)
	f.ofBob = f.a.Message(t, f.bob, f.tpl, nil)
	f.ofOtherAlice = f.b.Message(t, f.b.Subscriber(t, "sub-alice"), f.b.Template(t, "tpl"), nil)
	return f
}

func mark(t testing.TB, s *store.Store, environmentID string, a models.MarkAction) *models.Message {
	t.Helper()
	m, err := s.MarkMessageAction(context.Background(), environmentID, a)
	if err != nil {
		t.Fatalf("MarkMessageAction(%+v): %v", a, err)
	}
	return m
}

// fixtureButtons are the buttons every fixture message's action offers.
var fixtureButtons = []models.CTAButton{{Type: models.ButtonPrimary, Content: "Accept"}, {Type: models.ButtonSecondary, Content: "Decline"}}

func TestMarkMessageAction(t *testing.T) {
	type step struct {
		typ     models.ButtonType
		status  models.MessageActionStatus
		payload string // "" means no payload
	}
	tests := []struct {
		name  string
		edit  func(*models.Message)
		marks []step
		want  *models.CTAAction
	}{
		{
			name:  "mark201SetsStatusTypeAndPayload",
			marks: []step{{models.ButtonSecondary, models.ActionDone, `{"reason":"x","n":[1,2.50]}`}},
			want: &models.CTAAction{Status: models.ActionDone, Buttons: fixtureButtons,
				Result: &models.CTAResult{Type: models.ButtonSecondary, Payload: models.JSON(`{"reason":"x","n":[1,2.50]}`)}},
		},
		{
			name:  "mark201WithoutPayloadStoresNone",
			marks: []step{{models.ButtonPrimary, models.ActionDone, ""}},
			want: &models.CTAAction{Status: models.ActionDone, Buttons: fixtureButtons,
				Result: &models.CTAResult{Type: models.ButtonPrimary}},
		},
		{
			name:  "mark201KeepsPayloadWhenNil",
			marks: []step{{models.ButtonPrimary, models.ActionDone, `{"a":1}`}, {models.ButtonSecondary, models.ActionPending, ""}},
			want: &models.CTAAction{Status: models.ActionPending, Buttons: fixtureButtons,
				Result: &models.CTAResult{Type: models.ButtonSecondary, Payload: models.JSON(`{"a":1}`)}},
		},
		{
			name:  "mark201ReplacesPayload",
			marks: []step{{models.ButtonPrimary, models.ActionDone, `{"a":1}`}, {models.ButtonPrimary, models.ActionDone, `{"b":2}`}},
			want: &models.CTAAction{Status: models.ActionDone, Buttons: fixtureButtons,
				Result: &models.CTAResult{Type: models.ButtonPrimary, Payload: models.JSON(`{"b":2}`)}},
		},
		{
			name:  "mark201RepeatWithSameValuesSucceeds",
			marks: []step{{models.ButtonPrimary, models.ActionDone, `{"a":1}`}, {models.ButtonPrimary, models.ActionDone, `{"a":1}`}},
			want: &models.CTAAction{Status: models.ActionDone, Buttons: fixtureButtons,
				Result: &models.CTAResult{Type: models.ButtonPrimary, Payload: models.JSON(`{"a":1}`)}},
		},
		{
			name:  "mark201BackToPending",
			marks: []step{{models.ButtonPrimary, models.ActionDone, ""}, {models.ButtonPrimary, models.ActionPending, ""}},
			want: &models.CTAAction{Status: models.ActionPending, Buttons: fixtureButtons,
				Result: &models.CTAResult{Type: models.ButtonPrimary}},
		},
		{
			name: "mark201KeepsEarlierResultPayload",
			edit: func(m *models.Message) {
				m.CTA.Action.Result = &models.CTAResult{Type: models.ButtonPrimary, Payload: models.JSON(`{"old":true}`)}
			},
			marks: []step{{models.ButtonSecondary, models.ActionDone, ""}},
			want: &models.CTAAction{Status: models.ActionDone, Buttons: fixtureButtons,
				Result: &models.CTAResult{Type: models.ButtonSecondary, Payload: models.JSON(`{"old":true}`)}},
		},
		{
			name:  "mark201AddsMissingAction",
			edit:  func(m *models.Message) { m.CTA.Action = nil },
			marks: []step{{models.ButtonPrimary, models.ActionDone, `{"k":"v"}`}},
			want: &models.CTAAction{Status: models.ActionDone,
				Result: &models.CTAResult{Type: models.ButtonPrimary, Payload: models.JSON(`{"k":"v"}`)}},
		},
		{
			name:  "mark201AddsActionToEmptyCTA",
			edit:  func(m *models.Message) { m.CTA = models.CTA{} },
			marks: []step{{models.ButtonSecondary, models.ActionPending, ""}},
			want:  &models.CTAAction{Status: models.ActionPending, Result: &models.CTAResult{Type: models.ButtonSecondary}},
		},
	}
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		f := newMarkFixture(t, s)
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				msg := f.a.Message(t, f.alice, f.tpl, tt.edit)
				before := dbtest.LoadMessage(t, s, msg.ID)
				other := dbtest.LoadMessage(t, s, f.ofBob.ID)

				var got *models.Message
				for _, st := range tt.marks {
					got = mark(t, s, f.a.Env.ID, models.MarkAction{SubscriberID: "sub-alice", MessageID: msg.ID,
						Type: st.typ, Status: st.status, Payload: jsonOrNil(st.payload)})
				}

				// Only cta.action changes, to exactly what was asked.
				want := *before
				want.CTA.Action = tt.want
				after := dbtest.LoadMessage(t, s, msg.ID)
				if diff := cmp.Diff(&want, after, dbtest.TimeEqual, markColumns); diff != "" {
					t.Errorf("stored row (-want +got):\n%s", diff)
				}
				// The answer is the stored record, with its subscriber and template.
				after.Subscriber, after.Template = f.alice, f.tpl
				if diff := cmp.Diff(after, got, dbtest.TimeEqual, markColumns, dbtest.IgnoreStamps); diff != "" {
					t.Errorf("returned message (-stored +returned):\n%s", diff)
				}
				if diff := cmp.Diff(other, dbtest.LoadMessage(t, s, f.ofBob.ID), dbtest.TimeEqual, markColumns); diff != "" {
					t.Errorf("another message changed (-before +after):\n%s", diff)
				}
			})
		}
	})
}

func jsonOrNil(s string) models.JSON {
	if s == "" {
		return nil
	}
	return models.JSON(s)
}

// markColumns ignores where a mark is kept: what counts is the record's cta, which
// AfterFind assembles from them.
var markColumns = cmpopts.IgnoreFields(models.Message{}, "ActionStatus", "ActionResultType", "ActionResultPayload", "InsertedAt", "ChangedAt")

func TestMarkMessageActionNotFound(t *testing.T) {
	messageNotFound := &models.Error{Code: models.ENOTFOUND, Message: "message not found"}
	// An unknown subscriber answers like a missing message: one conditional UPDATE matches
	// neither, and the caller learns nothing more.
	subscriberNotFound := messageNotFound
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		f := newMarkFixture(t, s)
		tests := []struct {
			name       string
			subscriber string
			messageID  string
			want       *models.Error
		}{
			{"mark404UnknownMessage", "sub-alice", models.NewID(time.Now()), messageNotFound},
			{"mark404MalformedId", "sub-alice", "not-an-id", messageNotFound},
			{"mark404EmptyId", "sub-alice", "", messageNotFound},
			{"mark404UppercaseId", "sub-alice", strings.ToUpper(f.ofAlice.ID), messageNotFound},
			{"mark404IdWithTrailingSpace", "sub-alice", f.ofAlice.ID + " ", messageNotFound},
			{"mark404OtherSubscribersMessage", "sub-alice", f.ofBob.ID, messageNotFound},
			// Tenant B's message, named with a subscriber id that exists in both tenants:
			// the same answer as a message that does not exist.
			{"mark404OtherTenantsMessage", "sub-alice", f.ofOtherAlice.ID, messageNotFound},
			{"mark404UnknownSubscriber", "sub-nobody", f.ofAlice.ID, subscriberNotFound},
			{"mark404SubscriberOfOtherTenant", "sub-carol-b", f.ofAlice.ID, subscriberNotFound},
			{"mark404EmptySubscriber", "", f.ofAlice.ID, subscriberNotFound},
			{"mark404SubscriberIdWithTrailingSpace", "sub-alice ", f.ofAlice.ID, subscriberNotFound},
			{"mark404SubscriberIdInOtherCase", "SUB-ALICE", f.ofAlice.ID, subscriberNotFound},
		}
		f.b.Subscriber(t, "sub-carol-b")
		ids := []string{f.ofAlice.ID, f.ofBob.ID, f.ofOtherAlice.ID}
		before := map[string]*models.Message{}
		for _, id := range ids {
			before[id] = dbtest.LoadMessage(t, s, id)
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				m, err := s.MarkMessageAction(context.Background(), f.a.Env.ID, models.MarkAction{
					SubscriberID: tt.subscriber, MessageID: tt.messageID,
					Type: models.ButtonPrimary, Status: models.ActionDone, Payload: models.JSON(`{"x":1}`)})
				if m != nil {
					t.Errorf("got message %s, want none", m.ID)
				}
				if code := models.ErrorCode(err); code != models.ENOTFOUND {
					t.Errorf("ErrorCode(%v) = %q, want %q", err, code, models.ENOTFOUND)
				}
				var got *models.Error
				errors.As(err, &got)
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("error (-want +got):\n%s", diff)
				}
			})
		}
		for _, id := range ids {
			if diff := cmp.Diff(before[id], dbtest.LoadMessage(t, s, id), dbtest.TimeEqual); diff != "" {
				t.Errorf("message %s changed by a refused mark (-before +after):\n%s", id, diff)
			}
		}
	})
}

// TestMarkMessageActionConcurrent runs twenty marks with different values at once: each
// must succeed, and the stored action must be exactly one of them, never a mix.
func TestMarkMessageActionConcurrent(t *testing.T) {
	const n = 20
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		f := newMarkFixture(t, s)
		actions := make([]models.MarkAction, n)
		wants := make([]*models.CTAAction, n)
		for i := range n {
			a := models.MarkAction{SubscriberID: "sub-alice", MessageID: f.ofAlice.ID,
				Type: models.ButtonPrimary, Status: models.ActionPending, Payload: models.JSON(fmt.Sprintf(`{"i":%d}`, i))}
			if i%2 == 1 {
				a.Type = models.ButtonSecondary
			}
			if i%3 == 0 {
				a.Status = models.ActionDone
			}
			actions[i] = a
			wants[i] = &models.CTAAction{Status: a.Status, Buttons: fixtureButtons, Result: &models.CTAResult{Type: a.Type, Payload: a.Payload}}
		}
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				_, errs[i] = s.MarkMessageAction(context.Background(), f.a.Env.ID, actions[i])
			})
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("mark %d: %v", i, err)
			}
		}
		got := dbtest.LoadMessage(t, s, f.ofAlice.ID).CTA.Action
		for _, want := range wants {
			if cmp.Equal(want, got) {
				return
			}
		}
		t.Errorf("stored action %+v (result %+v) is none of the %d marks", got, got.Result, n)
	})
}
