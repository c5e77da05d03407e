package jsonl_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"messages/models"
	"messages/models/dbtest"
	"messages/models/jsonl"
	"messages/models/seed"
	"messages/models/store"
	"messages/models/wire"
)

// Fixed ids of the records built in memory for import tests.
const (
	importEnv   = "65f000000000000000000e01"
	importOrg   = "65f000000000000000000001"
	importOther = "65f000000000000000000e02"
)

// importRecord is the i-th valid record of the in-memory import file, as a generic map so
// tests can break it in any way the wire allows. Records 1 and 2 share a subscriber.
func importRecord(t *testing.T, i int) map[string]any {
	t.Helper()
	sub := 1 + i%2
	created := time.Date(2025, 3, 1, 8, 0, i, 0, time.UTC)
	m := models.Message{
		ID: fmt.Sprintf("65f0000000000000000a%04d", i), EnvironmentID: importEnv, OrganizationID: importOrg,
		TemplateID: "65f00000000000000000c001", NotificationID: fmt.Sprintf("65f0000000000000000b%04d", i),
		SubscriberID: fmt.Sprintf("65f0000000000000000d%04d", sub), CreatedAt: models.NewTime(created),
		TransactionID: fmt.Sprintf("txn-%d", i), Channel: models.ChannelInApp, Status: "sent", Content: []models.ContentBlock{},
		Subscriber: &models.Subscriber{ID: fmt.Sprintf("65f0000000000000000d%04d", sub), SubscriberID: fmt.Sprintf("user-%d", sub),
			FirstName: "Zoë", EnvironmentID: importEnv, OrganizationID: importOrg,
			CreatedAt: models.NewTime(dbtest.Base), UpdatedAt: models.NewTime(dbtest.Base)},
		Template: &models.Template{ID: "65f00000000000000000c001", Name: "Welcome", EnvironmentID: importEnv, OrganizationID: importOrg},
		Payload:  models.JSON(`{"html":"<b>&</b>"}`),
	}
	b, err := wire.Message(&m) // as export writes it
	if err != nil {
		t.Fatal(err)
	}
	var rec map[string]any
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	return rec
}

// importFile returns n valid JSON Lines; replace, when set, supplies line k's bytes instead.
func importFile(t *testing.T, n int, replace func(k int, rec map[string]any) []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	for k := 1; k <= n; k++ {
		rec := importRecord(t, k)
		var line []byte
		if replace != nil {
			line = replace(k, rec)
		}
		if line == nil {
			var err error
			if line, err = json.Marshal(rec); err != nil {
				t.Fatal(err)
			}
		}
		buf.Write(line)
		buf.WriteByte('\n')
	}
	return buf.Bytes()
}

