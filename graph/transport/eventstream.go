package transport

import (
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"messages/graph/extension"
	"messages/models"
)

// EventStream serves an operation as Server-Sent Events: graphql-sse's
// distinct connections mode, a POST whose Accept asks for text/event-stream. The HTTP
// edge has authenticated and rate-limited the request by its headers as any request;
// here the stream passes the rest of the Gate: its body is read under the server's read
// timeout, which is lifted only then; a query or mutation runs under the request
// deadline and a byte budget (Operation), a mutation with an Idempotency-Key once per key
// (Idempotent); and a subscription ends, with a final error event, when its credential
// is revoked or expires (Watch).
//
// Each result is an event "next" with the result as data, and the stream ends with an
// event "complete"; a comment line every eventStreamKeepAlive keeps proxies from closing
// an idle stream. A subscription's stream, once begun, is served on the poller, with no
// goroutine while it is idle (eventpoll.go).
type EventStream struct{ gate Gate }

// NewEventStream returns the transport whose streams pass gate.
func NewEventStream(gate Gate) EventStream { return EventStream{gate: gate} }

const (
	// eventStreamKeepAlive is how often an idle event stream gets a comment line.
	eventStreamKeepAlive = 15 * time.Second
	// eventStreamWriteTimeout bounds the write of one event: a client that stops reading
	// is dropped instead of holding the stream.
	eventStreamWriteTimeout = 10 * time.Second
)

var _ graphql.Transport = EventStream{}

// Supports takes POST requests with a JSON body that accept text/event-stream.
func (EventStream) Supports(r *http.Request) bool {
	if r.Method != http.MethodPost || !strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
		return false
	}
	mediaType, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return err == nil && mediaType == mediaJSON
}

// Do reads the operation, then streams its results.
func (t EventStream) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	start := graphql.Now()
	params, documentID, err := decodeBody(r.Body)
	if err != nil {
		// Not a stream yet: answered as the POST transport answers a malformed request.
		x := &exchange{w: w, r: r, exec: exec, media: mediaJSON}
		status := http.StatusBadRequest
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			status = http.StatusRequestEntityTooLarge
		}
		x.refuse(r.Context(), status, malformed(err.Error()))
		return
	}
	params.Headers = r.Header
	params.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}

	s := &eventStream{w: w, rc: http.NewResponseController(w)}
	// Authenticated and read: from here the stream lasts as long as its client listens,
	// each write bounded on its own.
	_ = s.rc.SetReadDeadline(time.Time{})
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	if !s.write(":\n\n") {
		return
	}
	s.keepAlive = time.AfterFunc(eventStreamKeepAlive, s.ping)
	defer s.stop()

	ctx := graphql.StartOperationTrace(extension.WithDocumentID(r.Context(), documentID))
	oc, errs := exec.CreateOperationContext(ctx, params)
	if errs != nil {
		res := exec.DispatchError(graphql.WithOperationContext(ctx, oc), errs)
		s.next(encodeResult(&graphql.Response{Errors: res.Errors, Extensions: res.Extensions}))
		s.complete()
		return
	}
	if oc.Operation.Operation == ast.Subscription {
		if !t.pollSubscription(ctx, s, r, exec, oc) {
			t.subscription(ctx, s, exec, oc)
		}
		return
	}
	ctx, release := t.gate.Operation(ctx)
	defer release()
	serve := func(ctx context.Context, c extension.IdempotencyClaim) []byte {
		responses, ctx := exec.DispatchOperation(extension.WithClaim(ctx, c), oc)
		return encodeResult(responses(ctx))
	}
	key := r.Header.Get("Idempotency-Key")
	if key == "" || oc.Operation.Operation != ast.Mutation {
		responses, ctx := exec.DispatchOperation(ctx, oc)
		for res := responses(ctx); res != nil; res = responses(ctx) {
			if !s.next(encodeResult(res)) {
				return
			}
		}
		s.complete()
		return
	}
	body, _, err := t.gate.Idempotent(ctx, key, serve)
	if err != nil {
		body = encodeResult(&graphql.Response{Errors: gqlerror.List{presentCoded(err)}})
	}
	s.next(body)
	s.complete()
}

// subscription streams a subscription's events until it ends, its client leaves, or its
// credential stops being valid: then a last event carries the reason as an error.
func (t EventStream) subscription(ctx context.Context, s *eventStream, exec graphql.GraphExecutor, oc *graphql.OperationContext) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := t.gate.Watch(ctx, func(err error) { cancel(err) })
	defer stop()
	responses, ctx := exec.DispatchOperation(models.WithBudget(ctx, nil), oc)
	s.relay(ctx, responses)
}

// relay writes a subscription's results as they come, on the caller's goroutine, until
// its stream ends, its client leaves, or its context ends for a reason (endCause): then
// a last event carries the reason as an error.
func (s *eventStream) relay(ctx context.Context, responses graphql.ResponseHandler) {
	for {
		res := responses(ctx)
		if cause := endCause(ctx); cause != nil {
			s.next(causeResult(cause))
			break
		}
		if res == nil {
			break
		}
		if !s.next(encodeResult(res)) {
			return
		}
	}
	s.complete()
}

// endCause is why a subscription's context was ended other than by its client's leaving
// or its own end (a revoked or expired credential), or nil.
func endCause(ctx context.Context) error {
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
		return cause
	}
	return nil
}

// causeResult is the last result of a subscription ended for cause.
func causeResult(cause error) []byte {
	return encodeResult(&graphql.Response{Errors: gqlerror.List{presentCoded(cause)}})
}

// eventStream writes one stream's events, each flushed at once.
type eventStream struct {
	w         http.ResponseWriter
	rc        *http.ResponseController
	mu        sync.Mutex
	failed    bool
	keepAlive *time.Timer
}

// next writes a result; false when the client is gone.
func (s *eventStream) next(data []byte) bool {
	return s.write(string(eventNext(data)))
}

// complete ends the stream.
func (s *eventStream) complete() { s.write("event: complete\n\n") }

// ping writes the keep-alive comment and schedules the next.
func (s *eventStream) ping() {
	if s.write(": ping\n\n") {
		s.mu.Lock()
		if s.keepAlive != nil {
			s.keepAlive.Reset(eventStreamKeepAlive)
		}
		s.mu.Unlock()
	}
}

// stop ends the keep-alive comments and any write after the handler returns.
func (s *eventStream) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keepAlive.Stop()
	s.keepAlive = nil
	s.failed = true
}

// write sends text and flushes it within eventStreamWriteTimeout.
func (s *eventStream) write(text string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failed {
		return false
	}
	_ = s.rc.SetWriteDeadline(time.Now().Add(eventStreamWriteTimeout))
	if _, err := io.WriteString(s.w, text); err != nil {
		s.failed = true
		return false
	}
	if err := s.rc.Flush(); err != nil {
		s.failed = true
		return false
	}
	return true
}
