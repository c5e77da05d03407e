package graph

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"hash"
	"slices"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"messages/graph/model"
	"messages/models"
)

// A cursor is base64url (unpadded) of
//
//	version (1 byte) | createdAt in Unix milliseconds (8 bytes, big-endian) | id | tag (32 bytes)
//
// where tag is HMAC-SHA256, under the server's cursor secret, of cursorLabel, the caller's
// environment id, the list's filter and everything before the tag. A cursor therefore
// works only for the caller and the filters it was issued for, and a client can neither
// forge one nor edit the position inside: any of these is refused as bad input before
// any query runs.
const (
	cursorVersion = 1
	cursorLabel   = "messages.messagesConnection.cursor"
	tagSize       = sha256.Size
	// maxCursorLength bounds the text decoded; a real cursor is under 100 characters.
	maxCursorLength = 256
)

// badCursor is the one answer for any cursor that does not verify, so a caller cannot
// tell a forged cursor from another tenant's or another filter's.
func badCursor() error {
	return models.Invalid("after", nil,
		"after must be a cursor returned by messagesConnection for the same filters (pageInfo.endCursor or an edge's cursor)")
}

// processCursorSecret is the cursor secret of a server configured without one: random,
// chosen at first use. Its cursors stop verifying when the process restarts, and one
// instance refuses another's, so servers behind a load balancer need Resolver.CursorSecret.
var processCursorSecret = sync.OnceValue(func() []byte {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails (crypto/rand panics instead)
	return b
})

// cursorSecret is the key cursors are signed with.
func (r *Resolver) cursorSecret() []byte {
	if len(r.CursorSecret) > 0 {
		return r.CursorSecret
	}
	return processCursorSecret()
}

// cursorSigner signs and verifies the cursors of one list: one environment and filter.
// It serves one request; it is not safe for concurrent use.
type cursorSigner struct {
	mac hash.Hash
	// bound is what every tag of this list starts with: label, environment and filter.
	bound []byte
}

func newCursorSigner(secret []byte, environmentID string, f models.ListFilter) *cursorSigner {
	b := appendString(nil, cursorLabel)
	b = appendString(b, environmentID)
	b = appendFilter(b, f)
	return &cursorSigner{mac: hmac.New(sha256.New, secret), bound: b}
}