// editLine3 returns a replace function that edits record 3 and leaves the others alone.
func editLine3(t *testing.T, edit func(rec map[string]any)) func(int, map[string]any) []byte {
	return func(k int, rec map[string]any) []byte {
		if k != 3 {
			return nil
		}
		edit(rec)
		b, err := json.Marshal(rec)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
}

func object(rec map[string]any, key string) map[string]any { return rec[key].(map[string]any) }

// transferFixture fills one tenant with a message per channel, messages with and without
// a template, five created in the same millisecond, and 520 seeded messages, so
// an export spans two keyset pages.
func transferFixture(t *testing.T, s *store.Store) *dbtest.Tenant {
	t.Helper()
	tn := dbtest.NewTenant(t, s, "transfer")
	alice, bob := tn.Subscriber(t, "alice"), tn.Subscriber(t, "bob")
	tpl := tn.Template(t, "welcome")
	var first *models.Message
	for i, c := range models.Channels {
		m := tn.Message(t, []*models.Subscriber{alice, bob}[i%2], tpl, func(m *models.Message) {
			m.Channel = c
			m.Subject = "Ünïcode ✓ <b>&amp;</b> \u2028"
			if first != nil {
				m.CreatedAt = first.CreatedAt // a tie: the order falls back to _id
			}
		})
		if first == nil {
			first = m
		}
	}
	tn.Message(t, bob, tpl, func(m *models.Message) { m.TemplateID = "" })
	dbtest.Seed(t, s, seed.Options{Seed: 3, EnvironmentID: tn.Env.ID, Messages: 520, Subscribers: 15, Templates: 4})
	return tn
}

// exportedFixture builds transferFixture in s and exports it: the file, and its lines,
// each with its newline.
func exportedFixture(t *testing.T, s *store.Store) (*dbtest.Tenant, []byte, [][]byte) {
	t.Helper()
	tn := transferFixture(t, s)
	file := dbtest.Export(t, s, tn.Env.ID)
	lines := bytes.SplitAfter(file, []byte("\n"))
	return tn, file, lines[:len(lines)-1] // after the last newline
}

// TestExportImport exports one tenant's fixture, then imports it: into a fresh database
// with a broken line (nothing is written), into another fresh one (a byte-identical round
// trip), and there again (nothing changes). The fixture is built once, as it is not cheap.
func TestExportImport(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		tn, file, lines := exportedFixture(t, s)

		t.Run("exportOrderedByCreatedAtThenID", func(t *testing.T) {
			type key struct {
				CreatedAt models.Time `json:"createdAt"`
				ID        string      `json:"_id"`
			}
			keys := make([]key, len(lines))
			for i, l := range lines {
				if err := json.Unmarshal(l, &keys[i]); err != nil {
					t.Fatal(err)
				}
			}
			if len(keys) != 526 {
				t.Errorf("exported %d messages, want 526", len(keys))
			}
			if !slices.IsSortedFunc(keys, func(a, b key) int {
				if c := a.CreatedAt.Compare(b.CreatedAt.Time); c != 0 {
					return c
				}
				return strings.Compare(a.ID, b.ID)
			}) {
				t.Error("export is not ordered by createdAt, then _id")
			}
		})

		t.Run("import422BadLineAfterFlushedBatchesWritesNothing", func(t *testing.T) {
			broken := slices.Clone(lines)
			broken[509] = []byte(`{"_id":"nope"}` + "\n") // one batch of 500 goes before it
			fresh := dbtest.Open(t, s.Dialect())
			_, err := jsonl.Import(ctx, fresh, bytes.NewReader(bytes.Join(broken, nil)), nil)
			if models.ErrorCode(err) != models.EINVALID || !strings.HasPrefix(models.ErrorMessage(err), "line 510: ") {
				t.Fatalf("import error = %v, want EINVALID on line 510", err)
			}
			if diff := cmp.Diff(map[string]int64{"environments": 0, "subscribers": 0, "templates": 0, "messages": 0}, dbtest.RowCounts(t, fresh)); diff != "" {
				t.Errorf("rows left by a failed import (-want +got):\n%s", diff)
			}
		})

		fresh := dbtest.Open(t, s.Dialect())
		want := jsonl.ImportStats{Lines: 526, Messages: 526, Subscribers: 17, Templates: 5, Environments: 1}
		wantCounts := map[string]int64{"environments": 1, "subscribers": 17, "templates": 5, "messages": 526}
		t.Run("importRoundTripIsByteIdentical", func(t *testing.T) {
			stats, err := jsonl.Import(ctx, fresh, bytes.NewReader(file), nil)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, stats); diff != "" {
				t.Errorf("import stats (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(wantCounts, dbtest.RowCounts(t, fresh)); diff != "" {
				t.Errorf("row counts (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(string(file), string(dbtest.Export(t, fresh, tn.Env.ID))); diff != "" {
				t.Errorf("export of the import differs from the original (-original +round trip):\n%s", diff)
			}
		})

		t.Run("importAgainChangesNothing", func(t *testing.T) {
			var progress []int
			stats, err := jsonl.Import(ctx, fresh, bytes.NewReader(file), func(n int) { progress = append(progress, n) })
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, stats); diff != "" {
				t.Errorf("second import stats (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]int{526}, progress); diff != "" {
				t.Errorf("progress calls (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(wantCounts, dbtest.RowCounts(t, fresh)); diff != "" {
				t.Errorf("row counts after re-import (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(string(file), string(dbtest.Export(t, fresh, tn.Env.ID))); diff != "" {
				t.Errorf("export after re-import (-original +now):\n%s", diff)
			}
		})
	})
}

func TestImportUpdatesExistingRecords(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		if _, err := jsonl.Import(ctx, s, bytes.NewReader(importFile(t, 3, nil)), nil); err != nil {
			t.Fatal(err)
		}
		changed := importFile(t, 3, editLine3(t, func(rec map[string]any) {
			rec["read"] = true
			object(rec, "subscriber")["firstName"] = "Zoé"
		}))
		if _, err := jsonl.Import(ctx, s, bytes.NewReader(changed), nil); err != nil {
			t.Fatal(err)
		}
		page, err := s.ListMessages(ctx, importEnv, models.ListFilter{}, models.Page{Size: 10}, models.Everything)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, m := range page.Data {
			got[m.ID] = fmt.Sprintf("read=%v subscriber=%s", m.Read, m.Subscriber.FirstName)
		}
		want := map[string]string{ // line 3's subscriber is also line 1's
			"65f0000000000000000a0001": "read=false subscriber=Zoé",
			"65f0000000000000000a0002": "read=false subscriber=Zoë",
			"65f0000000000000000a0003": "read=true subscriber=Zoé",
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("after re-import with changes (-want +got):\n%s", diff)
		}
	})
}

