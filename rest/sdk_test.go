package rest

import (
	"encoding/json"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"messages/models"
)

// sdkRequired lists, for each object of the /v1 message record (by its path in the
// record, "" for the record itself), the fields the platform's current generated SDK
// requires: @novu/api 3.19.1, read from its models/components/*.js response schemas
// (messageresponsedto, emailblock, emailblockstyles, messagecta, messagebutton,
// subscriberresponsedto, channelsettingsdto, workflowresponse, stepfilterdto,
// fieldfilterpartdto, digestregularmetadata, notificationtrigger,
// notificationtriggervariable, notificationgroup). The SDK refuses a whole response when
// one record lacks one, so the server sends each always, with the empty value of its
// type when the stored record has none (models/wire.go). rest/testdata/sdk checks this
// list against the SDK itself, through the OpenAPI document.
var sdkRequired = map[string][]string{
	"": {"_environmentId", "_organizationId", "_notificationId", "_subscriberId", "createdAt",
		"transactionId", "channel", "read", "seen", "cta", "status"},
	"content[]":             {"type", "content"},
	"content[].styles":      {"textAlign"},
	"cta.action.buttons[]":  {"type", "content"},
	"subscriber":            {"subscriberId", "_organizationId", "_environmentId", "deleted", "createdAt", "updatedAt"},
	"subscriber.channels[]": {"providerId", "credentials", "_integrationId"},
	"template": {"name", "description", "active", "draft", "preferenceSettings", "critical", "tags", "steps",
		"_organizationId", "_creatorId", "_environmentId", "triggers", "_notificationGroupId", "deleted",
		"deletedAt", "deletedBy"},
	"template.steps[].filters[]":                       {"isNegated", "type", "value", "children"},
	"template.steps[].filters[].children[]":            {"field", "value", "operator", "on"},
	"template.steps[].metadata":                        {"type"},
	"template.steps[].variants[].filters[]":            {"isNegated", "type", "value", "children"},
	"template.steps[].variants[].filters[].children[]": {"field", "value", "operator", "on"},
	"template.steps[].variants[].metadata":             {"type"},
	"template.triggers[]":                              {"type", "identifier", "variables"},
	"template.triggers[].variables[]":                  {"name"},
	"template.triggers[].subscriberVariables[]":        {"name"},
	"template.notificationGroup":                       {"name", "_environmentId", "_organizationId"},
}

// minimalRecord is a message with nothing optional stored: every embedded object and
// list the record can hold is there once, holding no value at all.
func minimalRecord() models.Message {
	return models.Message{
		Subscriber: &models.Subscriber{Channels: []models.SubscriberChannel{{}}},
		Template: &models.Template{
			Steps: []models.Step{{
				Filters:  []models.StepFilter{{Children: []models.FilterChild{{}}}},
				Metadata: &models.StepMetadata{},
				Variants: []models.StepVariant{{
					Filters:  []models.StepFilter{{Children: []models.FilterChild{{}}}},
					Metadata: &models.StepMetadata{},
				}},
			}},
			Triggers: []models.Trigger{{
				Variables:           []models.TriggerVariable{{}},
				SubscriberVariables: []models.TriggerVariable{{}},
			}},
			NotificationGroup: &models.NotificationGroup{},
		},
		Content: []models.ContentBlock{{Styles: &models.ContentStyles{}}},
		CTA:     models.CTA{Action: &models.CTAAction{Buttons: []models.CTAButton{{}}}},
	}
}

// objectsAt returns the JSON objects found at path ("a.b[].c") in v.
func objectsAt(v any, path string) []map[string]any {
	if path == "" {
		if m, ok := v.(map[string]any); ok {
			return []map[string]any{m}
		}
		return nil
	}
	head, rest, _ := strings.Cut(path, ".")
	name, list := strings.CutSuffix(head, "[]")
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	next := []any{m[name]}
	if list {
		items, _ := m[name].([]any)
		next = items
	}
	var out []map[string]any
	for _, n := range next {
		out = append(out, objectsAt(n, rest)...)
	}
	return out
}

