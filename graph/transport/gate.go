package transport

import (
	"context"

	"messages/graph/extension"
)

// Gate is what the /graphql transports of long-lived doors (a WebSocket's messages, an
// event stream) ask of the server's guards, so that every operation passes the same ones
// whatever door it came through (cmd/server/edge.Gate composes them; its comment has the
// table of which guard runs where). A request's own guards are HTTP middleware around the
// handler; these are the same guards, called at the moments a stream has.
type Gate interface {
	// Open authenticates an Authorization value and returns the context carrying its
	// caller.
	Open(ctx context.Context, authorization string) (context.Context, error)
	// Admit takes one operation's rate-limit tokens from ctx's caller.
	Admit(ctx context.Context) error
	// Operation bounds one query or mutation: a deadline and a byte budget; done
	// releases them once its response is written.
	Operation(ctx context.Context) (context.Context, func())
	// Watch calls end, once, when ctx's credential is revoked or expires; stop
	// unregisters.
	Watch(ctx context.Context, end func(error)) (stop func())
	// Idempotent runs serve at most once per key of the caller's environment, with the
	// key's claim for the idempotency extension; it returns serve's JSON response or the
	// one stored under the key (replayed), or a refusal.
	Idempotent(ctx context.Context, key string, serve func(ctx context.Context, c extension.IdempotencyClaim) []byte) (body []byte, replayed bool, err error)
}
