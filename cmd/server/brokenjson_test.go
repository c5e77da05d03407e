package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/schema"

	"messages/graph/gqlclient"
	"messages/models"
	"messages/models/dbtest"
)

// brokenText is what another writer leaves in the JSON columns of the broken rows: never
// in an answer, never in the log.
const brokenText = "xxx-not-json-b7e1"

// fixturePayload is the payload of every fixture message (dbtest.Tenant.Message).
const fixturePayload = `{"b":2,"a":[1,2.50,"<&>"]}`

// jsonColumnsOf are the columns of a record GORM stores as JSON text.
func jsonColumnsOf(t *testing.T, record any) []string {
	t.Helper()
	sch, err := schema.Parse(record, &sync.Map{}, schema.NamingStrategy{})
	if err != nil {
		t.Fatal(err)
	}
	var columns []string
	for _, f := range sch.Fields {
		if f.DBName != "" && (f.Serializer != nil || f.FieldType == reflect.TypeFor[models.JSON]()) {
			columns = append(columns, f.DBName)
		}
	}
	slices.Sort(columns)
	return columns
}

// breakRow stores brokenText in every JSON column of the row id of table, with plain SQL
// through db, as another program would.
func breakRow(t *testing.T, db *gorm.DB, table, id string, columns []string) {
	t.Helper()
	var set []string
	for _, c := range columns {
		set = append(set, c+" = '"+brokenText+"'")
	}
	if err := db.Exec("UPDATE "+table+" SET "+strings.Join(set, ", ")+" WHERE id = ?", id).Error; err != nil {
		t.Fatal(err)
	}
}

// brokenAnswer checks one answer of an API: valid JSON as a whole (parsed with
// encoding/json), every form of a broken message in it without payload, overrides,
// delivery times or device tokens (null or left out), every form of the broken
// subscriber without data, and every form of the intact message with its payload. It
// returns how many forms of the broken messages and of the intact one it found.
func brokenAnswer(t *testing.T, what string, body []byte, brokenIDs []string, intactID, subscriberRowID string) (broken, intact int) {
	t.Helper()
	if strings.Contains(string(body), brokenText) {
		t.Errorf("%s: the answer holds the broken text:\n%.2000s", what, body)
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Errorf("%s: the answer is not JSON (%v):\n%.2000s", what, err, body)
		return 0, 0
	}
	none := func(o map[string]any, keys ...string) {
		for _, k := range keys {
			if x, ok := o[k]; ok && x != nil {
				t.Errorf("%s: %s of %v is %v, want null or left out", what, k, o["_id"], x)
			}
		}
	}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			id, _ := x["_id"].(string)
			if id == "" {
				id, _ = x["id"].(string)
			}
			switch {
			case slices.Contains(brokenIDs, id):
				broken++
				none(x, "payload", "overrides", "deliveredAt", "deviceTokens")
			case id == intactID:
				intact++
				if p, ok := x["payload"]; ok {
					b, _ := json.Marshal(p)
					if want, _ := json.Marshal(json.RawMessage(fixturePayload)); !jsonEqual(t, b, want) {
						t.Errorf("%s: the intact message's payload is %s, want %s", what, b, fixturePayload)
					}
				}
			case id == subscriberRowID:
				none(x, "data", "channels", "topics")
			}
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	return broken, intact
}

// brokenSelection is what the GraphQL operations select of a message: every field a
// JSON column holds, of the message, its subscriber and its template.
const brokenSelection = `_id payload overrides deliveredAt deviceTokens content { type content }
  cta { type data { url } action { status buttons { type content } result { type payload } } }
  subscriber { _id subscriberId data channels { providerId } topics }
  template { _id name data workflowIntegrationStatus tags triggers { identifier } steps { _id template }
    preferenceSettings { email } notificationGroup { name } }`