func TestImportRefusesBadLine(t *testing.T) {
	edit := func(f func(rec map[string]any)) func(*testing.T) func(int, map[string]any) []byte {
		return func(t *testing.T) func(int, map[string]any) []byte { return editLine3(t, f) }
	}
	raw := func(line string) func(*testing.T) func(int, map[string]any) []byte {
		return func(*testing.T) func(int, map[string]any) []byte {
			return func(k int, _ map[string]any) []byte {
				if k == 3 {
					return []byte(line)
				}
				return nil
			}
		}
	}
	tests := []struct {
		name    string
		line3   func(*testing.T) func(int, map[string]any) []byte
		message string
	}{
		{"import422Channel", edit(func(r map[string]any) { r["channel"] = "fax" }),
			`line 3: channel "fax" is not one of in_app, email, sms, chat, push`},
		{"import422Severity", edit(func(r map[string]any) { r["severity"] = "urgent" }),
			`line 3: severity "urgent" is not one of high, medium, low, none`},
		{"import422TemplateSeverity", edit(func(r map[string]any) { object(r, "template")["severity"] = "HIGH" }),
			`line 3: template.severity "HIGH" is not one of high, medium, low, none`},
		{"import422NotJSON", raw(`{"_id": "65f0000000000000000a0003",`), "line 3: not a valid message record"},
		{"import422NotObject", raw(`["65f0000000000000000a0003"]`), "line 3: not a JSON object"},
		{"import422NotUTF8", raw("{\"_id\": \"\xff\"}"), "line 3: not valid UTF-8"},
		{"import422UppercaseID", edit(func(r map[string]any) { r["_id"] = "65F0000000000000000A0003" }),
			`line 3: _id "65F0000000000000000A0003" is not 24 lowercase hex digits`},
		{"import422NoEnvironment", edit(func(r map[string]any) { delete(r, "_environmentId") }), `line 3: _environmentId "" is not`},
		{"import422NoCreatedAt", edit(func(r map[string]any) { delete(r, "createdAt") }), "line 3: createdAt is required"},
		{"import422BadCreatedAt", edit(func(r map[string]any) { r["createdAt"] = "yesterday" }), "line 3: not a valid message record"},
		{"import422NoSubscriber", edit(func(r map[string]any) { delete(r, "subscriber") }), "line 3: subscriber is required"},
		{"import422SubscriberIDMismatch", edit(func(r map[string]any) { object(r, "subscriber")["_id"] = "65f0000000000000000d0009" }),
			`line 3: subscriber._id "65f0000000000000000d0009" does not match _subscriberId "65f0000000000000000d0002"`},
		{"import422NoExternalSubscriberID", edit(func(r map[string]any) { delete(object(r, "subscriber"), "subscriberId") }),
			"line 3: subscriber.subscriberId is required"},
		{"import422SubscriberOtherEnvironment", edit(func(r map[string]any) { object(r, "subscriber")["_environmentId"] = importOther }),
			`line 3: subscriber._environmentId "65f000000000000000000e02" is not the message's`},
		{"import422TemplateMismatch", edit(func(r map[string]any) { r["_templateId"] = "65f00000000000000000c009" }),
			`line 3: template._id "65f00000000000000000c001" does not match _templateId "65f00000000000000000c009"`},
		{"import422TemplateOtherEnvironment", edit(func(r map[string]any) { object(r, "template")["_environmentId"] = importOther }),
			`line 3: template._environmentId "65f000000000000000000e02" is not the message's`},
		{"import422TransactionIDTooLong", edit(func(r map[string]any) { r["transactionId"] = strings.Repeat("é", 256) }),
			"line 3: transactionId is longer than 255 characters"},
		{"import422SubjectTooLong", edit(func(r map[string]any) { r["subject"] = strings.Repeat("x", 65536) }),
			"line 3: subject is longer than 65535 bytes"},
		{"import422ExternalIDOfAnotherSubscriber", edit(func(r map[string]any) {
			// lines 1 and 3 have subscriber user-2; line 3 now gives user-2 another _id
			r["_subscriberId"] = "65f0000000000000000d0009"
			object(r, "subscriber")["_id"] = "65f0000000000000000d0009"
		}), `line 3: subscriberId "user-2" belongs to subscriber 65f0000000000000000d0002 on line 1`},
		{"import422StatusOutsideSDK", edit(func(r map[string]any) { r["status"] = "read" }),
			`line 3: status "read" is not one of sent, error, warning`},
		{"import422NoStatus", edit(func(r map[string]any) { delete(r, "status") }), `line 3: status "" is not one of`},
		{"import422BlockType", edit(func(r map[string]any) { r["content"] = []any{map[string]any{"type": "image"}} }),
			`line 3: content[0].type "image" is not one of button, text`},
		{"import422TextAlign", edit(func(r map[string]any) {
			r["content"] = []any{map[string]any{"type": "text", "styles": map[string]any{"textAlign": "justify"}}}
		}), `line 3: content[0].styles.textAlign "justify" is not one of center, left, right`},
		{"import422CTAType", edit(func(r map[string]any) { r["cta"] = map[string]any{"type": "popup"} }),
			`line 3: cta.type "popup" is not one of redirect`},
		{"import422ActionStatus", edit(func(r map[string]any) { r["cta"] = map[string]any{"action": map[string]any{"status": "seen"}} }),
			`line 3: cta.action.status "seen" is not one of pending, done`},
		{"import422ButtonType", edit(func(r map[string]any) {
			r["cta"] = map[string]any{"action": map[string]any{"buttons": []any{map[string]any{"type": "tertiary"}}}}
		}), `line 3: cta.action.buttons[0].type "tertiary" is not one of primary, secondary`},
		{"import422PayloadNotObject", edit(func(r map[string]any) { r["payload"] = []any{1} }), "line 3: payload must be a JSON object"},
		{"import422ProviderID", edit(func(r map[string]any) {
			object(r, "subscriber")["channels"] = []any{map[string]any{"providerId": "carrier-pigeon"}}
		}), `line 3: subscriber.channels[0].providerId "carrier-pigeon" is not one of slack,`},
		{"import422TriggerType", edit(func(r map[string]any) {
			object(r, "template")["triggers"] = []any{map[string]any{"type": "cron", "identifier": "w", "variables": []any{}}}
		}), `line 3: template.triggers[0].type "cron" is not one of event`},
		{"import422FilterOperator", edit(func(r map[string]any) {
			object(r, "template")["steps"] = []any{map[string]any{"variants": []any{map[string]any{"filters": []any{map[string]any{
				"type": "BOOLEAN", "value": "AND", "children": []any{map[string]any{"operator": "ROUGHLY", "on": "payload"}}}}}}}}
		}), `line 3: template.steps[0].variants[0].filters[0].children[0].operator "ROUGHLY" is not one of LARGER,`},
		{"import422MetadataType", edit(func(r map[string]any) {
			object(r, "template")["steps"] = []any{map[string]any{"metadata": map[string]any{"type": "scheduled"}}}
		}), `line 3: template.steps[0].metadata.type "scheduled" is not one of regular, backoff, timed`},
		{"import422LineTooLong", raw(`{"subject":"` + strings.Repeat("x", 8<<20) + `"}`), "line 3: longer than 8 MiB"},
		{"import422OtherOrganization", edit(func(r map[string]any) {
			r["_organizationId"] = "65f000000000000000000002"
			object(r, "subscriber")["_organizationId"] = "65f000000000000000000002"
			object(r, "template")["_organizationId"] = "65f000000000000000000002"
		}), `line 3: _organizationId "65f000000000000000000002" differs from "65f000000000000000000001"`},
	}
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				_, err := jsonl.Import(context.Background(), s, bytes.NewReader(importFile(t, 5, tc.line3(t))), nil)
				var coded *models.Error
				if !errors.As(err, &coded) || coded.Code != models.EINVALID || !strings.HasPrefix(coded.Message, tc.message) {
					t.Fatalf("import error = %v, want EINVALID starting %q", err, tc.message)
				}
				if diff := cmp.Diff(map[string]int64{"environments": 0, "subscribers": 0, "templates": 0, "messages": 0}, dbtest.RowCounts(t, s)); diff != "" {
					t.Errorf("rows written by a failed import (-want +got):\n%s", diff)
				}
			})
		}
	})
}

