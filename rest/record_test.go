package rest_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"messages/models"
	"messages/models/dbtest"
	"messages/models/store"
)

// record is one tenant's fully populated message, a bare one without a template, and a
// bare one with a bare template, for checking the wire shape of the record.
type record struct {
	tn                *dbtest.Tenant
	sub, bareSub      *models.Subscriber
	tpl, bareTpl      *models.Template
	full, bare, bareT *models.Message
}

func newRecord(t *testing.T, s *store.Store) *record {
	t.Helper()
	r := &record{tn: dbtest.NewTenant(t, s, "a")}
	env := r.tn.Env
	yes, no, five, two := true, false, 5.0, 2.5
	r.sub = &models.Subscriber{
		ID: models.NewID(time.Now()), FirstName: "Ada", LastName: "Lovelace", Email: "ada@example.com",
		Phone: "+15550100", Avatar: "https://example.com/a.png", Locale: "en-US",
		Channels: []models.SubscriberChannel{{ProviderID: "slack", IntegrationIdentifier: "slack-main", IntegrationID: "67c2be400000000000000aaa",
			Credentials: &models.ChannelCredentials{WebhookURL: "https://hooks.example.com/x", Channel: "#general", DeviceTokens: []string{"tok1", "tok2"},
				AlertUID: "alert-1", Title: "Alerts", ImageURL: "https://example.com/i.png", State: "on", ExternalURL: "https://example.com/ext"}}},
		Topics: []string{"news", "billing"}, IsOnline: &no, LastOnlineAt: models.TimePtr(dbtest.Base.Add(-time.Minute)), Version: 3,
		Data: models.JSON(`{"plan":"pro","n":1.50,"html":"<b>&</b>"}`), Timezone: "Europe/Paris", SubscriberID: "ada",
		OrganizationID: env.OrganizationID, EnvironmentID: env.ID, Deleted: false,
		CreatedAt: models.NewTime(dbtest.Base), UpdatedAt: models.NewTime(dbtest.Base.Add(time.Hour + 7*time.Millisecond)),
	}
	r.bareSub = &models.Subscriber{ID: models.NewID(time.Now()), SubscriberID: "bare", OrganizationID: env.OrganizationID,
		EnvironmentID: env.ID, CreatedAt: models.NewTime(dbtest.Base), UpdatedAt: models.NewTime(dbtest.Base)}
	variant := models.StepVariant{ID: "v1", UUID: "uuid-v1", Name: "variant", TemplateID: "67c2be400000000000000bbb", Active: &no, ShouldStopOnFail: &yes,
		Template: models.JSON(`{"type":"in_app"}`), ParentID: "s1",
		Filters:       []models.StepFilter{{IsNegated: &yes, Type: "BOOLEAN", Value: "OR", Children: []models.FilterChild{{Field: "plan", Value: "pro", Operator: "EQUAL", On: "payload"}}}},
		Metadata:      &models.StepMetadata{Amount: &two, Unit: "minutes", DigestKey: "k", Type: "backoff", Backoff: &no, BackoffAmount: &five, BackoffUnit: "hours", UpdateMode: &yes},
		ReplyCallback: &models.ReplyCallback{Active: &no, URL: "https://example.com/v"}}
	r.tpl = &models.Template{
		ID: models.NewID(time.Now()), Name: "welcome", Description: "Welcome flow", Active: true, Draft: true, Critical: true,
		PreferenceSettings: &models.PreferenceSettings{Email: true, SMS: false, InApp: true, Chat: false, Push: true},
		Tags:               []string{"onboarding"},
		Steps: []models.Step{{ID: "s1", UUID: "uuid-1", Name: "in-app", TemplateID: "67c2be400000000000000ccc", Active: &yes, ShouldStopOnFail: &no,
			Template: models.JSON(`{"content":"Hi {{name}}"}`), ParentID: "s0",
			Filters:       []models.StepFilter{{IsNegated: &no, Type: "BOOLEAN", Value: "AND", Children: []models.FilterChild{{Field: "age", Value: "18", Operator: "LARGER", On: "subscriber"}}}},
			Metadata:      &models.StepMetadata{Amount: &five, Unit: "seconds", DigestKey: "postId", Type: "regular", Backoff: &yes, BackoffAmount: &two, BackoffUnit: "seconds", UpdateMode: &no},
			ReplyCallback: &models.ReplyCallback{Active: &yes, URL: "https://example.com/reply"},
			Variants:      []models.StepVariant{variant}}},
		OrganizationID: env.OrganizationID, CreatorID: "67c2be400000000000000ddd", EnvironmentID: env.ID,
		Triggers: []models.Trigger{{Type: "event", Identifier: "welcome", Variables: []models.TriggerVariable{{Name: "first"}},
			SubscriberVariables: []models.TriggerVariable{{Name: "email"}}}},
		NotificationGroupID: "67c2be400000000000000eee", ParentID: "67c2be400000000000000fff", Deleted: true,
		DeletedAt: ptr("2025-03-01T10:00:00.000Z"), DeletedBy: "admin",
		NotificationGroup: &models.NotificationGroup{ID: "67c2be400000000000000eee", Name: "General", EnvironmentID: env.ID,
			OrganizationID: env.OrganizationID, ParentID: "67c2be400000000000000111"},
		Data: models.JSON(`{"k":"v"}`), WorkflowIntegrationStatus: models.JSON(`{"hasActiveIntegrations":true}`),
	}
	r.bareTpl = &models.Template{ID: models.NewID(time.Now()), Name: "bare", OrganizationID: env.OrganizationID, EnvironmentID: env.ID}
	for _, v := range []any{r.sub, r.bareSub, r.tpl, r.bareTpl} {
		if err := s.DB().Create(v).Error; err != nil {
			t.Fatal(err)
		}
	}
	r.full = r.tn.Message(t, r.sub, r.tpl, func(m *models.Message) {
		m.DeliveredAt = []models.Time{models.NewTime(dbtest.Base.Add(time.Second)), models.NewTime(dbtest.Base.Add(3 * time.Second))}
		m.LastSeenDate = models.TimePtr(dbtest.Base.Add(1500 * time.Millisecond))
		m.LastReadDate = models.TimePtr(dbtest.Base.Add(2 * time.Second))
		m.Read, m.Seen = true, true
		m.SnoozedUntil = models.TimePtr(dbtest.Base.Add(24 * time.Hour))
		m.Email, m.Phone, m.DirectWebhookURL, m.ProviderID = "ada@example.com", "+15550100", "https://hooks.example.com/d", "sendgrid"
		m.DeviceTokens = []string{"d1", "d2"}
		m.ErrorID, m.ErrorText = "mail_bounced", "mailbox full"
		m.CTA.Action.Buttons[0].ResultContent = "Accepted"
		m.CTA.Action.Result = &models.CTAResult{Payload: models.JSON(`{"z":1,"a":2.50}`), Type: models.ButtonSecondary}
		m.Overrides = models.JSON(`{"email":{"from":"<a@b>"},"ratio":1.0}`)
	})
	r.bare = r.tn.Message(t, r.bareSub, r.bareTpl, func(m *models.Message) {
		*m = models.Message{ID: m.ID, EnvironmentID: env.ID, OrganizationID: env.OrganizationID, NotificationID: m.NotificationID,
			SubscriberID: r.bareSub.ID, CreatedAt: m.CreatedAt, TransactionID: "txn-bare", Channel: models.ChannelSMS, Status: "sent"}
	})
	r.bareT = r.tn.Message(t, r.bareSub, r.bareTpl, func(m *models.Message) {
		*m = models.Message{ID: m.ID, TemplateID: r.bareTpl.ID, EnvironmentID: env.ID, OrganizationID: env.OrganizationID,
			NotificationID: m.NotificationID, SubscriberID: r.bareSub.ID, CreatedAt: m.CreatedAt, TransactionID: "txn-bare-t",
			Channel: models.ChannelPush, Status: "error", Content: []models.ContentBlock{{Type: "text"}},
			CTA: models.CTA{Action: &models.CTAAction{Buttons: []models.CTAButton{{Type: models.ButtonPrimary}}}}}
	})
	return r
}

