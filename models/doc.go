// Package models holds the records (Message, Subscriber, Template, Environment, APIKey)
// with their GORM and JSON tags, their coded errors, and the typed inputs every layer
// shares (ListFilter, StateFilter, StateChange, MarkAction, Caller). It imports nothing
// of this module. Each job built on the records is a package below it, importing only
// downward (docs/architecture.md): the service both APIs call (service), all SQL (store),
// migrations (migrate), cluster concerns (cluster), the /v1 JSON form (wire), live
// events (changefeed), sessions (session), sealed API keys (keyseal), file formats
// (jsonl) and generated data (seed).
package models