// template.deletedAt and deletedBy are plain strings: "" (what export writes for a
// template without them), absent, and text that is no timestamp all import, and the
// round trip is byte-identical.
func TestImportDeletedAtIsText(t *testing.T) {
	values := map[int]any{1: "", 2: nil, 3: "2024-01-31T10:00:00Z", 4: "last tuesday", 5: "2025-03-01T08:00:00.000Z"}
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		file := importFile(t, 5, func(k int, rec map[string]any) []byte {
			tpl := object(rec, "template")
			tpl["_id"] = fmt.Sprintf("65f00000000000000000c%03d", k)
			rec["_templateId"] = tpl["_id"]
			if v := values[k]; v == nil {
				delete(tpl, "deletedAt")
				delete(tpl, "deletedBy")
			} else {
				tpl["deletedAt"], tpl["deletedBy"] = v, ""
			}
			b, err := json.Marshal(rec)
			if err != nil {
				t.Fatal(err)
			}
			return b
		})
		if _, err := jsonl.Import(ctx, s, bytes.NewReader(file), nil); err != nil {
			t.Fatalf("import: %v", err)
		}
		first := dbtest.Export(t, s, importEnv)
		for i, line := range bytes.Split(bytes.TrimSuffix(first, []byte("\n")), []byte("\n")) {
			var rec struct {
				Template map[string]any `json:"template"`
			}
			if err := json.Unmarshal(line, &rec); err != nil {
				t.Fatal(err)
			}
			want := values[i+1]
			if want == nil {
				want = ""
			}
			if got := rec.Template["deletedAt"]; got != want || rec.Template["deletedBy"] != "" {
				t.Errorf("line %d: deletedAt %#v, deletedBy %#v; want %#v and \"\"", i+1, got, rec.Template["deletedBy"], want)
			}
		}
		again := dbtest.Open(t, s.Dialect())
		if _, err := jsonl.Import(ctx, again, bytes.NewReader(first), nil); err != nil {
			t.Fatalf("import of the export: %v", err)
		}
		if diff := cmp.Diff(string(first), string(dbtest.Export(t, again, importEnv))); diff != "" {
			t.Errorf("round trip (-first export +second):\n%s", diff)
		}
	})
}

