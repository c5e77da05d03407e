package dbtest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"gorm.io/gorm"

	"messages/models"
	"messages/models/store"
)

// Base is the creation time of the first fixture message; later ones are a second apart.
var Base = time.Date(2025, 3, 1, 8, 0, 0, 0, time.UTC)

// Tenant is one environment with a key, for tests that call the API as that tenant.
type Tenant struct {
	Env    *models.Environment
	Key    string
	Caller models.Caller
	store  *store.Store
	n      int
}

// NewTenant creates an environment, its organization and an API key.
func NewTenant(t testing.TB, s *store.Store, name string) *Tenant {
	t.Helper()
	ctx := context.Background()
	env, err := s.EnsureEnvironment(ctx, models.NewID(time.Now()), "", name)
	if err != nil {
		t.Fatal(err)
	}
	key, rec, err := s.CreateAPIKey(ctx, env.ID, name)
	if err != nil {
		t.Fatal(err)
	}
	return &Tenant{Env: env, Key: key, store: s,
		Caller: models.Caller{KeyID: rec.ID, EnvironmentID: env.ID, OrganizationID: env.OrganizationID}}
}

// Context returns a context authenticated as the tenant, for calling resolvers directly.
func (tn *Tenant) Context() context.Context {
	return models.WithCaller(context.Background(), tn.Caller)
}

// Subscriber inserts a subscriber with the given external id and every field set.
func (tn *Tenant) Subscriber(t testing.TB, externalID string) *models.Subscriber {
	t.Helper()
	online := true
	sub := &models.Subscriber{
		ID: models.NewID(time.Now()), FirstName: "Ada", LastName: "Lovelace", Email: externalID + "@example.com",
		Phone: "+15550100", Avatar: "https://example.com/a.png", Locale: "en-US",
		Channels: []models.SubscriberChannel{{ProviderID: "slack", IntegrationIdentifier: "slack-main", IntegrationID: models.NewID(time.Now()),
			Credentials: &models.ChannelCredentials{WebhookURL: "https://hooks.example.com/x", DeviceTokens: []string{"tok1"}}}},
		Topics: []string{"news"}, IsOnline: &online, LastOnlineAt: models.TimePtr(Base), Version: 3,
		Data: models.JSON(`{"plan":"pro","n":1}`), Timezone: "Europe/Paris", SubscriberID: externalID,
		OrganizationID: tn.Env.OrganizationID, EnvironmentID: tn.Env.ID,
		CreatedAt: models.NewTime(Base), UpdatedAt: models.NewTime(Base.Add(time.Hour)),
	}
	if err := tn.store.DB().Create(sub).Error; err != nil {
		t.Fatal(err)
	}
	return sub
}

// Template inserts a workflow template with every field set.
func (tn *Tenant) Template(t testing.TB, name string) *models.Template {
	t.Helper()
	yes, amount := true, 5.0
	tpl := &models.Template{
		ID: models.NewID(time.Now()), Name: name, Description: "fixture", Active: true,
		PreferenceSettings: &models.PreferenceSettings{Email: true, SMS: true, InApp: true, Chat: true, Push: true},
		Tags:               []string{"fixture"},
		Steps: []models.Step{{ID: "s1", UUID: "u1", Name: "in-app", Active: &yes, Template: models.JSON(`{"type":"in_app"}`),
			Filters:  []models.StepFilter{{IsNegated: new(bool), Type: "BOOLEAN", Value: "AND", Children: []models.FilterChild{{Field: "age", Value: "18", Operator: "LARGER", On: "subscriber"}}}},
			Metadata: &models.StepMetadata{Amount: &amount, Unit: "seconds", Type: "regular"},
			Variants: []models.StepVariant{{ID: "v1", Name: "variant"}}}},
		OrganizationID: tn.Env.OrganizationID, EnvironmentID: tn.Env.ID, CreatorID: models.NewID(time.Now()),
		Triggers:          []models.Trigger{{Type: "event", Identifier: name, Variables: []models.TriggerVariable{{Name: "first"}}}},
		NotificationGroup: &models.NotificationGroup{ID: models.NewID(time.Now()), Name: "General"},
		Data:              models.JSON(`{"k":"v"}`),
	}
	if err := tn.store.DB().Create(tpl).Error; err != nil {
		t.Fatal(err)
	}
	return tpl
}

// Message inserts a message of sub from tpl; edit, when given, adjusts it before insert.
// Successive messages are created one second apart, so later ones list first.
func (tn *Tenant) Message(t testing.TB, sub *models.Subscriber, tpl *models.Template, edit func(*models.Message)) *models.Message {
	t.Helper()
	tn.n++
	created := Base.Add(time.Duration(tn.n) * time.Second)
	m := &models.Message{
		ID: models.NewID(created), TemplateID: tpl.ID, EnvironmentID: tn.Env.ID, MessageTemplateID: models.NewID(created),
		OrganizationID: tn.Env.OrganizationID, NotificationID: models.NewID(created), SubscriberID: sub.ID,
		TemplateIdentifier: tpl.Name, CreatedAt: models.NewTime(created), DeliveredAt: []models.Time{models.NewTime(created)},
		Content:       []models.ContentBlock{{Type: "button", Content: "Open", URL: "https://example.com", Styles: &models.ContentStyles{TextAlign: "center"}}},
		TransactionID: fmt.Sprintf("txn-%d", tn.n), Subject: "Hello", Channel: models.ChannelInApp, Status: "sent",
		Title: "Title", FeedID: models.NewID(created),
		CTA: models.CTA{Type: "redirect", Data: &models.CTAData{URL: "/x"}, Action: &models.CTAAction{
			Status: models.ActionPending, Buttons: []models.CTAButton{{Type: models.ButtonPrimary, Content: "Accept"}, {Type: models.ButtonSecondary, Content: "Decline"}}}},
		Payload:   models.JSON(`{"b":2,"a":[1,2.50,"<&>"]}`),
		Overrides: models.JSON(`{}`),
	}
	if edit != nil {
		edit(m)
	}
	if err := tn.store.DB().Create(m).Error; err != nil {
		t.Fatal(err)
	}
	return m
}

// RawMessage inserts a message row of subscriberInternalID with plain SQL through db (the
// store's handle, or a transaction of the test's), as the platform's own workers do: no
// code of the store runs, so the row is stamped by the database alone. stamp, when set,
// is written as the row's change stamps (a row whose transaction committed late).
func RawMessage(t testing.TB, db *gorm.DB, env *models.Environment, subscriberInternalID string, stamp *time.Time) string {
	t.Helper()
	id := models.NewID(time.Now())
	cols, vals := "", ""
	args := []any{id, env.ID, env.OrganizationID, subscriberInternalID, time.Now().UTC()}
	if stamp != nil {
		cols, vals = ", inserted_at, changed_at", ", ?, ?"
		v := any(stamp.UTC())
		if db.Dialector.Name() == "sqlite" {
			v = stamp.UTC().Format("2006-01-02 15:04:05.000") // the triggers' layout
		}
		args = append(args, v, v)
	}
	err := db.Exec(`INSERT INTO messages (id, environment_id, organization_id, subscriber_id, created_at,
		transaction_id, subject, channel, email, phone, direct_webhook_url, title, cta, error_text, content`+cols+`)
		VALUES (?, ?, ?, ?, ?, 'raw-txn', 'Raw', 'in_app', '', '', '', 'Inserted by another writer',
		'{"type":"redirect","action":{"status":"pending","buttons":[{"type":"primary","content":"OK"}]}}', '', '[]'`+vals+`)`, args...).Error
	if err != nil {
		t.Fatal(err)
	}
	return id
}