// appendFilter appends a canonical encoding of f: fields in a fixed order, each length
// prefixed, transaction ids sorted and deduplicated (the order they are given in does
// not change the list).
func appendFilter(b []byte, f models.ListFilter) []byte {
	var channel string
	if f.Channel != nil {
		channel = string(*f.Channel)
	}
	b = appendString(b, channel)
	if f.SubscriberID == nil {
		b = append(b, 0)
	} else {
		b = append(b, 1)
		b = appendString(b, *f.SubscriberID)
	}
	ids := slices.Compact(slices.Sorted(slices.Values(f.TransactionIDs)))
	b = binary.AppendUvarint(b, uint64(len(ids)))
	for _, id := range ids {
		b = appendString(b, id)
	}
	return b
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func (c *cursorSigner) tag(payload []byte) []byte {
	c.mac.Reset()
	c.mac.Write(c.bound)
	c.mac.Write(payload)
	return c.mac.Sum(nil)
}

// encode returns the cursor of position k.
func (c *cursorSigner) encode(k models.Keyset) string {
	payload := make([]byte, 0, 1+8+len(k.ID)+tagSize)
	payload = append(payload, cursorVersion)
	payload = binary.BigEndian.AppendUint64(payload, uint64(k.CreatedAt.UnixMilli()))
	payload = append(payload, k.ID...)
	return base64.RawURLEncoding.EncodeToString(append(payload, c.tag(payload)...))
}

// decode verifies a cursor and returns its position, or badCursor.
func (c *cursorSigner) decode(cursor string) (*models.Keyset, error) {
	if len(cursor) > maxCursorLength {
		return nil, badCursor()
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(cursor)
	if err != nil || len(b) < 1+8+1+tagSize || b[0] != cursorVersion {
		return nil, badCursor()
	}
	payload, tag := b[:len(b)-tagSize], b[len(b)-tagSize:]
	if !hmac.Equal(tag, c.tag(payload)) {
		return nil, badCursor()
	}
	ms := int64(binary.BigEndian.Uint64(payload[1:9]))
	return &models.Keyset{CreatedAt: models.NewTime(time.UnixMilli(ms)), ID: string(payload[9:])}, nil
}

// connectionArgs are the validated arguments of messagesConnection.
type connectionArgs struct {
	filter models.ListFilter
	first  int
	// after is the position to start after; nil for the first page.
	after   *models.Keyset
	cursors *cursorSigner
}

// parseConnectionArgs validates the arguments of messagesConnection: the filters as for
// messages, the page size, and the cursor, which must verify for this caller and these
// filters. Nothing is queried before all of them pass.
func parseConnectionArgs(secret []byte, environmentID string, channel *models.ChannelType, subscriberID *string, transactionIDs []string, first *int, after *string) (connectionArgs, error) {
	var a connectionArgs
	var err error
	if a.filter, _, err = parseListArgs(channel, subscriberID, transactionIDs, nil, nil); err != nil {
		return a, err
	}
	a.first = models.DefaultPageSize
	if first != nil {
		if *first < 1 || *first > models.MaxPageSize {
			return a, models.Invalid("first", *first, fmt.Sprintf("first must be an integer from 1 to %d", models.MaxPageSize))
		}
		a.first = *first
	}
	a.cursors = newCursorSigner(secret, environmentID, a.filter)
	if after != nil {
		if a.after, err = a.cursors.decode(*after); err != nil {
			return a, err
		}
	}
	return a, nil
}

// newConnection turns the store's page into the GraphQL shape, signing a cursor per edge.
// hasPreviousPage is exact without a query: after a cursor, the message it names comes
// before the page (messages are never deleted); without one, nothing does.
func newConnection(a connectionArgs, page *models.MessagesConnectionPage) *model.MessageConnection {
	c := &model.MessageConnection{
		Edges:      make([]*models.MessageEdge, len(page.Messages)),
		PageInfo:   model.PageInfo{HasNextPage: page.HasNextPage, HasPreviousPage: a.after != nil},
		TotalCount: page.TotalCount,
	}
	for i, m := range page.Messages {
		c.Edges[i] = &models.MessageEdge{Cursor: a.cursors.encode(models.KeysetOf(m)), Node: m}
	}
	if n := len(c.Edges); n > 0 {
		c.PageInfo.StartCursor = &c.Edges[0].Cursor
		c.PageInfo.EndCursor = &c.Edges[n-1].Cursor
	}
	return c
}

// connectionOptions reads which parts of a MessageConnection a query selects, as
// listOptions does for a MessagesPage: totalCount, and subscriber and template under
// edges.node. Outside a GraphQL operation everything is returned.
func connectionOptions(ctx context.Context) models.ListOptions {
	if !graphql.HasOperationContext(ctx) || graphql.GetFieldContext(ctx) == nil {
		return models.Everything
	}
	op := graphql.GetOperationContext(ctx)
	var o models.ListOptions
	for _, f := range graphql.CollectFieldsCtx(ctx, nil) {
		switch f.Name {
		case "totalCount":
			o.Count = true
		case "edges":
			for _, e := range graphql.CollectFields(op, f.Selections, nil) {
				if e.Name == "node" {
					embeddedOptions(op, e.Selections, &o)
				}
			}
		}
	}
	return o
}

// embeddedOptions records which embedded records a selection on Message asks for.
func embeddedOptions(op *graphql.OperationContext, message ast.SelectionSet, o *models.ListOptions) {
	for _, d := range graphql.CollectFields(op, message, nil) {
		switch d.Name {
		case "subscriber":
			o.Subscribers = true
		case "template":
			o.Templates = true
		}
	}
}
