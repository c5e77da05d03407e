package model

// Node is what Query.node and Query.nodes return: a *models.Message, *models.Subscriber
// or *models.Template. The records live in models and share no method (their JSON is the
// /v1 wire form, which must not gain the global id), so the interface names no method;
// graph/node.go is the only place that makes one.
type Node any
