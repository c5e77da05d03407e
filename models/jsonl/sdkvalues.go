package jsonl

import (
	"fmt"
	"slices"
	"strings"

	"messages/models"
)

// The closed sets of values the platform's current generated SDK (@novu/api 3.19.1,
// models/components/*.js) accepts in a message record. The SDK refuses a whole response
// when one value lies outside its set, so import refuses such a record (naming the line,
// the field and the set) instead of storing what would break every page it lands on.
// The server never rewrites a stored value: a row written by another writer with a value
// outside these sets is sent as stored (docs/sdk-compatibility.md).
var (
	sdkMessageStatuses = []string{"sent", "error", "warning"}
	sdkBlockTypes      = []string{"button", "text"}
	sdkTextAligns      = []string{"center", "left", "right"}
	sdkCTATypes        = []string{"redirect"}
	sdkTriggerTypes    = []string{"event"}
	sdkFilterTypes     = []string{"BOOLEAN", "TEXT", "DATE", "NUMBER", "STATEMENT", "LIST", "MULTI_LIST", "GROUP"}
	sdkFilterValues    = []string{"AND", "OR"}
	sdkFilterOperators = []string{"LARGER", "SMALLER", "LARGER_EQUAL", "SMALLER_EQUAL", "EQUAL", "NOT_EQUAL",
		"ALL_IN", "ANY_IN", "NOT_IN", "BETWEEN", "NOT_BETWEEN", "LIKE", "NOT_LIKE", "IN"}
	sdkFilterOn = []string{"subscriber", "payload"}
	// The SDK also knows a "scheduled" delay, which needs a delayPath this record does not carry.
	sdkMetadataTypes = []string{"regular", "backoff", "timed"}
	sdkTimeUnits     = []string{"seconds", "minutes", "hours", "days", "weeks", "months"}
	// ChatOrPushProviderEnum: a subscriber's channel entries are chat and push credentials.
	sdkChannelProviders = []string{"slack", "discord", "msteams", "webex-messaging", "mattermost", "ryver",
		"zulip", "grafana-on-call", "getstream", "rocket-chat", "whatsapp-business", "line", "chat-webhook",
		"novu-slack", "telegram", "sendblue", "novu-web-chat", "fcm", "apns", "expo", "one-signal", "pushpad",
		"push-webhook", "pusher-beams", "appio"}
)

// oneOf checks that a value the SDK constrains is in its set; optional values may be "".
func (c *recordCheck) oneOf(field, v string, set []string, required bool) {
	if v == "" && !required {
		return
	}
	c.failIf(!slices.Contains(set, v), "%s %q is not one of %s (the values the platform's SDK accepts)",
		field, v, strings.Join(set, ", "))
}

// object checks that a free-form value the SDK reads as an object is one.
func (c *recordCheck) object(field string, v models.JSON) {
	c.failIf(v != nil && !v.IsObject(), "%s must be a JSON object", field)
}

// sdkValues checks every value of a record that the SDK constrains.
func (c *recordCheck) sdkValues(m *models.Message) {
	c.oneOf("status", m.Status, sdkMessageStatuses, true)
	for i, b := range m.Content {
		c.oneOf(fmt.Sprintf("content[%d].type", i), b.Type, sdkBlockTypes, true)
		if b.Styles != nil {
			c.oneOf(fmt.Sprintf("content[%d].styles.textAlign", i), b.Styles.TextAlign, sdkTextAligns, true)
		}
	}
	c.oneOf("cta.type", m.CTA.Type, sdkCTATypes, false)
	if a := m.CTA.Action; a != nil {
		c.failIf(a.Status != "" && !a.Status.Valid(), "cta.action.status %q is not one of pending, done", a.Status)
		for i, b := range a.Buttons {
			c.failIf(!b.Type.Valid(), "cta.action.buttons[%d].type %q is not one of primary, secondary", i, b.Type)
		}
		if r := a.Result; r != nil {
			c.failIf(r.Type != "" && !r.Type.Valid(), "cta.action.result.type %q is not one of primary, secondary", r.Type)
			c.object("cta.action.result.payload", r.Payload)
		}
	}
	c.object("payload", m.Payload)
	c.object("overrides", m.Overrides)
	c.failIf(m.Severity != "" && !m.Severity.Valid(), "severity %q is not one of high, medium, low, none", m.Severity)
	if sub := m.Subscriber; sub != nil {
		c.object("subscriber.data", sub.Data)
		for i, ch := range sub.Channels {
			c.oneOf(fmt.Sprintf("subscriber.channels[%d].providerId", i), ch.ProviderID, sdkChannelProviders, true)
		}
	}
	if tpl := m.Template; tpl != nil {
		c.failIf(tpl.Severity != "" && !tpl.Severity.Valid(), "template.severity %q is not one of high, medium, low, none", tpl.Severity)
		c.object("template.data", tpl.Data)
		c.object("template.workflowIntegrationStatus", tpl.WorkflowIntegrationStatus)
		for i, tr := range tpl.Triggers {
			c.oneOf(fmt.Sprintf("template.triggers[%d].type", i), tr.Type, sdkTriggerTypes, true)
		}
		for i, s := range tpl.Steps {
			path := fmt.Sprintf("template.steps[%d]", i)
			c.step(path, s.Template, s.Filters, s.Metadata)
			for j, v := range s.Variants {
				c.step(fmt.Sprintf("%s.variants[%d]", path, j), v.Template, v.Filters, v.Metadata)
			}
		}
	}
}

// step checks the constrained values of a step or a variant.
func (c *recordCheck) step(path string, template models.JSON, filters []models.StepFilter, metadata *models.StepMetadata) {
	c.object(path+".template", template)
	for i, f := range filters {
		fp := fmt.Sprintf("%s.filters[%d]", path, i)
		c.oneOf(fp+".type", f.Type, sdkFilterTypes, true)
		c.oneOf(fp+".value", f.Value, sdkFilterValues, true)
		for j, ch := range f.Children {
			cp := fmt.Sprintf("%s.children[%d]", fp, j)
			c.oneOf(cp+".operator", ch.Operator, sdkFilterOperators, true)
			c.oneOf(cp+".on", ch.On, sdkFilterOn, true)
		}
	}
	if md := metadata; md != nil {
		c.oneOf(path+".metadata.type", md.Type, sdkMetadataTypes, true)
		c.oneOf(path+".metadata.unit", md.Unit, sdkTimeUnits, false)
		c.oneOf(path+".metadata.backoffUnit", md.BackoffUnit, sdkTimeUnits, false)
	}
}
