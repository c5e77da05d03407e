package rest_test

import (
	"bytes"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"messages/models"
	"messages/models/dbtest"
	"messages/models/store"
	"messages/rest"
)

// actionURI is the path of POST .../actions/{type}, escaping the subscriber id.
func actionURI(subscriberID, messageID, typ string) string {
	return "/v1/subscribers/" + url.PathEscape(subscriberID) + "/messages/" + messageID + "/actions/" + typ
}

// withAction returns a copy of a decoded record whose cta.action is replaced by action.
func withAction(record map[string]any, action any) map[string]any {
	out := make(map[string]any, len(record))
	for k, v := range record {
		out[k] = v
	}
	cta := map[string]any{}
	for k, v := range record["cta"].(map[string]any) {
		cta[k] = v
	}
	cta["action"] = action
	out["cta"] = cta
	return out
}

// fixtureButtons are the buttons of every fixture message, as decoded JSON.
var fixtureButtons = []any{
	map[string]any{"type": "primary", "content": "Accept"},
	map[string]any{"type": "secondary", "content": "Decline"},
}

func TestMarkMessageAction(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		tn := dbtest.NewTenant(t, s, "a")
		tpl := tn.Template(t, "welcome")
		subs := map[string]*models.Subscriber{"alice": tn.Subscriber(t, "alice"), carol: tn.Subscriber(t, carol)}
		a := newAPI(t, s)
		tests := []struct {
			name        string
			subscriber  string
			edit        func(*models.Message)
			typ         string
			contentType string
			body        string
			wantAction  any
			wantBytes   string
		}{
			{
				name: "mark201DonePrimaryWithPayload", subscriber: "alice", typ: "primary",
				body: `{"status":"done","payload":{"z":1,"a":2.50,"h":"<&>"}}`,
				wantAction: map[string]any{"status": "done", "buttons": fixtureButtons,
					"result": map[string]any{"type": "primary", "payload": map[string]any{"z": 1.0, "a": 2.5, "h": "<&>"}}},
				wantBytes: `"payload":{"z":1,"a":2.50,"h":"<&>"}`,
			},
			{
				name: "mark201PendingSecondaryWithoutPayload", subscriber: "alice", typ: "secondary",
				body:       `{"status":"pending"}`,
				wantAction: map[string]any{"status": "pending", "buttons": fixtureButtons, "result": map[string]any{"type": "secondary"}},
			},
			{
				name: "mark201PayloadKeptWhenAbsent", subscriber: "alice", typ: "secondary",
				edit: func(m *models.Message) {
					m.CTA.Action.Result = &models.CTAResult{Type: models.ButtonPrimary, Payload: models.JSON(`{"kept":1.0}`)}
				},
				body: `{"status":"done"}`,
				wantAction: map[string]any{"status": "done", "buttons": fixtureButtons,
					"result": map[string]any{"type": "secondary", "payload": map[string]any{"kept": 1.0}}},
				wantBytes: `"payload":{"kept":1.0}`,
			},
			{
				name: "mark201PayloadKeptWhenNull", subscriber: "alice", typ: "primary",
				edit: func(m *models.Message) {
					m.CTA.Action.Result = &models.CTAResult{Type: models.ButtonSecondary, Payload: models.JSON(`{"kept":true}`)}
				},
				body: `{"status":"done","payload":null}`,
				wantAction: map[string]any{"status": "done", "buttons": fixtureButtons,
					"result": map[string]any{"type": "primary", "payload": map[string]any{"kept": true}}},
			},
			{
				name: "mark201PayloadReplaced", subscriber: "alice", typ: "primary",
				edit: func(m *models.Message) {
					m.CTA.Action.Result = &models.CTAResult{Type: models.ButtonSecondary, Payload: models.JSON(`{"old":true}`)}
				},
				body: `{"status":"done","payload":{}}`,
				wantAction: map[string]any{"status": "done", "buttons": fixtureButtons,
					"result": map[string]any{"type": "primary", "payload": map[string]any{}}},
				wantBytes: `"payload":{}`,
			},
			{
				name: "mark201MessageWithoutAction", subscriber: "alice", typ: "primary",
				edit: func(m *models.Message) { m.CTA = models.CTA{} },
				body: `{"status":"done","payload":{"k":"v"}}`,
				wantAction: map[string]any{"status": "done",
					"result": map[string]any{"type": "primary", "payload": map[string]any{"k": "v"}}},
			},
			{
				name: "mark201ContentTypeWithCharset", subscriber: "alice", typ: "primary",
				contentType: "application/json; charset=utf-8", body: `{"status":"done"}`,
				wantAction: map[string]any{"status": "done", "buttons": fixtureButtons, "result": map[string]any{"type": "primary"}},
			},
			{
				name: "mark201EscapedSubscriberId", subscriber: carol, typ: "secondary",
				body: ` {"payload":{"n":[1,2]},"status":"done"} `,
				wantAction: map[string]any{"status": "done", "buttons": fixtureButtons,
					"result": map[string]any{"type": "secondary", "payload": map[string]any{"n": []any{1.0, 2.0}}}},
			},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				m := tn.Message(t, subs[tt.subscriber], tpl, tt.edit)
				_, before := fetch(t, a, tn.Key, m.TransactionID)
				ct := tt.contentType
				if ct == "" {
					ct = "application/json"
				}
				res := a.do(t, http.MethodPost, actionURI(tt.subscriber, m.ID, tt.typ), "ApiKey "+tn.Key,
					http.Header{"Content-Type": {ct}}, strings.NewReader(tt.body))
				if res.status != http.StatusCreated {
					t.Fatalf("status %d, want 201; body %s", res.status, res.body)
				}
				noNulls(t, res.body)
				rawAfter, after := fetch(t, a, tn.Key, m.TransactionID)
				if diff := cmp.Diff(withAction(before, tt.wantAction), after); diff != "" {
					t.Errorf("stored message (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(after, decode(t, res.body)); diff != "" {
					t.Errorf("response is not the stored record (-GET +POST):\n%s", diff)
				}
				if !bytes.Equal(bytes.TrimSpace(res.body), rawAfter) {
					t.Errorf("response bytes differ from the listed record:\nPOST %s\nGET  %s", res.body, rawAfter)
				}
				for name, raw := range map[string][]byte{"POST response": res.body, "stored record (GET)": rawAfter} {
					if tt.wantBytes != "" && !bytes.Contains(raw, []byte(tt.wantBytes)) {
						t.Errorf("%s does not hold %s byte for byte:\n%s", name, tt.wantBytes, raw)
					}
				}
			})
		}

		t.Run("mark201IdempotencyKeyAccepted", func(t *testing.T) {
			m := tn.Message(t, subs["alice"], tpl, nil)
			res := a.do(t, http.MethodPost, actionURI("alice", m.ID, "primary"), "ApiKey "+tn.Key,
				http.Header{"Content-Type": {"application/json"}, "Idempotency-Key": {"7d1c0a4e"}}, strings.NewReader(`{"status":"done"}`))
			if res.status != http.StatusCreated {
				t.Fatalf("status %d, want 201; body %s", res.status, res.body)
			}
			lres := a.do(t, http.MethodGet, "/v1/messages", "ApiKey "+tn.Key, http.Header{"Idempotency-Key": {"7d1c0a4e"}}, nil)
			if lres.status != http.StatusOK {
				t.Fatalf("GET status %d, want 200; body %s", lres.status, lres.body)
			}
		})

		t.Run("mark201Twice", func(t *testing.T) {
			m := tn.Message(t, subs["alice"], tpl, nil)
			uri := actionURI("alice", m.ID, "primary")
			first := a.post(t, tn.Key, uri, `{"status":"done","payload":{"a":1}}`)
			second := a.post(t, tn.Key, uri, `{"status":"done","payload":{"a":1}}`)
			for i, res := range []response{first, second} {
				if res.status != http.StatusCreated {
					t.Fatalf("request %d: status %d, want 201; body %s", i+1, res.status, res.body)
				}
			}
			if diff := cmp.Diff(decode(t, first.body), decode(t, second.body)); diff != "" {
				t.Errorf("second response differs (-first +second):\n%s", diff)
			}
		})
	})
}

