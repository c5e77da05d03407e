package graph

import (
	"messages/graph/model"
	"messages/models/service"
)

// newConnection is the service's cursor page in the shape Relay's Cursor Connections
// specification gives it.
func newConnection(c *service.Connection) *model.MessageConnection {
	mc := &model.MessageConnection{
		Edges:      c.Edges,
		PageInfo:   model.PageInfo{HasNextPage: c.HasNextPage, HasPreviousPage: c.HasPreviousPage},
		TotalCount: c.TotalCount,
	}
	if n := len(c.Edges); n > 0 {
		mc.PageInfo.StartCursor = &c.Edges[0].Cursor
		mc.PageInfo.EndCursor = &c.Edges[n-1].Cursor
	}
	return mc
}