func TestImportRoundTripsLargePayloads(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		file := importFile(t, 2, func(_ int, rec map[string]any) []byte {
			rec["payload"] = map[string]any{"blob": strings.Repeat("é", 1<<19)} // 1 MiB
			b, _ := json.Marshal(rec)
			return b
		})
		if _, err := jsonl.Import(context.Background(), s, bytes.NewReader(file), nil); err != nil {
			t.Fatal(err)
		}
		first := dbtest.Export(t, s, importEnv)
		for _, m := range dbtest.ExportedMessages(t, first) {
			if len(m.Payload) < 1<<20 {
				t.Errorf("message %s payload is %d bytes, want the 1 MiB imported", m.ID, len(m.Payload))
			}
		}
		fresh := dbtest.Open(t, s.Dialect())
		if _, err := jsonl.Import(context.Background(), fresh, bytes.NewReader(first), nil); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(first, dbtest.Export(t, fresh, importEnv)) {
			t.Error("round trip of large payloads is not byte-identical")
		}
	})
}

func TestImportRefusesAnotherTenantsRecords(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		other := dbtest.NewTenant(t, s, "other")
		theirs := other.Subscriber(t, "user-2")
		mine := dbtest.NewTenant(t, s, "mine")
		tpl := other.Template(t, "theirs")
		msg := other.Message(t, theirs, tpl, nil)
		retarget := func(rec map[string]any) {
			rec["_environmentId"], rec["_organizationId"] = mine.Env.ID, mine.Env.OrganizationID
			for _, k := range []string{"subscriber", "template"} {
				object(rec, k)["_environmentId"], object(rec, k)["_organizationId"] = mine.Env.ID, mine.Env.OrganizationID
			}
		}
		tests := []struct {
			name    string
			before  func()
			edit    func(rec map[string]any)
			message string
		}{
			{"import422SubscriberOfAnotherTenant", nil, func(rec map[string]any) {
				rec["_subscriberId"], object(rec, "subscriber")["_id"] = theirs.ID, theirs.ID
				object(rec, "subscriber")["subscriberId"] = "user-9"
			}, "line 3: subscriber " + theirs.ID + " already exists in another environment"},
			{"import422TemplateOfAnotherTenant", nil, func(rec map[string]any) {
				rec["_templateId"], object(rec, "template")["_id"] = tpl.ID, tpl.ID
			}, "line 3: template " + tpl.ID + " already exists in another environment"},
			{"import422MessageOfAnotherTenant", nil, func(rec map[string]any) { rec["_id"] = msg.ID },
				"line 3: message " + msg.ID + " already exists in another environment"},
			{"import422ExternalIDTaken", func() { mine.Subscriber(t, "user-1") }, func(map[string]any) {},
				`line 2: subscriberId "user-1" already belongs to subscriber`},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				if tc.before != nil {
					tc.before()
				}
				before := dbtest.Export(t, s, other.Env.ID)
				counts := dbtest.RowCounts(t, s)
				file := importFile(t, 5, func(k int, rec map[string]any) []byte {
					retarget(rec)
					if k == 3 {
						tc.edit(rec)
					}
					b, _ := json.Marshal(rec)
					return b
				})
				_, err := jsonl.Import(context.Background(), s, bytes.NewReader(file), nil)
				if models.ErrorCode(err) != models.EINVALID || !strings.HasPrefix(models.ErrorMessage(err), tc.message) {
					t.Fatalf("import error = %v, want EINVALID starting %q", err, tc.message)
				}
				if diff := cmp.Diff(counts, dbtest.RowCounts(t, s)); diff != "" {
					t.Errorf("row counts changed (-before +after):\n%s", diff)
				}
				if diff := cmp.Diff(string(before), string(dbtest.Export(t, s, other.Env.ID))); diff != "" {
					t.Errorf("the other tenant's records changed (-before +after):\n%s", diff)
				}
			})
		}
	})
}