// wantJSON renders a JSON template, replacing {name} by the given values, and decodes it.
func wantJSON(t testing.TB, template string, values map[string]string) any {
	t.Helper()
	var pairs []string
	for k, v := range values {
		pairs = append(pairs, "{"+k+"}", v)
	}
	var v any
	if err := json.Unmarshal([]byte(strings.NewReplacer(pairs...).Replace(template)), &v); err != nil {
		t.Fatalf("want template: %v", err)
	}
	return v
}

// fetch GETs the one message with the given transaction id and returns its raw and
// decoded forms.
func fetch(t testing.TB, a *api, key, transactionID string) ([]byte, map[string]any) {
	t.Helper()
	uri := "/v1/messages?transactionId=" + url.QueryEscape(transactionID)
	res := a.get(t, key, uri)
	if res.status != http.StatusOK {
		t.Fatalf("GET %s: status %d; body %s", uri, res.status, res.body)
	}
	noNulls(t, res.body)
	var body struct {
		Data []json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(res.body, &body); err != nil {
		t.Fatal(err)
	}
	if len(body.Data) != 1 {
		t.Fatalf("GET %s: %d messages, want 1", uri, len(body.Data))
	}
	return body.Data[0], decode(t, body.Data[0])
}

// fetchID GETs the caller's messages and returns the decoded one with the given _id.
func fetchID(t testing.TB, a *api, key, id string) map[string]any {
	t.Helper()
	res := a.get(t, key, "/v1/messages?limit=1000")
	if res.status != http.StatusOK {
		t.Fatalf("GET: status %d; body %s", res.status, res.body)
	}
	for _, m := range decode(t, res.body)["data"].([]any) {
		if m := m.(map[string]any); m["_id"] == id {
			return m
		}
	}
	t.Fatalf("message %s is not listed", id)
	return nil
}

const fullRecord = `{
  "_id": "{id}",
  "_templateId": "{tpl}",
  "_environmentId": "{env}",
  "_messageTemplateId": "{messageTemplate}",
  "_organizationId": "{org}",
  "_notificationId": "{notification}",
  "_subscriberId": "{sub}",
  "subscriber": {
    "_id": "{sub}",
    "firstName": "Ada", "lastName": "Lovelace", "email": "ada@example.com", "phone": "+15550100",
    "avatar": "https://example.com/a.png", "locale": "en-US",
    "channels": [{
      "providerId": "slack", "integrationIdentifier": "slack-main", "_integrationId": "67c2be400000000000000aaa",
      "credentials": {
        "webhookUrl": "https://hooks.example.com/x", "channel": "#general", "alertUid": "alert-1", "title": "Alerts",
        "imageUrl": "https://example.com/i.png", "state": "on", "externalUrl": "https://example.com/ext",
        "deviceTokens": ["tok1", "tok2"]
      }
    }],
    "topics": ["news", "billing"],
    "isOnline": false,
    "lastOnlineAt": "2025-03-01T07:59:00.000Z",
    "__v": 3,
    "data": {"plan": "pro", "n": 1.5, "html": "<b>&</b>"},
    "timezone": "Europe/Paris",
    "subscriberId": "ada",
    "_organizationId": "{org}",
    "_environmentId": "{env}",
    "deleted": false,
    "createdAt": "2025-03-01T08:00:00.000Z",
    "updatedAt": "2025-03-01T09:00:00.007Z"
  },
  "template": {
    "_id": "{tpl}", "name": "welcome", "description": "Welcome flow",
    "active": true, "draft": true, "critical": true,
    "preferenceSettings": {"email": true, "sms": false, "in_app": true, "chat": false, "push": true},
    "tags": ["onboarding"],
    "steps": [{
      "_id": "s1", "uuid": "uuid-1", "name": "in-app", "_templateId": "67c2be400000000000000ccc", "_parentId": "s0",
      "active": true, "shouldStopOnFail": false,
      "template": {"content": "Hi {{name}}"},
      "filters": [{"isNegated": false, "type": "BOOLEAN", "value": "AND",
        "children": [{"field": "age", "value": "18", "operator": "LARGER", "on": "subscriber"}]}],
      "metadata": {"amount": 5, "unit": "seconds", "digestKey": "postId", "type": "regular",
        "backoff": true, "backoffAmount": 2.5, "backoffUnit": "seconds", "updateMode": false},
      "replyCallback": {"active": true, "url": "https://example.com/reply"},
      "variants": [{
        "_id": "v1", "uuid": "uuid-v1", "name": "variant", "_templateId": "67c2be400000000000000bbb", "_parentId": "s1",
        "active": false, "shouldStopOnFail": true,
        "template": {"type": "in_app"},
        "filters": [{"isNegated": true, "type": "BOOLEAN", "value": "OR",
          "children": [{"field": "plan", "value": "pro", "operator": "EQUAL", "on": "payload"}]}],
        "metadata": {"amount": 2.5, "unit": "minutes", "digestKey": "k", "type": "backoff",
          "backoff": false, "backoffAmount": 5, "backoffUnit": "hours", "updateMode": true},
        "replyCallback": {"active": false, "url": "https://example.com/v"}
      }]
    }],
    "_organizationId": "{org}",
    "_creatorId": "67c2be400000000000000ddd",
    "_environmentId": "{env}",
    "triggers": [{"type": "event", "identifier": "welcome", "variables": [{"name": "first"}], "subscriberVariables": [{"name": "email"}]}],
    "_notificationGroupId": "67c2be400000000000000eee",
    "_parentId": "67c2be400000000000000fff",
    "deleted": true,
    "deletedAt": "2025-03-01T10:00:00.000Z",
    "deletedBy": "admin",
    "notificationGroup": {"_id": "67c2be400000000000000eee", "name": "General", "_environmentId": "{env}",
      "_organizationId": "{org}", "_parentId": "67c2be400000000000000111"},
    "data": {"k": "v"},
    "workflowIntegrationStatus": {"hasActiveIntegrations": true}
  },
  "templateIdentifier": "welcome",
  "createdAt": "2025-03-01T08:00:01.000Z",
  "deliveredAt": ["2025-03-01T08:00:01.000Z", "2025-03-01T08:00:03.000Z"],
  "lastSeenDate": "2025-03-01T08:00:01.500Z",
  "lastReadDate": "2025-03-01T08:00:02.000Z",
  "content": [{"type": "button", "content": "Open", "url": "https://example.com", "styles": {"textAlign": "center"}}],
  "transactionId": "txn-1",
  "subject": "Hello",
  "channel": "in_app",
  "read": true,
  "seen": true,
  "snoozedUntil": "2025-03-02T08:00:00.000Z",
  "email": "ada@example.com",
  "phone": "+15550100",
  "directWebhookUrl": "https://hooks.example.com/d",
  "providerId": "sendgrid",
  "deviceTokens": ["d1", "d2"],
  "title": "Title",
  "cta": {
    "type": "redirect",
    "data": {"url": "/x"},
    "action": {
      "status": "pending",
      "buttons": [{"type": "primary", "content": "Accept", "resultContent": "Accepted"}, {"type": "secondary", "content": "Decline"}],
      "result": {"payload": {"z": 1, "a": 2.5}, "type": "secondary"}
    }
  },
  "_feedId": "{feed}",
  "status": "sent",
  "errorId": "mail_bounced",
  "errorText": "mailbox full",
  "payload": {"b": 2, "a": [1, 2.5, "<&>"]},
  "overrides": {"email": {"from": "<a@b>"}, "ratio": 1.0}
}`

const bareSubscriber = `{
    "_id": "{sub}", "__v": 0, "subscriberId": "bare", "_organizationId": "{org}", "_environmentId": "{env}",
    "deleted": false, "createdAt": "2025-03-01T08:00:00.000Z", "updatedAt": "2025-03-01T08:00:00.000Z"
  }`

const bareRecord = `{
  "_id": "{id}", "_environmentId": "{env}", "_organizationId": "{org}", "_notificationId": "{notification}",
  "_subscriberId": "{sub}",
  "subscriber": ` + bareSubscriber + `,
  "createdAt": "2025-03-01T08:00:02.000Z",
  "content": [],
  "transactionId": "txn-bare",
  "channel": "sms",
  "read": false,
  "seen": false,
  "cta": {},
  "status": "sent"
}`

const bareTemplateRecord = `{
  "_id": "{id}", "_templateId": "{tpl}", "_environmentId": "{env}", "_organizationId": "{org}",
  "_notificationId": "{notification}", "_subscriberId": "{sub}",
  "subscriber": ` + bareSubscriber + `,
  "template": {
    "_id": "{tpl}", "name": "bare", "description": "", "active": false, "draft": false, "preferenceSettings": {},
    "critical": false, "tags": [], "steps": [], "_organizationId": "{org}", "_creatorId": "", "_environmentId": "{env}",
    "triggers": [], "_notificationGroupId": "", "deleted": false, "deletedAt": "", "deletedBy": ""
  },
  "createdAt": "2025-03-01T08:00:03.000Z",
  "content": [{"type": "text", "content": ""}],
  "transactionId": "txn-bare-t",
  "channel": "push",
  "read": false,
  "seen": false,
  "cta": {"action": {"buttons": [{"type": "primary", "content": ""}]}},
  "status": "error"
}`

func TestMessageRecord(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		r := newRecord(t, s)
		a := newAPI(t, s)
		env := map[string]string{"env": r.tn.Env.ID, "org": r.tn.Env.OrganizationID}
		with := func(m *models.Message, sub, tpl string) map[string]string {
			v := map[string]string{"id": m.ID, "sub": sub, "tpl": tpl, "notification": m.NotificationID,
				"messageTemplate": m.MessageTemplateID, "feed": m.FeedID}
			for k, e := range env {
				v[k] = e
			}
			return v
		}
		tests := []struct {
			name        string
			transaction string
			want        any
		}{
			{"list200FullRecord", "txn-1", wantJSON(t, fullRecord, with(r.full, r.sub.ID, r.tpl.ID))},
			{"list200BareRecordOmitsOptional", "txn-bare", wantJSON(t, bareRecord, with(r.bare, r.bareSub.ID, ""))},
			{"list200BareTemplateOmitsOptional", "txn-bare-t", wantJSON(t, bareTemplateRecord, with(r.bareT, r.bareSub.ID, r.bareTpl.ID))},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				_, got := fetch(t, a, r.tn.Key, tt.transaction)
				if diff := cmp.Diff(tt.want, any(got)); diff != "" {
					t.Errorf("record (-want +got):\n%s", diff)
				}
			})
		}
	})
}

