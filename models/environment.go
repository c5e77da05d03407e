package models

import "time"

// Environment is a tenant: every subscriber, template, message and API key belongs to
// exactly one, and through it to an organization.
type Environment struct {
	ID             string `gorm:"primaryKey;size:24"`
	OrganizationID string `gorm:"size:24"`
	Name           string
	// ApplicationIdentifier is the environment's public name for browsers, which the
	// platform's inbox clients send to open a session; nil until one is given out.
	ApplicationIdentifier *string `gorm:"size:64"`
	CreatedAt             time.Time
}

// APIKey is a secret bound to one environment. Only a SHA-256 hash of the key is kept:
// keys carry 256 random bits, so a fast hash is enough and lookups stay one indexed read.
type APIKey struct {
	ID            string `gorm:"primaryKey;size:24"`
	EnvironmentID string `gorm:"size:24"`
	Name          string
	Hash          string `gorm:"size:64"`
	// Hint is the key's last four characters, to tell keys apart in listings.
	Hint      string `gorm:"size:4"`
	CreatedAt time.Time
	RevokedAt *time.Time
	// Sealed is the key itself, sealed under the server's secret (models/keyseal), for
	// verifying subscriber hashes; nil for a key made while no secret was set.
	Sealed []byte `json:"-"`
}

// TableName keeps the table name readable (GORM would say a_p_i_keys).
func (APIKey) TableName() string { return "api_keys" }
