package model

import "messages/models"

// MessageConnection is one page of a cursor walk over messages, in the shape Relay's
// Cursor Connections specification gives it. The store deals in keysets
// (models.MessagesConnectionPage); the cursors and this shape belong to the API.
type MessageConnection struct {
	Edges    []*models.MessageEdge `json:"edges"`
	PageInfo PageInfo              `json:"pageInfo"`
	// TotalCount is computed only when asked for (models.ListOptions.Count).
	TotalCount int `json:"totalCount"`
}

// PageInfo says whether a connection continues in either direction, and where it starts
// and ends.
type PageInfo struct {
	HasNextPage bool `json:"hasNextPage"`
	// HasPreviousPage is true when the page was asked for after a cursor.
	HasPreviousPage bool `json:"hasPreviousPage"`
	// StartCursor is the cursor of the first edge; nil on an empty page.
	StartCursor *string `json:"startCursor"`
	// EndCursor is the cursor of the last edge; nil on an empty page.
	EndCursor *string `json:"endCursor"`
}