func TestMarkMessageActionRefused(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		tn, other := dbtest.NewTenant(t, s, "a"), dbtest.NewTenant(t, s, "b")
		tpl := tn.Template(t, "welcome")
		alice, bob := tn.Subscriber(t, "alice"), tn.Subscriber(t, "bob")
		other.Subscriber(t, "alice")
		msg := tn.Message(t, alice, tpl, nil)
		bobs := tn.Message(t, bob, tpl, nil)
		a := newAPI(t, s)
		_, before := fetch(t, a, tn.Key, msg.TransactionID)
		_, bobsBefore := fetch(t, a, tn.Key, bobs.TransactionID)

		// absent: the errors entry has no value key; unchecked: any value but null.
		const absent, unchecked = "<absent>", "<unchecked>"
		huge := `{"status":"done","payload":{"x":"` + strings.Repeat("a", rest.MaxBodyBytes) + `"}}`
		tests := []struct {
			name        string
			key         string
			uri         string
			contentType string
			body        string
			status      int
			field       string
			value       any
		}{
			{name: "mark422TypeTertiary", uri: actionURI("alice", msg.ID, "tertiary"), body: `{"status":"done"}`, status: 422, field: "type", value: "tertiary"},
			{name: "mark422TypeCase", uri: actionURI("alice", msg.ID, "Primary"), body: `{"status":"done"}`, status: 422, field: "type", value: "Primary"},
			{name: "mark422StatusMissing", uri: actionURI("alice", msg.ID, "primary"), body: `{"payload":{}}`, status: 422, field: "status", value: absent},
			{name: "mark422StatusNull", uri: actionURI("alice", msg.ID, "primary"), body: `{"status":null}`, status: 422, field: "status", value: absent},
			{name: "mark422StatusMaybe", uri: actionURI("alice", msg.ID, "primary"), body: `{"status":"maybe"}`, status: 422, field: "status", value: "maybe"},
			{name: "mark422StatusCase", uri: actionURI("alice", msg.ID, "primary"), body: `{"status":"DONE"}`, status: 422, field: "status", value: "DONE"},
			{name: "mark422StatusEmpty", uri: actionURI("alice", msg.ID, "primary"), body: `{"status":""}`, status: 422, field: "status", value: unchecked},
			{name: "mark422StatusNumber", uri: actionURI("alice", msg.ID, "primary"), body: `{"status":5}`, status: 422, field: "status", value: 5.0},
			{name: "mark422StatusObject", uri: actionURI("alice", msg.ID, "primary"), body: `{"status":{"v":"done"}}`, status: 422, field: "status", value: map[string]any{"v": "done"}},
			{name: "mark422PayloadArray", uri: actionURI("alice", msg.ID, "primary"), body: `{"status":"done","payload":[1]}`, status: 422, field: "payload", value: []any{1.0}},
			{name: "mark422PayloadString", uri: actionURI("alice", msg.ID, "primary"), body: `{"status":"done","payload":"x"}`, status: 422, field: "payload", value: "x"},
			{name: "mark422PayloadNumber", uri: actionURI("alice", msg.ID, "primary"), body: `{"status":"done","payload":3}`, status: 422, field: "payload", value: 3.0},
			{name: "mark422PayloadBoolean", uri: actionURI("alice", msg.ID, "primary"), body: `{"status":"done","payload":true}`, status: 422, field: "payload", value: true},
			{name: "mark400MalformedJSON", uri: actionURI("alice", msg.ID, "primary"), body: `{`, status: 400},
			{name: "mark400MalformedPayload", uri: actionURI("alice", msg.ID, "primary"), body: `{"status":"done","payload":{]}`, status: 400},
			{name: "mark400Array", uri: actionURI("alice", msg.ID, "primary"), body: `[]`, status: 400},
			{name: "mark400String", uri: actionURI("alice", msg.ID, "primary"), body: `"done"`, status: 400},
			{name: "mark400Null", uri: actionURI("alice", msg.ID, "primary"), body: `null`, status: 400},
			{name: "mark400Empty", uri: actionURI("alice", msg.ID, "primary"), body: ``, status: 400},
			{name: "mark400TrailingData", uri: actionURI("alice", msg.ID, "primary"), body: `{"status":"done"} {}`, status: 400},
			{name: "mark415TextPlain", uri: actionURI("alice", msg.ID, "primary"), contentType: "text/plain", body: `{"status":"done"}`, status: 415},
			{name: "mark415Form", uri: actionURI("alice", msg.ID, "primary"), contentType: "application/x-www-form-urlencoded", body: `status=done`, status: 415},
			{name: "mark413TooLarge", uri: actionURI("alice", msg.ID, "primary"), body: huge, status: 413},
			{name: "mark404OtherSubscriber", uri: actionURI("alice", bobs.ID, "primary"), body: `{"status":"done"}`, status: 404},
			{name: "mark404UnknownMessage", uri: actionURI("alice", "67c2be400000000000000abc", "primary"), body: `{"status":"done"}`, status: 404},
			{name: "mark404MalformedId", uri: actionURI("alice", "not-an-id", "primary"), body: `{"status":"done"}`, status: 404},
			{name: "mark404UppercaseId", uri: actionURI("alice", strings.ToUpper(msg.ID), "primary"), body: `{"status":"done"}`, status: 404},
			{name: "mark404UnknownSubscriber", uri: actionURI("nobody", msg.ID, "primary"), body: `{"status":"done"}`, status: 404},
			{name: "mark404InternalSubscriberId", uri: actionURI(alice.ID, msg.ID, "primary"), body: `{"status":"done"}`, status: 404},
			{name: "mark404OtherTenant", key: other.Key, uri: actionURI("alice", msg.ID, "primary"), body: `{"status":"done"}`, status: 404},
		}
		notFound := map[string]string{}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				key, ct := tt.key, tt.contentType
				if key == "" {
					key = tn.Key
				}
				if ct == "" {
					ct = "application/json"
				}
				res := a.do(t, http.MethodPost, tt.uri, "ApiKey "+key, http.Header{"Content-Type": {ct}}, strings.NewReader(tt.body))
				body := errorBody(t, res, tt.status, tt.uri)
				if tt.status == http.StatusUnprocessableEntity {
					want := map[string]any{"messages": []any{body["message"]}}
					switch tt.value {
					case absent:
					case unchecked:
						if errs, ok := body["errors"].(map[string]any); ok {
							if e, ok := errs[tt.field].(map[string]any); ok {
								if v, ok := e["value"]; ok {
									want["value"] = v
								}
							}
						}
					default:
						want["value"] = tt.value
					}
					if diff := cmp.Diff(map[string]any{tt.field: want}, body["errors"]); diff != "" {
						t.Errorf("errors (-want +got):\n%s", diff)
					}
				}
				if tt.status == http.StatusNotFound {
					notFound[tt.name], _ = body["message"].(string)
				}
				for name, m := range map[string]struct {
					transaction string
					want        map[string]any
				}{"the message": {msg.TransactionID, before}, "bob's message": {bobs.TransactionID, bobsBefore}} {
					if _, after := fetch(t, a, tn.Key, m.transaction); !cmp.Equal(m.want, after) {
						t.Errorf("%s changed (-before +after):\n%s", name, cmp.Diff(m.want, after))
					}
				}
			})
		}
		t.Run("mark404SameMessageForForeignAndMissing", func(t *testing.T) {
			want := notFound["mark404UnknownMessage"]
			for _, name := range []string{"mark404OtherSubscriber", "mark404MalformedId", "mark404UppercaseId", "mark404OtherTenant"} {
				if notFound[name] != want {
					t.Errorf("%s: message %q, want %q as for a missing message", name, notFound[name], want)
				}
			}
		})
	})
}
