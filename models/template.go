package models

// Template is the workflow a message was produced from, embedded in every Message record.
type Template struct {
	ID                  string              `json:"_id" gorm:"primaryKey;size:24"`
	Name                string              `json:"name"`
	Description         string              `json:"description,omitempty"`
	Active              bool                `json:"active"`
	Draft               bool                `json:"draft"`
	PreferenceSettings  *PreferenceSettings `json:"preferenceSettings,omitempty" gorm:"serializer:jsontext"`
	Critical            bool                `json:"critical"`
	Tags                []string            `json:"tags" gorm:"serializer:jsontext"`
	Steps               []Step              `json:"steps" gorm:"serializer:jsontext"`
	OrganizationID      string              `json:"_organizationId"`
	CreatorID           string              `json:"_creatorId,omitempty"`
	EnvironmentID       string              `json:"_environmentId"`
	Triggers            []Trigger           `json:"triggers" gorm:"serializer:jsontext"`
	NotificationGroupID string              `json:"_notificationGroupId,omitempty"`
	ParentID            string              `json:"_parentId,omitempty"`
	Deleted             bool                `json:"deleted"`
	// DeletedAt is text as the platform stores it (the contract types it as a plain
	// string, not a timestamp); nil means no value.
	DeletedAt                 *string            `json:"deletedAt,omitempty"`
	DeletedBy                 string             `json:"deletedBy,omitempty"`
	NotificationGroup         *NotificationGroup `json:"notificationGroup,omitempty" gorm:"serializer:jsontext"`
	Data                      JSON               `json:"data,omitempty"`
	WorkflowIntegrationStatus JSON               `json:"workflowIntegrationStatus,omitempty"`
	// Severity is the workflow's severity, which its messages take when their record
	// names none (import); sent only when set. Empty is none.
	Severity Severity `json:"severity,omitempty"`

	// ChangedAt is the row's version (migration 00007), stamped by the database whenever
	// a value changes and never written here: the template cache is keyed by it.
	ChangedAt Stamp `json:"-" gorm:"->"`
}

// PreferenceSettings says which channels a workflow delivers through by default.
type PreferenceSettings struct {
	Email bool `json:"email"`
	SMS   bool `json:"sms"`
	InApp bool `json:"in_app"`
	Chat  bool `json:"chat"`
	Push  bool `json:"push"`
}

// Step is one step of a workflow; its variants share every field but variants.
type Step struct {
	ID               string         `json:"_id,omitempty"`
	UUID             string         `json:"uuid,omitempty"`
	Name             string         `json:"name,omitempty"`
	TemplateID       string         `json:"_templateId,omitempty"`
	Active           *bool          `json:"active,omitempty"`
	ShouldStopOnFail *bool          `json:"shouldStopOnFail,omitempty"`
	Template         JSON           `json:"template,omitempty"`
	Filters          []StepFilter   `json:"filters,omitempty"`
	ParentID         string         `json:"_parentId,omitempty"`
	Metadata         *StepMetadata  `json:"metadata,omitempty"`
	ReplyCallback    *ReplyCallback `json:"replyCallback,omitempty"`
	Variants         []StepVariant  `json:"variants,omitempty"`
}

// StepVariant is a conditional alternative of a Step.
type StepVariant struct {
	ID               string         `json:"_id,omitempty"`
	UUID             string         `json:"uuid,omitempty"`
	Name             string         `json:"name,omitempty"`
	TemplateID       string         `json:"_templateId,omitempty"`
	Active           *bool          `json:"active,omitempty"`
	ShouldStopOnFail *bool          `json:"shouldStopOnFail,omitempty"`
	Template         JSON           `json:"template,omitempty"`
	Filters          []StepFilter   `json:"filters,omitempty"`
	ParentID         string         `json:"_parentId,omitempty"`
	Metadata         *StepMetadata  `json:"metadata,omitempty"`
	ReplyCallback    *ReplyCallback `json:"replyCallback,omitempty"`
}

// StepFilter decides whether a step runs.
type StepFilter struct {
	IsNegated *bool         `json:"isNegated,omitempty"`
	Type      string        `json:"type,omitempty"`
	Value     string        `json:"value,omitempty"`
	Children  []FilterChild `json:"children,omitempty"`
}

// FilterChild is one condition of a StepFilter.
type FilterChild struct {
	Field    string `json:"field,omitempty"`
	Value    string `json:"value,omitempty"`
	Operator string `json:"operator,omitempty"`
	On       string `json:"on,omitempty"`
}

// StepMetadata configures digest and delay steps.
type StepMetadata struct {
	Amount        *float64 `json:"amount,omitempty"`
	Unit          string   `json:"unit,omitempty"`
	DigestKey     string   `json:"digestKey,omitempty"`
	Type          string   `json:"type,omitempty"`
	Backoff       *bool    `json:"backoff,omitempty"`
	BackoffAmount *float64 `json:"backoffAmount,omitempty"`
	BackoffUnit   string   `json:"backoffUnit,omitempty"`
	UpdateMode    *bool    `json:"updateMode,omitempty"`
}

// ReplyCallback is where replies to a step's message are posted.
type ReplyCallback struct {
	Active *bool  `json:"active,omitempty"`
	URL    string `json:"url,omitempty"`
}

// Trigger is an event that starts the workflow.
type Trigger struct {
	Type                string            `json:"type"`
	Identifier          string            `json:"identifier"`
	Variables           []TriggerVariable `json:"variables"`
	SubscriberVariables []TriggerVariable `json:"subscriberVariables,omitempty"`
}

// TriggerVariable names one variable a trigger carries.
type TriggerVariable struct {
	Name string `json:"name"`
}

// NotificationGroup is the group a workflow belongs to.
type NotificationGroup struct {
	ID             string `json:"_id"`
	Name           string `json:"name"`
	EnvironmentID  string `json:"_environmentId,omitempty"`
	OrganizationID string `json:"_organizationId,omitempty"`
	ParentID       string `json:"_parentId,omitempty"`
}

// Normalize fills the arrays the wire always carries, so they never encode as null.
func (t *Template) Normalize() {
	if t.Tags == nil {
		t.Tags = []string{}
	}
	if t.Steps == nil {
		t.Steps = []Step{}
	}
	if t.Triggers == nil {
		t.Triggers = []Trigger{}
	}
	for i := range t.Triggers {
		if t.Triggers[i].Variables == nil {
			t.Triggers[i].Variables = []TriggerVariable{}
		}
	}
}