func TestExportUnknownEnvironment(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		dbtest.NewTenant(t, s, "known")
		for _, id := range []string{"65f0000000000000000000ff", "not-an-id", ""} {
			var buf bytes.Buffer
			n, err := jsonl.Export(context.Background(), s, id, &buf, nil)
			if models.ErrorCode(err) != models.ENOTFOUND || n != 0 || buf.Len() != 0 {
				t.Errorf("export %q = %d, %v, %q; want ENOTFOUND and nothing written", id, n, err, buf.String())
			}
		}
	})
}

// TestImportChunked runs the import as on a Galera node, whose write sets are bounded
// (here to 110 rows: chunks of 10 messages): a bad line after many chunks still writes
// nothing (the first pass checks every line), a file or a stream arrives whole, and
// importing it again changes nothing.
func TestImportChunked(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		tn, file, lines := exportedFixture(t, s)
		limit := store.WriteSetLimit{Certified: true, Rows: 110}

		broken := slices.Clone(lines)
		broken[509] = []byte(`{"_id":"nope"}` + "\n")
		fresh := dbtest.Open(t, s.Dialect())
		if _, err := jsonl.ImportChunked(ctx, fresh, bytes.NewReader(bytes.Join(broken, nil)), jsonl.ImportOptions{}, limit); models.ErrorCode(err) != models.EINVALID {
			t.Fatalf("chunked import with a bad line 510: %v, want EINVALID", err)
		}
		if diff := cmp.Diff(map[string]int64{"environments": 0, "subscribers": 0, "templates": 0, "messages": 0}, dbtest.RowCounts(t, fresh)); diff != "" {
			t.Errorf("rows left by a failed chunked import (-want +got):\n%s", diff)
		}

		// The second pass stops at line 300 (a disk failing, the node lost): the chunks
		// before it stay, and the error says so; running the import again completes it.
		stopped := &failingSecondRead{ReadSeeker: bytes.NewReader(file), after: len(bytes.Join(lines[:300], nil))}
		stats, err := jsonl.ImportChunked(ctx, fresh, stopped, jsonl.ImportOptions{}, limit)
		if err == nil || !strings.Contains(err.Error(), "run the same import again") || stats.Committed == 0 || stats.Committed > 300 {
			t.Fatalf("chunked import stopped at line 300: %v, %d lines committed; want an error saying to run it again, and at most the 300 lines before committed", err, stats.Committed)
		}
		if got := dbtest.RowCounts(t, fresh)["messages"]; got != int64(stats.Committed) {
			t.Errorf("%d messages stored after a stop with %d lines committed", got, stats.Committed)
		}

		want := jsonl.ImportStats{Lines: 526, Messages: 526, Subscribers: 17, Templates: 5, Environments: 1, Committed: 526}
		for _, from := range []struct {
			name string
			r    io.Reader
		}{
			{"fileAfterAStop", bytes.NewReader(file)},
			{"stream", io.MultiReader(bytes.NewReader(file))}, // cannot seek: copied first
			{"fileAgain", bytes.NewReader(file)},
		} {
			stats, err := jsonl.ImportChunked(ctx, fresh, from.r, jsonl.ImportOptions{}, limit)
			if err != nil {
				t.Fatalf("%s: %v", from.name, err)
			}
			if diff := cmp.Diff(want, stats); diff != "" {
				t.Errorf("%s: stats (-want +got):\n%s", from.name, diff)
			}
			if diff := cmp.Diff(string(file), string(dbtest.Export(t, fresh, tn.Env.ID))); diff != "" {
				t.Errorf("%s: export of the chunked import differs (-original +imported):\n%s", from.name, diff)
			}
		}
	})
}

