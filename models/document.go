package models

import "time"

// TrustedDocument is a GraphQL document a frontend was built with, trusted to run by its
// id (persisted operations as an allowlist, docs/browsers.md). Documents are global, not
// per environment: they are a frontend build's, and one build serves every tenant; the
// caller's credentials still decide whose data a document reads.
type TrustedDocument struct {
	// ID is the id the manifest gives it: Apollo's and GraphQL Code Generator's SHA-256
	// of the text, Relay's MD5, or an id of the build's own.
	ID string `gorm:"primaryKey;size:200"`
	// SHA256 is the hex SHA-256 of Body, computed by the server: what a request's
	// "sha256:<hex>" documentId and Apollo's sha256Hash name.
	SHA256 string `gorm:"column:sha256;size:64"`
	Body   string
	// OperationName is the name of the document's operation, "" when it has none.
	OperationName string `gorm:"size:200"`
	// Manifest is the name of the file it was added from, for documents list.
	Manifest  string `gorm:"size:200"`
	CreatedAt time.Time
}

// TableName names the table in the plural, as the others are.
func (TrustedDocument) TableName() string { return "trusted_documents" }

// DocumentSHA256 returns the hex digest of a "sha256:<64 hex>" document id, as GraphQL
// over HTTP's persisted documents name a document by the hash of its text.
func DocumentSHA256(id string) (string, bool) {
	const prefix = "sha256:"
	if len(id) != len(prefix)+64 || id[:len(prefix)] != prefix {
		return "", false
	}
	sum := id[len(prefix):]
	for i := 0; i < len(sum); i++ {
		if c := sum[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return "", false
		}
	}
	return sum, true
}
