package edge

import (
	"context"
	"net/http"
	"sync"
)

// requestInfo is what the outer guards learn from the inner ones about a request: the
// environment authentication found (for the access log; never the key itself) and the
// error writer of the mount it reached (for panic recovery).
type requestInfo struct {
	Errors ErrorWriter

	// A WebSocket's connection_init authenticates after its request was logged (the
	// upgrade returns at once): the environment is written and read under mu.
	mu            sync.Mutex
	environmentID string
}

// setEnvironment records the environment authentication found.
func (i *requestInfo) setEnvironment(id string) {
	i.mu.Lock()
	i.environmentID = id
	i.mu.Unlock()
}

// environment is the environment authentication found, or "".
func (i *requestInfo) environment() string {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.environmentID
}

type requestInfoKey struct{}

// withRequestInfo returns a context whose requestInfo the inner guards fill in.
func withRequestInfo(ctx context.Context) (context.Context, *requestInfo) {
	info := &requestInfo{}
	return context.WithValue(ctx, requestInfoKey{}, info), info
}

// requestInfoFrom is the request's requestInfo, or nil outside Log.
func requestInfoFrom(ctx context.Context) *requestInfo {
	info, _ := ctx.Value(requestInfoKey{}).(*requestInfo)
	return info
}

// MountErrors records errs as the writer of the mount the request reached, so a panic
// past this point is answered in the mount's own error shape.
func MountErrors(errs ErrorWriter) Middleware {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if info := requestInfoFrom(r.Context()); info != nil {
				info.Errors = errs
			}
			next.ServeHTTP(w, r)
		})
	}
}
