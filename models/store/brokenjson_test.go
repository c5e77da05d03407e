package store_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm/schema"

	"messages/models"
	"messages/models/dbtest"
	"messages/models/store"
)

// brokenContent is what another writer leaves in every JSON column of the broken rows;
// it must never reach the log.
const brokenContent = "xxx-not-json-3f9a"

// jsonColumns are the columns of a record stored as JSON text (the jsontext serializer's
// and models.JSON's), from GORM's own parse of it, so that a new one is covered without
// a line here; each with its field's name.
func jsonColumns(t testing.TB, record any) map[string]string {
	t.Helper()
	sch, err := schema.Parse(record, &sync.Map{}, schema.NamingStrategy{})
	if err != nil {
		t.Fatal(err)
	}
	columns := map[string]string{}
	for _, f := range sch.Fields {
		if f.DBName != "" && (f.Serializer != nil || f.FieldType == reflect.TypeFor[models.JSON]()) {
			columns[f.DBName] = f.Name
		}
	}
	return columns
}

// wrongShapes are JSON of another shape than the field reads, stored in two columns
// instead of text that is not JSON: an array for the cta's object, an object for the
// tags' array.
var wrongShapes = map[string]string{"cta": `["` + brokenContent + `"]`, "tags": `{"` + brokenContent + `":1}`}

// breakJSON stores, with plain SQL, a value that is not what the field reads in every
// JSON column of the row id of table: text that is not JSON, or wrongShapes.
func breakJSON(t testing.TB, s *store.Store, table, id string, columns map[string]string) {
	t.Helper()
	names := slices.Sorted(maps.Keys(columns))
	var set []string
	var args []any
	for _, c := range names {
		set = append(set, fmt.Sprintf("%s = ?", c))
		v, ok := wrongShapes[c]
		if !ok {
			v = brokenContent
		}
		args = append(args, v)
	}
	if table == "messages" {
		// No mark to fold into the cta, which then reads as none.
		set = append(set, "action_status = ''", "action_result_type = ''")
	}
	if err := s.DB().Exec("UPDATE "+table+" SET "+strings.Join(set, ", ")+" WHERE id = ?", append(args, id)...).Error; err != nil {
		t.Fatal(err)
	}
}

// noJSONLeft fails unless every JSON field of rec (a pointer to a record) holds no value:
// nil, or empty where the record always carries the field (Normalize).
func noJSONLeft(t *testing.T, what string, rec any, columns map[string]string) {
	t.Helper()
	v := reflect.ValueOf(rec).Elem()
	for column, field := range columns {
		f := v.FieldByName(field)
		if !f.IsZero() && !((f.Kind() == reflect.Slice) && f.Len() == 0) {
			t.Errorf("%s: %s (%s) reads %#v from a column holding no JSON, want no value", what, field, column, f.Interface())
		}
	}
}

