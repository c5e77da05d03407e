package models

import (
	"time"
)

// IdempotencyKey records a request sent with an Idempotency-Key header: which request it
// was (Fingerprint) and the response it got, replayed to every retry until ExpiresAt.
type IdempotencyKey struct {
	EnvironmentID string `gorm:"primaryKey;size:24"`
	Key           string `gorm:"column:idempotency_key;primaryKey"`
	// Fingerprint is a hash of the request (operation, path, canonical body): a retry must
	// match it, another request under the same key is refused.
	Fingerprint string `gorm:"size:64"`
	// Status is the HTTP status of the stored response; 0 while the request is running.
	Status      int
	ContentType string
	Body        []byte
	CreatedAt   time.Time
	ExpiresAt   time.Time
}

// TableName names the table as the migration does.
func (IdempotencyKey) TableName() string { return "idempotency_keys" }

// IdempotencyKeyBusy is the conflict answered while another request holds the same key.
func IdempotencyKeyBusy(key string) *Error {
	return Errorf(ECONFLICT, "a request with Idempotency-Key %q is still in progress; retry later", key)
}