// TestImportShardedCommitsEachEnvironmentAlone runs the import as on Vitess, where a
// transaction over several shards is not atomic: each committed chunk is one
// environment's, so a stop inside the second environment leaves exactly the first
// committed (chunked by size alone, its last chunk would have carried the second's first
// lines), and running it again completes both.
func TestImportShardedCommitsEachEnvironmentAlone(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		a, fileA, linesA := exportedFixture(t, s)
		b, fileB, linesB := exportedFixture(t, s)
		file := append(slices.Clone(fileA), fileB...)
		fresh := dbtest.Open(t, s.Dialect())

		// The read fails in the second environment's third line: its first two are read.
		stopped := &failingSecondRead{ReadSeeker: bytes.NewReader(file), after: len(fileA) + len(bytes.Join(linesB[:2], nil)) + 10}
		stats, err := jsonl.ImportSharded(ctx, fresh, stopped, jsonl.ImportOptions{})
		if err == nil || stats.Committed != len(linesA) {
			t.Fatalf("stopped in the second environment's third line: %v, %d lines committed; want an error and the first environment's %d lines committed", err, stats.Committed, len(linesA))
		}
		if _, err := jsonl.ImportSharded(ctx, fresh, bytes.NewReader(file), jsonl.ImportOptions{}); err != nil {
			t.Fatal(err)
		}
		for _, env := range []struct {
			id   string
			file []byte
		}{{a.Env.ID, fileA}, {b.Env.ID, fileB}} {
			if diff := cmp.Diff(string(env.file), string(dbtest.Export(t, fresh, env.id))); diff != "" {
				t.Errorf("environment %s after the import ran again (-original +imported):\n%s", env.id, diff)
			}
		}
	})
}

// failingSecondRead reads normally once through, then fails after its first after bytes:
// the second pass of a chunked import stopping half way.
type failingSecondRead struct {
	io.ReadSeeker
	after, pass, read int
}

func (f *failingSecondRead) Seek(offset int64, whence int) (int64, error) {
	if whence == io.SeekStart {
		f.pass++
		f.read = int(offset)
	}
	return f.ReadSeeker.Seek(offset, whence)
}

