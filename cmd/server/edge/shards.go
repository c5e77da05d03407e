package edge

import (
	"context"
	"net/http"

	"messages/models"
)

// ShardSlots is the bulkhead of a sharded database (store.Store.EnterShard): a tenant's
// request or operation holds a slot of its environment's shard while it runs, and no
// shard has slots for the whole connection pool, so the requests waiting on a shard that
// stopped answering cannot take every connection from the other shards' tenants.
type ShardSlots interface {
	EnterShard(ctx context.Context, environmentID string) (release func(), err error)
}

// shardSlot takes, for an authenticated request, a slot of its caller's shard before next
// runs, and gives it back after; one that finds none before the request's deadline is
// answered as the database being unavailable (503). A stream or socket holds none: each
// of its operations takes its own (Gate.Operation).
func shardSlot(g *Gate, errs ErrorWriter) Middleware {
	return func(next http.Handler) http.Handler {
		if g.shards == nil {
			return next
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			caller, err := models.CallerFrom(r.Context())
			if err != nil || Streaming(r) || WebSocket(r) {
				next.ServeHTTP(w, r)
				return
			}
			release, err := g.shards.EnterShard(r.Context(), caller.EnvironmentID)
			if err != nil {
				closeUnread(w, r)
				errs.WriteError(w, r, err)
				return
			}
			defer release()
			next.ServeHTTP(w, r)
		})
	}
}