// A row another writer broke: plain SQL leaves text that is not JSON in every JSON column
// of one message, of its subscriber and of its template. Every API then answers valid
// JSON, the broken values null (or left out where the record leaves out no value), the
// rest of each page as before; and the server warns once per row with its table, columns
// and id, never the content.
func TestBrokenJSONAnsweredAsNull(t *testing.T) {
	messageColumns := jsonColumnsOf(t, &models.Message{})
	subscriberColumns := jsonColumnsOf(t, &models.Subscriber{})
	templateColumns := jsonColumnsOf(t, &models.Template{})
	for _, dialect := range dbtest.Dialects {
		t.Run(dialect, func(t *testing.T) {
			w := newSessionWorld(t, dialect)
			broken, intact := w.alice1, w.alice2
			aliceRow := broken.SubscriberID
			key := "ApiKey " + w.key

			// Live before the break, which they then deliver as a change.
			events := `subscription { messageEvents(subscriberId: "alice") { kind message { ` + brokenSelection + ` } } }`
			conn := dialEvents(t, w.srv.base, key)
			ws, err := conn.Subscribe(context.Background(), gqlclient.Request{Query: events}, 16)
			if err != nil {
				t.Fatal(err)
			}
			// Registered once an operation sent after it is answered (as subscribeEvents).
			ping, err := conn.Subscribe(context.Background(), gqlclient.Request{Query: `{ __typename }`}, 1)
			if err != nil {
				t.Fatal(err)
			}
			for range ping.Results() {
			}
			sseCtx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			t.Cleanup(cancel)
			sse, err := gqlclient.SubscribeSSE(sseCtx, http.DefaultClient, w.srv.base+"/graphql", http.Header{"Authorization": {key}},
				gqlclient.Request{Query: events}, 16)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = sse.Stop(context.Background()) })
			token := w.token(t, "alice")
			socket := mustDialInbox(t, w.srv.base, token) // the stream opened, the SSE one too: both registered

			breakRow(t, w.store.DB(), "messages", broken.ID, messageColumns)
			breakRow(t, w.store.DB(), "subscribers", aliceRow, subscriberColumns)
			breakRow(t, w.store.DB(), "templates", broken.TemplateID, templateColumns)
			// A new message another program inserts broken: what the inbox socket sends of it.
			inserted := models.NewID(time.Now())
			if err := w.store.DB().Exec(`INSERT INTO messages (id, environment_id, organization_id, subscriber_id, created_at,
				transaction_id, subject, channel, email, phone, direct_webhook_url, title, error_text, `+strings.Join(messageColumns, ", ")+`)
				VALUES (?, ?, ?, ?, ?, 'raw-txn', 'Raw', 'in_app', '', '', '', 'Inserted by another writer', ''`+strings.Repeat(", '"+brokenText+"'", len(messageColumns))+`)`,
				inserted, w.env.ID, w.env.OrganizationID, aliceRow, time.Now().UTC()).Error; err != nil {
				t.Fatal(err)
			}
			brokenIDs := []string{broken.ID, inserted}
			check := func(t *testing.T, what string, body []byte, wantIntact bool) {
				t.Helper()
				b, n := brokenAnswer(t, what, body, brokenIDs, intact.ID, aliceRow)
				if b == 0 || (wantIntact && n == 0) {
					t.Errorf("%s: %d forms of a broken message and %d of the intact one:\n%.2000s", what, b, n, body)
				}
			}

			t.Run("v1List", func(t *testing.T) {
				r := w.call(t, http.MethodGet, "/v1/messages?subscriberId=alice", key, "")
				if r.status != http.StatusOK {
					t.Fatalf("GET /v1/messages: %d %s", r.status, r.body)
				}
				check(t, "GET /v1/messages", r.body, true)
			})
			t.Run("v1Mark", func(t *testing.T) {
				r := w.call(t, http.MethodPost, "/v1/subscribers/alice/messages/"+broken.ID+"/actions/primary", key, `{"status":"done"}`)
				if r.status != http.StatusCreated && r.status != http.StatusOK {
					t.Fatalf("mark: %d %s", r.status, r.body)
				}
				check(t, "POST /v1/.../actions/primary", r.body, false)
			})
			gql := func(t *testing.T, what, auth, query string, wantIntact bool) map[string]any {
				t.Helper()
				body, _ := json.Marshal(map[string]any{"query": query})
				r := w.call(t, http.MethodPost, "/graphql", auth, string(body))
				if r.status != http.StatusOK || strings.Contains(string(r.body), `"errors"`) {
					t.Fatalf("%s: %d %s", what, r.status, r.body)
				}
				check(t, what, r.body, wantIntact)
				var res struct{ Data map[string]any }
				_ = json.Unmarshal(r.body, &res)
				return res.Data
			}
			var globalID string
			t.Run("graphqlList", func(t *testing.T) {
				data := gql(t, "messages", key, `{ messages(subscriberId: "alice") { data { id `+brokenSelection+` } } }`, true)
				var page struct {
					Messages struct {
						Data []struct {
							ID       string `json:"id"`
							RecordID string `json:"_id"`
						}
					}
				}
				b, _ := json.Marshal(data)
				_ = json.Unmarshal(b, &page)
				for _, m := range page.Messages.Data {
					if m.RecordID == broken.ID {
						globalID = m.ID
					}
				}
				gql(t, "messagesConnection", key, `{ messagesConnection(subscriberId: "alice") { edges { node { `+brokenSelection+` } } } }`, true)
				gql(t, "messages with a session", "Bearer "+token, `{ messages { data { `+brokenSelection+` } } }`, true)
			})
			t.Run("graphqlNode", func(t *testing.T) {
				if globalID == "" {
					t.Fatal("no global id of the broken message")
				}
				gql(t, "node", key, fmt.Sprintf(`{ node(id: %q) { ... on Message { %s } } }`, globalID, brokenSelection), false)
				gql(t, "nodes", key, fmt.Sprintf(`{ nodes(ids: [%q]) { ... on Message { %s } } }`, globalID, brokenSelection), false)
			})
			t.Run("graphqlMutations", func(t *testing.T) {
				gql(t, "markMessageAction", key, fmt.Sprintf(`mutation { markMessageAction(subscriberId: "alice", messageId: %q, type: secondary, status: done) { %s } }`,
					broken.ID, brokenSelection), false)
				gql(t, "markMessages", key, fmt.Sprintf(`mutation { markMessages(subscriberId: "alice", messageIds: [%q, %q], seen: true) { %s } }`,
					broken.ID, intact.ID, brokenSelection), true)
			})
			t.Run("graphqlEvents", func(t *testing.T) {
				for _, s := range []struct {
					name string
					sub  *gqlclient.Subscription
				}{{"WebSocket", ws}, {"SSE", sse}} {
					found := 0
					deadline := time.After(10 * time.Second)
					for found == 0 {
						select {
						case r, ok := <-s.sub.Results():
							if !ok {
								t.Fatalf("%s: the stream ended: %v", s.name, s.sub.Err())
							}
							if len(r.Errors) > 0 {
								t.Fatalf("%s: event with errors: %+v", s.name, r.Errors)
							}
							found, _ = brokenAnswer(t, s.name+" event", r.Data, brokenIDs, intact.ID, aliceRow)
						case <-deadline:
							t.Fatalf("%s: no event of a broken message within 10s", s.name)
						}
					}
				}
			})
			t.Run("inbox", func(t *testing.T) {
				r := w.call(t, http.MethodGet, "/v1/inbox/notifications?limit=10", "Bearer "+token, "")
				if r.status != http.StatusOK {
					t.Fatalf("inbox notifications: %d %s", r.status, r.body)
				}
				check(t, "GET /v1/inbox/notifications", r.body, true)
				r = w.call(t, http.MethodPatch, "/v1/inbox/notifications/"+broken.ID+"/read", "Bearer "+token, "")
				if r.status != http.StatusOK {
					t.Fatalf("inbox read: %d %s", r.status, r.body)
				}
				check(t, "PATCH /v1/inbox/notifications/:id/read", r.body, false)
			})
			t.Run("inboxSocket", func(t *testing.T) {
				deadline := time.After(10 * time.Second)
				for {
					select {
					case e, ok := <-socket.events:
						if !ok {
							t.Fatalf("the socket closed: %v", <-socket.closed)
						}
						if e.Event == "notification_received" {
							check(t, "inbox socket", []byte(e.raw), false)
							return
						}
					case <-deadline:
						t.Fatalf("no notification_received within 10s; the server's log:\n%s", w.srv.stderr.String())
					}
				}
			})
			t.Run("export", func(t *testing.T) {
				code, out, stderr := runCLI(t, "", "export", "--environment-id", w.env.ID)
				if code != 0 {
					t.Fatalf("export exited %d: %s", code, stderr)
				}
				if !strings.Contains(stderr, "stored JSON is not valid") || strings.Contains(stderr, brokenText) {
					t.Errorf("export's log does not warn of the broken rows, or holds their text:\n%s", stderr)
				}
				var brokenLines, intactLines int
				for line := range strings.Lines(out) {
					b, n := brokenAnswer(t, "export line", []byte(line), brokenIDs, intact.ID, aliceRow)
					if b > 0 {
						brokenLines++
					}
					intactLines += n
				}
				if brokenLines != 2 || intactLines != 1 {
					t.Errorf("export: %d lines of broken messages, %d of the intact one; want 2 and 1:\n%s", brokenLines, intactLines, out)
				}
			})
			t.Run("warned", func(t *testing.T) {
				log := w.srv.stderr.String()
				if strings.Contains(log, brokenText) {
					t.Errorf("the log holds the broken text")
				}
				for _, row := range []struct {
					table, id string
					columns   []string
				}{{"messages", broken.ID, messageColumns}, {"messages", inserted, messageColumns},
					{"subscribers", aliceRow, subscriberColumns}, {"templates", broken.TemplateID, templateColumns}} {
					var found int
					for line := range strings.Lines(log) {
						if strings.Contains(line, "stored JSON is not valid") && strings.Contains(line, row.table) && strings.Contains(line, row.id) {
							found++
							for _, c := range row.columns {
								if !strings.Contains(line, c) {
									t.Errorf("the warning of %s %s does not name %s: %s", row.table, row.id, c, line)
								}
							}
						}
					}
					if found != 1 {
						t.Errorf("%s %s warned %d times, want once (rate limited): %s", row.table, row.id, found, log)
					}
				}
			})
		})
	}
}
