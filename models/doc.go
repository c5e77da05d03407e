// Package models holds the records and the store that keeps them. The records are the
// API's types with their GORM and JSON tags; the Store is the only code that speaks SQL:
// it opens and migrates the database, reads and writes one tenant's records at a time,
// and answers in coded errors. File formats (models/jsonl) and generated data
// (models/seed) are packages of their own that write through it.
package models