// A record with nothing optional stored, encoded for /v1, carries every field the SDK
// requires, at every level, and no null.
func TestSDKRequiredFieldsOnMinimalRecord(t *testing.T) {
	t.Parallel()
	_, body := rendered(t, 200, minimalRecord())
	var record any
	if err := json.Unmarshal(body, &record); err != nil {
		t.Fatal(err)
	}
	if path := nullAt(record, ""); path != "" {
		t.Errorf("%s is null:\n%s", path, body)
	}
	for path, fields := range sdkRequired {
		objects := objectsAt(record, path)
		if len(objects) == 0 {
			t.Errorf("%q: the minimal record has no object there:\n%s", path, body)
		}
		for _, o := range objects {
			for _, f := range fields {
				if _, ok := o[f]; !ok {
					t.Errorf("%q: %s is missing:\n%s", path, f, body)
				}
			}
		}
	}
}

// The empty values are those of the field's type, and a missing optional object stays
// omitted: nothing the record does not hold is invented.
func TestSDKRequiredFieldsEmptyValues(t *testing.T) {
	t.Parallel()
	_, body := rendered(t, 200, minimalRecord())
	var record map[string]any
	if err := json.Unmarshal(body, &record); err != nil {
		t.Fatal(err)
	}
	tpl := record["template"].(map[string]any)
	for field, want := range map[string]any{"description": "", "_creatorId": "", "_notificationGroupId": "",
		"deletedAt": "", "deletedBy": ""} {
		if got := tpl[field]; got != want {
			t.Errorf("template.%s = %#v, want %#v", field, got, want)
		}
	}
	if got, ok := tpl["preferenceSettings"].(map[string]any); !ok || len(got) != 0 {
		t.Errorf("template.preferenceSettings = %#v, want {}", tpl["preferenceSettings"])
	}
	filter := objectsAt(record, "template.steps[].filters[]")[0]
	if filter["isNegated"] != false {
		t.Errorf("filter.isNegated = %#v, want false", filter["isNegated"])
	}
	channel := objectsAt(record, "subscriber.channels[]")[0]
	if got, ok := channel["credentials"].(map[string]any); !ok || len(got) != 0 {
		t.Errorf("channel.credentials = %#v, want {}", channel["credentials"])
	}
	for _, absent := range []string{"_templateId", "subject", "payload", "lastSeenDate", "deviceTokens"} {
		if _, ok := record[absent]; ok {
			t.Errorf("optional %s is sent although the record has none", absent)
		}
	}
	if _, ok := tpl["_parentId"]; ok {
		t.Error("optional template._parentId is sent although the template has none")
	}
	step := objectsAt(record, "template.steps[]")[0]
	if keys := slices.Sorted(mapsKeys(step)); !slices.Equal(keys, []string{"filters", "metadata", "variants"}) {
		t.Errorf("an empty step sends %v, want only the objects it holds", keys)
	}
}

// nullAt returns the path of the first null in v, or "".
func nullAt(v any, path string) string {
	switch x := v.(type) {
	case nil:
		return path + " "
	case map[string]any:
		for k, e := range x {
			if p := nullAt(e, path+"."+k); p != "" {
				return p
			}
		}
	case []any:
		for _, e := range x {
			if p := nullAt(e, path+"[]"); p != "" {
				return p
			}
		}
	}
	return ""
}

func mapsKeys(m map[string]any) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// The wire encoders (models/wire) list every field in the record's own order: a fully
// populated message, with its subscriber, template, blocks and buttons, encodes byte for
// byte as its plain struct tags would have it.
func TestWireEncodersKeepEveryFieldInOrder(t *testing.T) {
	t.Parallel()
	m := filled()
	_, got := rendered(t, 200, m)
	rec := httptest.NewRecorder()
	writeJSON(rec, 200, m) // no record has a MarshalJSON of its own: its struct tags
	if want := rec.Body.Bytes(); string(got) != string(want) {
		t.Errorf("a full message on the wire:\n got %s\nwant %s", got, want)
	}
}
