package models

// Subscriber is the recipient of messages, embedded in every Message record.
type Subscriber struct {
	ID           string              `json:"_id" gorm:"primaryKey;size:24"`
	FirstName    string              `json:"firstName,omitempty"`
	LastName     string              `json:"lastName,omitempty"`
	Email        string              `json:"email,omitempty"`
	Phone        string              `json:"phone,omitempty"`
	Avatar       string              `json:"avatar,omitempty"`
	Locale       string              `json:"locale,omitempty"`
	Channels     []SubscriberChannel `json:"channels,omitempty" gorm:"serializer:jsontext"`
	Topics       []string            `json:"topics,omitempty" gorm:"serializer:jsontext"`
	IsOnline     *bool               `json:"isOnline,omitempty"`
	LastOnlineAt *Time               `json:"lastOnlineAt,omitempty"`
	// Version is the record version counter, "__v" on the wire and "_v" in GraphQL,
	// where names starting with two underscores are reserved.
	Version        int    `json:"__v" gorm:"column:v"`
	Data           JSON   `json:"data,omitempty"`
	Timezone       string `json:"timezone,omitempty"`
	SubscriberID   string `json:"subscriberId"`
	OrganizationID string `json:"_organizationId"`
	EnvironmentID  string `json:"_environmentId"`
	Deleted        bool   `json:"deleted"`
	CreatedAt      Time   `json:"createdAt"`
	UpdatedAt      Time   `json:"updatedAt"`

	// ChangedAt is the row's version (migration 00008), stamped by the database whenever
	// a value changes and never written here: the subscriber cache is keyed by it.
	ChangedAt Stamp `json:"-" gorm:"->"`
}

// SubscriberChannel is one set of delivery credentials of a subscriber.
type SubscriberChannel struct {
	ProviderID            string              `json:"providerId"`
	IntegrationIdentifier string              `json:"integrationIdentifier,omitempty"`
	IntegrationID         string              `json:"_integrationId,omitempty"`
	Credentials           *ChannelCredentials `json:"credentials,omitempty"`
}

// ChannelCredentials are the provider-specific addresses of a subscriber.
type ChannelCredentials struct {
	WebhookURL   string   `json:"webhookUrl,omitempty"`
	Channel      string   `json:"channel,omitempty"`
	DeviceTokens []string `json:"deviceTokens,omitempty"`
	AlertUID     string   `json:"alertUid,omitempty"`
	Title        string   `json:"title,omitempty"`
	ImageURL     string   `json:"imageUrl,omitempty"`
	State        string   `json:"state,omitempty"`
	ExternalURL  string   `json:"externalUrl,omitempty"`
}
