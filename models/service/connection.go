package service

import (
	"context"
	"fmt"

	"messages/models"
)

// ConnectionQuery is a cursor page as GraphQL's messagesConnection asks for it.
type ConnectionQuery struct {
	// Filter is the list's filters as given; Connection checks them.
	Filter models.ListFilter
	// First is the page size (default models.DefaultPageSize); After the cursor of the
	// message to start after (nil: the first page).
	First *int
	After *string
	// Parts are the parts of the page the caller uses.
	Parts models.ListOptions
}

// Connection is one cursor page: its messages each with the cursor that resumes after
// it, and where the page sits.
type Connection struct {
	Edges           []*models.MessageEdge
	HasNextPage     bool
	HasPreviousPage bool
	TotalCount      int
}

// Connection returns the caller's messages after a cursor, in the list order. The cursor
// must verify for this caller and these filters; nothing is read before every argument
// passes. hasPreviousPage is exact without a query: after a cursor, the message it names
// comes before the page (messages are never deleted); without one, nothing does.
func (s *Service) Connection(ctx context.Context, q ConnectionQuery) (*Connection, error) {
	caller, err := models.CallerFrom(ctx)
	if err != nil {
		return nil, err
	}
	f, err := checkFilter(caller, q.Filter)
	if err != nil {
		return nil, err
	}
	first := models.DefaultPageSize
	if q.First != nil {
		if *q.First < 1 || *q.First > models.MaxPageSize {
			return nil, models.Invalid("first", *q.First, fmt.Sprintf("first must be an integer from 1 to %d", models.MaxPageSize))
		}
		first = *q.First
	}
	cursors := s.cursors.list(caller.EnvironmentID, f)
	var after *models.Keyset
	if q.After != nil {
		if after, err = cursors.decode(*q.After); err != nil {
			return nil, err
		}
	}
	found, err := s.store.MessagesAfter(ctx, caller.EnvironmentID, f, after, first, q.Parts)
	if err != nil {
		return nil, err
	}
	c := &Connection{Edges: make([]*models.MessageEdge, len(found.Messages)), HasNextPage: found.HasNextPage,
		HasPreviousPage: after != nil, TotalCount: found.TotalCount}
	for i, m := range found.Messages {
		c.Edges[i] = &models.MessageEdge{Cursor: cursors.encode(models.KeysetOf(m)), Node: m}
	}
	return c, nil
}
