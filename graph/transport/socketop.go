package transport

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"messages/graph/extension"
	"messages/models"
)

// subscribePayload is a subscribe message's operation.
type subscribePayload struct {
	Query         string         `json:"query"`
	DocumentID    string         `json:"documentId"`
	OperationName string         `json:"operationName"`
	Variables     map[string]any `json:"variables"`
	Extensions    map[string]any `json:"extensions"`
}

// subscribe runs one operation: once the socket has a slot among its operations in
// flight (awaitSlot), admitted by the caller's rate limit, then parsed and validated,
// then run within the socket's bounds: a query or mutation in a goroutine of its own, a
// subscription by start. An operation refused (past the rate limit, past the socket's
// subscriptions, a document that does not validate) gets an error message of its own and
// the socket stays open.
func (s *socket) subscribe(id string, payload json.RawMessage) {
	s.mu.Lock()
	ctx, taken := s.caller, s.running[id] != nil
	s.mu.Unlock()
	switch {
	case ctx == nil:
		s.close(closeUnauthorized, "Unauthorized: send connection_init first")
		return
	case taken:
		s.close(closeSubscriberTaken, "Subscriber for "+clip(id, 60)+" already exists")
		return
	}
	start := graphql.Now()
	var p subscribePayload
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.UseNumber()
	if err := dec.Decode(&p); err != nil || len(payload) == 0 {
		s.close(closeBadRequest, "Invalid message received: subscribe's payload must be an object with a query")
		return
	}
	if name, ok := models.RepeatedMember(payload); ok {
		// Decoded, the last would win silently: refused, as an invalid operation is.
		s.refuse(id, gqlerror.List{presentCoded(models.Errorf(models.EMALFORMED, "%s", repeatedMemberError{name}.Error()))})
		return
	}
	if !s.awaitSlot() {
		return
	}
	// A refusal costs what a 429 to a request costs; the socket is kept, as a keep-alive
	// connection is kept after a 429.
	if err := s.t.gate.Admit(ctx); err != nil {
		s.refuse(id, gqlerror.List{presentCoded(err)})
		return
	}
	params := &graphql.RawParams{Query: p.Query, OperationName: p.OperationName, Variables: p.Variables,
		Extensions: p.Extensions, ReadTime: graphql.TraceTiming{Start: start, End: graphql.Now()}}
	ctx = graphql.StartOperationTrace(extension.WithDocumentID(ctx, p.DocumentID))
	oc, errs := s.exec.CreateOperationContext(ctx, params)
	if errs != nil {
		res := s.exec.DispatchError(graphql.WithOperationContext(ctx, oc), errs)
		s.refuse(id, res.Errors)
		return
	}
	op := &socketOp{subscription: oc.Operation.Operation == ast.Subscription}
	s.mu.Lock()
	switch {
	case s.closed:
		s.mu.Unlock()
		return
	case op.subscription && s.subs >= s.t.o.MaxSubscriptions:
		s.mu.Unlock()
		s.refuse(id, gqlerror.List{presentCoded(models.Errorf(models.ERATELIMITED,
			"too many subscriptions: at most %d on one socket; complete one first, or open another socket", s.t.o.MaxSubscriptions))})
		return
	}
	if op.subscription {
		s.subs++
	} else {
		s.inFlight++
	}
	ctx, op.cancel = context.WithCancel(ctx)
	s.running[id] = op
	s.mu.Unlock()
	if op.subscription {
		go s.start(ctx, id, op, oc)
		return
	}
	go s.run(ctx, id, op, oc, params)
}

// awaitSlot waits while the socket runs MaxInFlight queries and mutations, until one
// finishes (each within the request deadline): meanwhile the socket's later messages wait
// in its queue, unhandled, as requests wait for a free connection; none is refused or
// dropped for it. It reports false when the socket closed first.
func (s *socket) awaitSlot() bool {
	for {
		s.mu.Lock()
		full, closed := s.inFlight >= s.t.o.MaxInFlight, s.closed
		s.mu.Unlock()
		switch {
		case closed:
			return false
		case !full:
			return true
		}
		select {
		case <-s.freed:
		case <-s.ops.Done():
			return false
		}
	}
}

// start opens a subscription. When its stream takes a models.Readiness (the resolver
// claims it), the goroutine ends once the subscription is open: the stream calls the
// socket when events are queued, and a drain sends them and lasts only as long as they
// wait. Otherwise the goroutine waits on the stream until it ends.
func (s *socket) start(ctx context.Context, id string, op *socketOp, oc *graphql.OperationContext) {
	r := models.NewReadiness(func() { s.ready(id, op) })
	// Each event is small and made of records already in memory: no byte budget,
	// which would add up over the subscription's life.
	responses, rctx := s.exec.DispatchOperation(models.WithReadiness(models.WithBudget(ctx, nil), r), oc)
	if queued, ok := r.Claimed(); ok {
		op.responses, op.ctx, op.queued = responses, rctx, queued
		// The client's complete, or the socket's close, ends it with no drain running.
		context.AfterFunc(ctx, func() { s.done(id, op) })
		op.armed.Store(true)
		s.ready(id, op) // what was queued before it was armed
		return
	}
	defer s.done(id, op)
	for {
		res := responses(rctx)
		if res == nil {
			break
		}
		s.next(id, op, encodeResult(res))
	}
	s.complete(id, op)
}