func (f *failingSecondRead) Read(p []byte) (int, error) {
	if f.pass >= 1 && f.read >= f.after {
		return 0, errors.New("read error: the disk failed")
	}
	if f.pass >= 1 {
		p = p[:min(len(p), f.after-f.read)]
	}
	n, err := f.ReadSeeker.Read(p)
	f.read += n
	return n, err
}

// The inbox state travels with a message: read, seen, archived and snoozed, with their
// times, are exported and imported as they were, and the counters of the importing
// database count them.
func TestImportRoundTripsInboxState(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		tn := dbtest.NewTenant(t, s, "inbox")
		sub, tpl := tn.Subscriber(t, "ada"), tn.Template(t, "welcome")
		var ids []string
		for range 4 {
			ids = append(ids, tn.Message(t, sub, tpl, nil).ID)
		}
		change := func(ids []string, c models.StateChange) {
			t.Helper()
			if _, err := s.ChangeState(ctx, tn.Env.ID, models.StateTarget{SubscriberID: "ada", MessageIDs: ids}, c); err != nil {
				t.Fatal(err)
			}
		}
		until := models.NewTime(time.Now().Add(time.Hour))
		change(ids[:2], models.StateChange{Read: models.Bool(true), Seen: models.Bool(true)})
		change(ids[1:2], models.StateChange{Archived: models.Bool(true)})
		change(ids[2:3], models.StateChange{SnoozedUntil: &until})
		file := dbtest.Export(t, s, tn.Env.ID)
		for _, field := range []string{`"archived":true`, `"archivedAt":`, `"firstSeenDate":`, `"snoozedUntil":`, `"lastReadDate":`} {
			if !bytes.Contains(file, []byte(field)) {
				t.Errorf("the export has no %s", field)
			}
		}

		fresh := dbtest.Open(t, s.Dialect())
		if _, err := jsonl.Import(ctx, fresh, bytes.NewReader(file), nil); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(string(file), string(dbtest.Export(t, fresh, tn.Env.ID))); diff != "" {
			t.Errorf("export of the import differs (-original +round trip):\n%s", diff)
		}
		ada := "ada"
		want, err := s.CountStates(ctx, tn.Env.ID, &ada, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := fresh.CountStates(ctx, tn.Env.ID, &ada, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got != want || got.Count(models.Unread()) != 1 || got.Count(models.StateFilter{Archived: models.Bool(true)}) != 1 {
			t.Errorf("counts after import %v, want %v (1 unread, 1 archived)", got, want)
		}
	})
}

// A message imported without a severity takes its workflow's; one with its own keeps it;
// the counters count each by it, and the export carries it, so a round trip keeps it.
func TestImportSeverity(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		file := importFile(t, 4, func(k int, rec map[string]any) []byte {
			object(rec, "template")["severity"] = "medium"
			switch k {
			case 1:
				rec["severity"] = "high"
			case 2:
				rec["severity"] = "none"
			}
			b, err := json.Marshal(rec)
			if err != nil {
				t.Fatal(err)
			}
			return b
		})
		if _, err := jsonl.Import(ctx, s, bytes.NewReader(file), nil); err != nil {
			t.Fatal(err)
		}
		counts, err := s.CountStates(ctx, importRecord(t, 1)["_environmentId"].(string), nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		by := map[models.Severity]int{}
		for _, sev := range models.Severities {
			set, _ := models.NewSeveritySet([]models.Severity{sev})
			by[sev] = counts.Count(models.StateFilter{Severities: set})
		}
		if diff := cmp.Diff(map[models.Severity]int{models.SeverityHigh: 1, models.SeverityMedium: 2, models.SeverityLow: 0, models.SeverityNone: 1}, by); diff != "" {
			t.Errorf("messages by severity (-want +got):\n%s", diff)
		}
		exported := dbtest.Export(t, s, importRecord(t, 1)["_environmentId"].(string))
		if n := bytes.Count(exported, []byte(`"severity":"medium"`)); n < 2+4 {
			t.Errorf("the export holds %d severities medium, want the two messages' and each record's template's", n)
		}
		fresh := dbtest.Open(t, s.Dialect())
		if _, err := jsonl.Import(ctx, fresh, bytes.NewReader(exported), nil); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(string(exported), string(dbtest.Export(t, fresh, importRecord(t, 1)["_environmentId"].(string)))); diff != "" {
			t.Errorf("export of the import differs (-original +round trip):\n%s", diff)
		}
	})
}