func TestMessageRecordFreeFormBytes(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		r := newRecord(t, s)
		a := newAPI(t, s)
		raw, _ := fetch(t, a, r.tn.Key, "txn-1")
		for _, want := range []string{
			`"payload":{"b":2,"a":[1,2.50,"<&>"]}`,
			`"overrides":{"email":{"from":"<a@b>"},"ratio":1.0}`,
			`"data":{"plan":"pro","n":1.50,"html":"<b>&</b>"}`,
			`"data":{"k":"v"}`,
			`"workflowIntegrationStatus":{"hasActiveIntegrations":true}`,
			`"result":{"payload":{"z":1,"a":2.50},"type":"secondary"}`,
		} {
			if !bytes.Contains(raw, []byte(want)) {
				t.Errorf("record does not hold %s byte for byte:\n%s", want, raw)
			}
		}
		for _, escaped := range []string{`\u003c`, `\u003e`, `\u0026`} {
			if bytes.Contains(raw, []byte(escaped)) {
				t.Errorf("record HTML-escapes %s:\n%s", escaped, raw)
			}
		}
	})
}

func TestMessageRecordKeyOrder(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		r := newRecord(t, s)
		a := newAPI(t, s)
		raw, _ := fetch(t, a, r.tn.Key, "txn-1")
		want := []string{"_id", "_templateId", "_environmentId", "_messageTemplateId", "_organizationId", "_notificationId",
			"_subscriberId", "subscriber", "template", "templateIdentifier", "createdAt", "deliveredAt", "lastSeenDate",
			"lastReadDate", "content", "transactionId", "subject", "channel", "read", "seen", "snoozedUntil", "email",
			"phone", "directWebhookUrl", "providerId", "deviceTokens", "title", "cta", "_feedId", "status", "errorId",
			"errorText", "payload", "overrides"}
		if diff := cmp.Diff(want, topKeys(t, raw)); diff != "" {
			t.Errorf("record keys in document order (-want +got):\n%s", diff)
		}
	})
}

// ptr returns a pointer to v, for optional fields of records built in tests.
func ptr[T any](v T) *T { return &v }