// ready is called by a claimed subscription's stream when events are queued: it starts a
// drain unless one runs.
func (s *socket) ready(id string, op *socketOp) {
	if op.armed.Load() && op.taking.CompareAndSwap(false, true) {
		go s.drain(id, op)
	}
}

// drain sends what a claimed subscription's stream has queued (a read of the response
// handler then finds its event without waiting), and completes the subscription when
// the stream ends. An event queued after it found none starts it again.
func (s *socket) drain(id string, op *socketOp) {
	for {
		for op.queued() {
			res := op.responses(op.ctx)
			if res == nil {
				// The stream ended, or the operation did (its context, which the
				// response handler also waits on); no drain runs after this one.
				s.complete(id, op)
				s.done(id, op)
				return
			}
			s.next(id, op, encodeResult(res))
		}
		op.taking.Store(false)
		if !op.queued() || !op.taking.CompareAndSwap(false, true) {
			return
		}
	}
}

// run executes a query or mutation and sends its results, then completes it.
func (s *socket) run(ctx context.Context, id string, op *socketOp, oc *graphql.OperationContext, params *graphql.RawParams) {
	defer s.done(id, op)
	ctx, release := s.t.gate.Operation(ctx)
	defer release()
	serve := func(ctx context.Context, c extension.IdempotencyClaim) []byte {
		responses, ctx := s.exec.DispatchOperation(extension.WithClaim(ctx, c), oc)
		return encodeResult(responses(ctx))
	}
	key, _ := params.Extensions["idempotencyKey"].(string)
	if key == "" || oc.Operation.Operation != ast.Mutation {
		// More than one result only when a fragment is deferred.
		responses, ctx := s.exec.DispatchOperation(ctx, oc)
		for res := responses(ctx); res != nil; res = responses(ctx) {
			s.next(id, op, encodeResult(res))
		}
		s.complete(id, op)
		return
	}
	body, _, err := s.t.gate.Idempotent(ctx, key, serve)
	if err != nil {
		s.refuse(id, gqlerror.List{presentCoded(err)})
		return
	}
	s.next(id, op, body)
	s.complete(id, op)
}

// done uncounts a finished operation, once.
func (s *socket) done(id string, op *socketOp) {
	op.cancel()
	s.mu.Lock()
	defer s.mu.Unlock()
	if op.finished {
		return
	}
	op.finished = true
	if s.running[id] == op {
		delete(s.running, id)
	}
	if op.subscription {
		s.subs--
		return
	}
	s.inFlight--
	select {
	case s.freed <- struct{}{}:
	default: // a wake is pending already
	}
}

// stop ends the operation the client completed; nothing more is sent for it.
func (s *socket) stop(id string) {
	s.mu.Lock()
	op := s.running[id]
	if op != nil {
		op.stopped = true
		delete(s.running, id)
	}
	s.mu.Unlock()
	if op != nil {
		op.cancel()
	}
}

// next sends one result of op, unless the client completed it.
func (s *socket) next(id string, op *socketOp, payload []byte) {
	s.mu.Lock()
	stopped := op.stopped
	s.mu.Unlock()
	if !stopped && payload != nil {
		s.send(appendMessage(nil, "next", id, payload))
	}
}

// complete tells the client op has no more results, unless the client completed it.
func (s *socket) complete(id string, op *socketOp) {
	s.mu.Lock()
	stopped := op.stopped
	s.mu.Unlock()
	if !stopped {
		s.send(appendMessage(nil, "complete", id, nil))
	}
}

// refuse answers an operation refused before it ran with an error message, which ends it.
func (s *socket) refuse(id string, errs gqlerror.List) {
	b, err := json.Marshal(capErrors(errs))
	if err != nil {
		b = []byte(`[{"message":"internal error","extensions":{"code":"INTERNAL_SERVER_ERROR"}}]`)
	}
	s.send(appendMessage(nil, "error", id, b))
}

// appendMessage appends a protocol message: its type, its id when given, and payload
// (JSON) when given.
func appendMessage(b []byte, typ, id string, payload []byte) []byte {
	b = append(b, `{"type":`...)
	b = strconv.AppendQuote(b, typ)
	if id != "" {
		b = append(b, `,"id":`...)
		b = appendJSONString(b, id)
	}
	if len(payload) > 0 {
		b = append(append(b, `,"payload":`...), payload...)
	}
	return append(b, '}')
}

// appendJSONString appends s as a JSON string.
func appendJSONString(b []byte, s string) []byte {
	q, err := json.Marshal(s)
	if err != nil {
		return append(b, `""`...)
	}
	return append(b, q...)
}
