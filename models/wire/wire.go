// Package wire is the /v1 JSON form of the records, in one place: the bytes the
// platform's SDKs read, written by appenders field by field.
//
// The platform's current generated SDK (@novu/api 3.19.1) parses every response with its
// own schemas (models/components/*.js: messageresponsedto, subscriberresponsedto,
// channelsettingsdto, workflowresponse, notificationstepdto, stepfilterdto,
// fieldfilterpartdto, emailblock, messagebutton, notificationgroup) and refuses a whole
// page when one record lacks a field it requires. A stored record may hold no value for
// such a field, so the encoders below write the empty value of its type ("", false, [],
// {}) where the struct tags would omit it. Every other optional field stays omitted when
// it has no value, never null. rest/sdk_test.go holds the list of required fields.
//
// A message follows its struct tags: its appender (message.generated.go) is generated
// from models/message.go by models/internal/recordgen. Its embedded subscriber and
// template and its content blocks and buttons have wire forms of their own: the
// subscriber's, blocks' and buttons' are appenders (append.go), the template's a struct
// encoded by encoding/json. Steps, filters and channel entries, which the database holds
// as JSON documents, are encoded through their parents, so the stored documents and
// GraphQL (which binds to the same structs and answers null for a missing value) stay as
// they were. Each encoder lists every field of its type in the type's own order, so the
// document order is the contract's; rest/sdk_test.go proves a fully populated value
// encodes byte for byte as the plain struct does.
//
// Values the SDK constrains to a closed set (block types, provider ids, filter types and
// operators, trigger type, metadata type and units, message status) are not invented
// here: import refuses a record outside those sets (models/jsonl/sdkvalues.go), and a
// row written by another writer is sent as stored.
package wire

import (
	"bytes"
	"encoding/json"
	"runtime"
	"sync"
	"weak"

	"messages/models"
)

// Message returns m's /v1 form with its subscriber and template, where m has them.
func Message(m *models.Message) ([]byte, error) {
	var subscriber, template []byte
	var err error
	if m.Subscriber != nil {
		if subscriber, err = Subscriber(m.Subscriber); err != nil {
			return nil, err
		}
	}
	if m.Template != nil {
		if template, err = Template(m.Template); err != nil {
			return nil, err
		}
	}
	return AppendMessage(nil, m, subscriber, template)
}

// Subscriber returns s's /v1 form; each channel entry carries the _integrationId and
// credentials the SDK requires.
func Subscriber(s *models.Subscriber) ([]byte, error) { return appendSubscriber(nil, s) }

// wireChannel is a SubscriberChannel as the SDK requires it.
type wireChannel struct {
	ProviderID            string                     `json:"providerId"`
	IntegrationIdentifier string                     `json:"integrationIdentifier,omitempty"`
	IntegrationID         string                     `json:"_integrationId"`
	Credentials           *models.ChannelCredentials `json:"credentials"`
}

// encodeTemplate writes a workflow template: description, preferenceSettings,
// _creatorId, _notificationGroupId, deletedAt and deletedBy always, every step filter
// whole, and a notification group's ids.
func encodeTemplate(t *models.Template) ([]byte, error) {
	var preferences any = t.PreferenceSettings
	if t.PreferenceSettings == nil {
		// {} rather than five false flags, which would say every channel is off.
		preferences = struct{}{}
	}
	var deletedAt string
	if t.DeletedAt != nil {
		deletedAt = *t.DeletedAt
	}
	steps := make([]wireStep, len(t.Steps))
	for i, s := range t.Steps {
		steps[i] = wireStep{wireStepFields: wireStepOf(stepOf(s))}
		for _, v := range s.Variants {
			steps[i].Variants = append(steps[i].Variants, wireStepOf(variantOf(v)))
		}
	}
	var group *wireGroup
	if g := t.NotificationGroup; g != nil {
		group = &wireGroup{g.ID, g.Name, g.EnvironmentID, g.OrganizationID, g.ParentID}
	}
	return marshalWire(struct {
		ID                        string           `json:"_id"`
		Name                      string           `json:"name"`
		Description               string           `json:"description"`
		Active                    bool             `json:"active"`
		Draft                     bool             `json:"draft"`
		PreferenceSettings        any              `json:"preferenceSettings"`
		Critical                  bool             `json:"critical"`
		Tags                      []string         `json:"tags"`
		Steps                     []wireStep       `json:"steps"`
		OrganizationID            string           `json:"_organizationId"`
		CreatorID                 string           `json:"_creatorId"`
		EnvironmentID             string           `json:"_environmentId"`
		Triggers                  []models.Trigger `json:"triggers"`
		NotificationGroupID       string           `json:"_notificationGroupId"`
		ParentID                  string           `json:"_parentId,omitempty"`
		Deleted                   bool             `json:"deleted"`
		DeletedAt                 string           `json:"deletedAt"`
		DeletedBy                 string           `json:"deletedBy"`
		NotificationGroup         *wireGroup       `json:"notificationGroup,omitempty"`
		Data                      models.JSON      `json:"data,omitempty"`
		WorkflowIntegrationStatus models.JSON      `json:"workflowIntegrationStatus,omitempty"`
		Severity                  models.Severity  `json:"severity,omitempty"`
	}{t.ID, t.Name, t.Description, t.Active, t.Draft, preferences, t.Critical, emptyIfNil(t.Tags),
		steps, t.OrganizationID, t.CreatorID, t.EnvironmentID, emptyIfNil(t.Triggers),
		t.NotificationGroupID, t.ParentID, t.Deleted, deletedAt, t.DeletedBy, group,
		t.Data, t.WorkflowIntegrationStatus, t.Severity})
}

