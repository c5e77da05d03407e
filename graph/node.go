package graph

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"

	"messages/graph/model"
	"messages/models"
	"messages/models/service"
)

// A global id (Relay's Global Object Identification) is base64url, unpadded, of
// "<Type>:<_id>", such as "Message:65e1a2b3c4d5e6f708192a3b". It is unique across types
// and opaque to clients, and it is computed, never stored: the records keep `_id` and
// their /v1 JSON does not change.
const (
	typeMessage    = "Message"
	typeSubscriber = "Subscriber"
	typeTemplate   = "Template"
	// maxGlobalIDLength is longer than any global id this server issues
	// (base64 of "Subscriber:" and 24 hex digits is 47 characters).
	maxGlobalIDLength = 64
)

// globalID returns the global id of the record of GraphQL type typ with record id id.
func globalID(typ, id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(typ + ":" + id))
}

// nodeRef is a parsed global id.
type nodeRef struct {
	typ, id string
}

// parseGlobalID reads a global id; ok is false for anything this server did not issue,
// so no query runs for it.
func parseGlobalID(s string) (ref nodeRef, ok bool) {
	if len(s) > maxGlobalIDLength {
		return ref, false
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(s)
	if err != nil {
		return ref, false
	}
	typ, id, found := strings.Cut(string(b), ":")
	if !found || !models.IsID(id) {
		return ref, false
	}
	switch typ {
	case typeMessage, typeSubscriber, typeTemplate:
		return nodeRef{typ: typ, id: id}, true
	}
	return ref, false
}

// resolveNodes answers Query.nodes (and Query.node, with one id): the records the global
// ids name, in their order, each nil when it is malformed, unknown, another environment's
// or, for a subscriber session, another subscriber's message or subscriber. The answer
// for a record the caller may not see is the one for a missing record, so ids reveal
// nothing. One query per type, whatever the number of ids.
func (r *Resolver) resolveNodes(ctx context.Context, ids []string) ([]model.Node, error) {
	if len(ids) > service.MaxNodes {
		return nil, models.Invalid("ids", len(ids), fmt.Sprintf("ids accepts at most %d global ids, got %d", service.MaxNodes, len(ids)))
	}
	refs := make([]nodeRef, len(ids))
	var q models.NodeQuery
	q.EmbedSubscribers, q.EmbedTemplates = nodeParts(ctx)
	seen := map[nodeRef]bool{}
	for i, id := range ids {
		ref, ok := parseGlobalID(id)
		if !ok {
			continue
		}
		refs[i] = ref
		if seen[ref] {
			continue
		}
		seen[ref] = true
		switch ref.typ {
		case typeMessage:
			q.Messages = append(q.Messages, ref.id)
		case typeSubscriber:
			q.Subscribers = append(q.Subscribers, ref.id)
		case typeTemplate:
			q.Templates = append(q.Templates, ref.id)
		}
	}
	found, err := r.Service.Nodes(ctx, q)
	if err != nil {
		return nil, err
	}
	out := make([]model.Node, len(ids))
	for i, ref := range refs {
		// Each case assigns only when found: a typed nil pointer in the interface would
		// not be a null node.
		switch ref.typ {
		case typeMessage:
			if m, ok := found.Messages[ref.id]; ok {
				out[i] = m
			}
		case typeSubscriber:
			if s, ok := found.Subscribers[ref.id]; ok {
				out[i] = s
			}
		case typeTemplate:
			if t, ok := found.Templates[ref.id]; ok {
				out[i] = t
			}
		}
	}
	return out, nil
}