// logRecords is a JSON log the test reads back.
type logRecords struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logRecords) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// broken returns the broken-JSON warnings logged so far, by table and id: their columns.
func (l *logRecords) broken(t *testing.T) map[string][]string {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	if strings.Contains(l.b.String(), brokenContent) {
		t.Errorf("the log holds the broken content:\n%s", l.b.String())
	}
	got := map[string][]string{}
	for line := range strings.Lines(l.b.String()) {
		var r struct {
			Level, Msg, Table, ID string
			Columns               []string
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if strings.Contains(r.Msg, "stored JSON is not valid") {
			if r.Level != "WARN" {
				t.Errorf("logged at %s, want WARN: %s", r.Level, line)
			}
			slices.Sort(r.Columns)
			got[r.Table+" "+r.ID] = r.Columns
		}
	}
	return got
}

// Every JSON column of a message, of its subscriber and of its template that another
// writer left holding no JSON reads as no value on every read of the store, the page's
// other message intact, and each broken row is logged once with its table, columns and
// id, never its content.
func TestBrokenJSONColumnsAreContained(t *testing.T) {
	messageColumns := jsonColumns(t, &models.Message{})
	subscriberColumns := jsonColumns(t, &models.Subscriber{})
	templateColumns := jsonColumns(t, &models.Template{})
	if len(messageColumns) != 7 || len(subscriberColumns) != 3 || len(templateColumns) != 7 {
		t.Fatalf("JSON columns: messages %v, subscribers %v, templates %v; want 7, 3 and 7", messageColumns, subscriberColumns, templateColumns)
	}
	for _, dialect := range dbtest.Dialects {
		t.Run(dialect, func(t *testing.T) {
			log := &logRecords{}
			s := dbtest.Open(t, dialect, store.WithLogger(slog.New(slog.NewJSONHandler(log, nil))))
			tn := dbtest.NewTenant(t, s, "broken")
			ctx := tn.Context()
			brokenSub, brokenTpl := tn.Subscriber(t, "broken"), tn.Template(t, "broken")
			broken := tn.Message(t, brokenSub, brokenTpl, func(m *models.Message) {
				m.ActionStatus, m.ActionResultType, m.ActionResultPayload = models.ActionDone, models.ButtonPrimary, models.JSON(`{"a":1}`)
			})
			intact := tn.Message(t, tn.Subscriber(t, "intact"), tn.Template(t, "intact"), nil)
			before := list(t, s, tn.Env.ID, models.ListFilter{}, models.Page{Size: 10}, models.Everything).Data
			if len(before) != 2 || before[0].ID != intact.ID {
				t.Fatalf("page before: %d messages", len(before))
			}
			breakJSON(t, s, "messages", broken.ID, messageColumns)
			breakJSON(t, s, "subscribers", brokenSub.ID, subscriberColumns)
			breakJSON(t, s, "templates", brokenTpl.ID, templateColumns)

			// check holds the messages one read returned to what the page held before,
			// but the broken message's JSON, its subscriber's and its template's.
			check := func(t *testing.T, msgs []*models.Message, embedded bool) {
				t.Helper()
				var found int
				for _, m := range msgs {
					switch m.ID {
					case intact.ID:
						found++
						want := *before[0]
						if !embedded {
							want.Subscriber, want.Template = nil, nil
						}
						if diff := cmp.Diff(&want, m); diff != "" {
							t.Errorf("the intact message changed (-before +now):\n%s", diff)
						}
					case broken.ID:
						found++
						noJSONLeft(t, "message", m, messageColumns)
						if m.TransactionID != broken.TransactionID || m.Title != broken.Title || m.Content == nil {
							t.Errorf("the broken message lost what is not JSON: %+v", m)
						}
						if embedded {
							if m.Subscriber == nil || m.Template == nil {
								t.Fatalf("the broken message lacks its subscriber or template")
							}
							noJSONLeft(t, "subscriber", m.Subscriber, subscriberColumns)
							noJSONLeft(t, "template", m.Template, templateColumns)
							if m.Subscriber.FirstName != brokenSub.FirstName || m.Template.Name != brokenTpl.Name {
								t.Errorf("the subscriber or template lost what is not JSON")
							}
						}
					}
				}
				if found != 2 {
					t.Fatalf("read %d of the two messages", found)
				}
			}

			t.Run("firstPage", func(t *testing.T) {
				check(t, list(t, s, tn.Env.ID, models.ListFilter{}, models.Page{Size: 10}, models.Everything).Data, true)
			})
			t.Run("pastAnOffset", func(t *testing.T) {
				msgs, _, err := s.ListMessagesFrom(ctx, tn.Env.ID, models.ListFilter{}, 0, 10, models.Everything)
				if err != nil {
					t.Fatal(err)
				}
				page, err := s.ListMessages(ctx, tn.Env.ID, models.ListFilter{}, models.Page{Number: 1, Size: 1}, models.Everything)
				if err != nil {
					t.Fatal(err)
				}
				check(t, append(msgs[:1:1], page.Data...), true)
			})
			t.Run("cursor", func(t *testing.T) {
				page, err := s.MessagesAfter(ctx, tn.Env.ID, models.ListFilter{}, nil, 10, models.Everything)
				if err != nil {
					t.Fatal(err)
				}
				check(t, page.Messages, true)
			})
			t.Run("export", func(t *testing.T) {
				msgs, err := s.MessagesOldestFirst(ctx, tn.Env.ID, nil, 10)
				if err != nil {
					t.Fatal(err)
				}
				check(t, msgs, true)
			})
			t.Run("nodes", func(t *testing.T) {
				n, err := s.Nodes(ctx, tn.Env.ID, models.NodeQuery{Messages: []string{broken.ID, intact.ID}, EmbedSubscribers: true, EmbedTemplates: true,
					Subscribers: []string{brokenSub.ID}, Templates: []string{brokenTpl.ID}})
				if err != nil {
					t.Fatal(err)
				}
				check(t, slices.Collect(maps.Values(n.Messages)), true)
				noJSONLeft(t, "subscriber node", n.Subscribers[brokenSub.ID], subscriberColumns)
				noJSONLeft(t, "template node", n.Templates[brokenTpl.ID], templateColumns)
			})
			t.Run("changes", func(t *testing.T) {
				changes, err := s.MessageChanges(ctx, models.ChangeFilter{EnvironmentID: tn.Env.ID}, time.Time{}, models.Position{}, 10)
				if err != nil {
					t.Fatal(err)
				}
				changed, err := s.ChangedMessages(ctx, []string{broken.ID, intact.ID})
				if err != nil {
					t.Fatal(err)
				}
				for _, list := range [][]*models.Change{changes, changed} {
					var msgs []*models.Message
					for _, c := range list {
						msgs = append(msgs, c.Message)
					}
					check(t, msgs, true)
				}
			})
			t.Run("workflows", func(t *testing.T) {
				tpls, err := s.Workflows(ctx, tn.Env.ID)
				if err != nil {
					t.Fatal(err)
				}
				for _, tpl := range tpls {
					if tpl.ID == brokenTpl.ID {
						noJSONLeft(t, "workflow", tpl, templateColumns)
					} else if len(tpl.Tags) == 0 || tpl.Data == nil {
						t.Errorf("the intact workflow lost its JSON: %+v", tpl)
					}
				}
				tagged, err := s.TemplatesTagged(ctx, tn.Env.ID, [][]string{{"fixture"}})
				if err != nil {
					t.Fatal(err)
				}
				if len(tagged) != 1 || tagged[0] == brokenTpl.ID {
					t.Errorf("templates tagged fixture: %v, want the intact one alone", tagged)
				}
			})
			t.Run("mark", func(t *testing.T) {
				m, err := s.MarkMessageAction(ctx, tn.Env.ID, models.MarkAction{MessageID: broken.ID, SubscriberID: "broken",
					Type: models.ButtonSecondary, Status: models.ActionDone})
				if err != nil {
					t.Fatal(err)
				}
				if m.Payload != nil || m.Overrides != nil || m.CTA.Action == nil || m.CTA.Action.Status != models.ActionDone ||
					len(m.CTA.Action.Buttons) != 0 || m.Subscriber == nil || m.Subscriber.Data != nil {
					t.Errorf("the marked message as read back: %+v", m)
				}
			})

			// Each broken row once, with its columns, however many reads met it.
			logged := log.broken(t)
			want := map[string][]string{
				"messages " + broken.ID:       slices.Sorted(maps.Keys(messageColumns)),
				"subscribers " + brokenSub.ID: slices.Sorted(maps.Keys(subscriberColumns)),
				"templates " + brokenTpl.ID:   slices.Sorted(maps.Keys(templateColumns)),
			}
			if diff := cmp.Diff(want, logged); diff != "" {
				t.Errorf("broken rows logged (-want +got):\n%s", diff)
			}
		})
	}
}