// stepFields is what a step and its variants share.
type stepFields struct {
	ID, UUID, Name, TemplateID string
	Active, ShouldStopOnFail   *bool
	Template                   models.JSON
	Filters                    []models.StepFilter
	ParentID                   string
	Metadata                   *models.StepMetadata
	ReplyCallback              *models.ReplyCallback
}

func stepOf(s models.Step) stepFields {
	return stepFields{s.ID, s.UUID, s.Name, s.TemplateID, s.Active, s.ShouldStopOnFail, s.Template,
		s.Filters, s.ParentID, s.Metadata, s.ReplyCallback}
}

func variantOf(v models.StepVariant) stepFields {
	return stepFields{v.ID, v.UUID, v.Name, v.TemplateID, v.Active, v.ShouldStopOnFail, v.Template,
		v.Filters, v.ParentID, v.Metadata, v.ReplyCallback}
}

// wireStepFields is a step variant on the wire: Step's fields but variants.
type wireStepFields struct {
	ID               string                `json:"_id,omitempty"`
	UUID             string                `json:"uuid,omitempty"`
	Name             string                `json:"name,omitempty"`
	TemplateID       string                `json:"_templateId,omitempty"`
	Active           *bool                 `json:"active,omitempty"`
	ShouldStopOnFail *bool                 `json:"shouldStopOnFail,omitempty"`
	Template         models.JSON           `json:"template,omitempty"`
	Filters          []wireFilter          `json:"filters,omitempty"`
	ParentID         string                `json:"_parentId,omitempty"`
	Metadata         *wireMetadata         `json:"metadata,omitempty"`
	ReplyCallback    *models.ReplyCallback `json:"replyCallback,omitempty"`
}

// wireMetadata is a StepMetadata as the SDK requires it: with its type.
type wireMetadata struct {
	Amount        *float64 `json:"amount,omitempty"`
	Unit          string   `json:"unit,omitempty"`
	DigestKey     string   `json:"digestKey,omitempty"`
	Type          string   `json:"type"`
	Backoff       *bool    `json:"backoff,omitempty"`
	BackoffAmount *float64 `json:"backoffAmount,omitempty"`
	BackoffUnit   string   `json:"backoffUnit,omitempty"`
	UpdateMode    *bool    `json:"updateMode,omitempty"`
}

// wireStep is a step on the wire.
type wireStep struct {
	wireStepFields
	Variants []wireStepFields `json:"variants,omitempty"`
}

func wireStepOf(s stepFields) wireStepFields {
	var filters []wireFilter
	for _, f := range s.Filters {
		var negated bool
		if f.IsNegated != nil {
			negated = *f.IsNegated
		}
		children := make([]wireFilterChild, len(f.Children))
		for i, c := range f.Children {
			children[i] = wireFilterChild(c)
		}
		filters = append(filters, wireFilter{negated, f.Type, f.Value, children})
	}
	var metadata *wireMetadata
	if s.Metadata != nil {
		metadata = (*wireMetadata)(s.Metadata)
	}
	return wireStepFields{s.ID, s.UUID, s.Name, s.TemplateID, s.Active, s.ShouldStopOnFail, s.Template,
		filters, s.ParentID, metadata, s.ReplyCallback}
}

// wireFilter is a StepFilter as the SDK requires it: every field.
type wireFilter struct {
	IsNegated bool              `json:"isNegated"`
	Type      string            `json:"type"`
	Value     string            `json:"value"`
	Children  []wireFilterChild `json:"children"`
}

// wireFilterChild is a FilterChild as the SDK requires it: every field.
type wireFilterChild struct {
	Field    string `json:"field"`
	Value    string `json:"value"`
	Operator string `json:"operator"`
	On       string `json:"on"`
}

// wireGroup is a NotificationGroup as the SDK requires it: with both ids.
type wireGroup struct {
	ID             string `json:"_id"`
	Name           string `json:"name"`
	EnvironmentID  string `json:"_environmentId"`
	OrganizationID string `json:"_organizationId"`
	ParentID       string `json:"_parentId,omitempty"`
}

// emptyIfNil returns s, or an empty slice for nil, so a required array is [] and not null.
func emptyIfNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// marshalWire encodes v as the /v1 responses are written: HTML characters in strings and
// in stored free-form values stay as they are (json.Marshal would escape them, and the
// caller's encoder cannot undo that).
func marshalWire(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// Template returns t's /v1 form, encoding t only once for as long as t lives: the store hands every message of a template version the same read-only
// *Template, so /v1 pages encode each template once, not once per message. t must not
// change after its first call (the store's templates never do), and the bytes returned
// are shared: callers must not modify them.
func Template(t *models.Template) ([]byte, error) {
	key := weak.Make(t)
	if b, ok := templateWire.Load(key); ok {
		return b.([]byte), nil
	}
	b, err := encodeTemplate(t)
	if err != nil {
		return nil, err
	}
	if stored, loaded := templateWire.LoadOrStore(key, b); loaded {
		return stored.([]byte), nil
	}
	runtime.AddCleanup(t, templateWire.Delete, any(key))
	return b, nil
}

// templateWire holds Template's encodings by template identity. It lives here rather
// than in a field of the record: a field would be copied with every Template
// value (and its memo with it), and go-cmp refuses structs with unexported fields. The
// keys are weak and an entry is deleted when its template is collected, so the memo
// keeps nothing alive the store has let go.
var templateWire sync.Map // weak.Pointer[models.Template] -> []byte
