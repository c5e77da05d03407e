package graph

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"messages/graph/errcode"
	"messages/models"
)

// errorsEntry is one entry of GraphQL's errors array.
type errorsEntry struct {
	Message    string            `json:"message"`
	Extensions map[string]string `json:"extensions"`
}

// ErrorsArray is err as GraphQL's errors array, for errors written outside gqlgen (by
// the HTTP edge's guards) so GraphQL clients find their usual shape: err's message and
// its extensions.code, BAD_REQUEST for refusals only HTTP has words for (413, 415, 429).
func ErrorsArray(err error) any {
	code := errcode.Of(err)
	var httpOnly interface{ HTTPStatus() int }
	if errors.As(err, &httpOnly) {
		code = "BAD_REQUEST"
	}
	return []errorsEntry{{Message: err.Error(), Extensions: map[string]string{"code": code}}}
}

// presentError gives every error an extensions.code. Coded errors keep their message and,
// for bad input, name the offending field; anything uncoded is logged under an error id
// and shown as "internal error" only.
func (r *Resolver) presentError(ctx context.Context, err error) *gqlerror.Error {
	var gqlErr *gqlerror.Error
	if errors.As(err, &gqlErr) && gqlErr.Err == nil {
		// gqlgen's own parse, validation and limit errors are already safe; the few it
		// leaves uncoded (a malformed persisted-query extension) are about the request
		// itself. The transports never echo a body they could not decode (package transport).
		if _, ok := gqlErr.Extensions["code"]; !ok {
			if gqlErr.Extensions == nil {
				gqlErr.Extensions = map[string]any{}
			}
			gqlErr.Extensions["code"] = "BAD_REQUEST"
		}
		return gqlErr
	}
	presented := graphql.DefaultErrorPresenter(ctx, err)
	var e *models.Error
	if !errors.As(err, &e) {
		switch {
		case errors.Is(err, context.Canceled):
			// The client went away (it disconnected, or its socket closed): nothing
			// failed, and nobody reads the answer.
			e = models.Errorf(models.EUNAVAILABLE, "the request was cancelled")
		case models.IsUnavailable(err):
			e = models.Unavailable(r.Now())
			r.Logger.ErrorContext(ctx, "database unavailable", "errorId", e.ID, "path", presented.Path.String(), "error", err)
		default:
			e = models.Internal(r.Now())
			r.Logger.ErrorContext(ctx, "graphql resolver failed", "errorId", e.ID, "path", presented.Path.String(), "error", err)
		}
	}
	presented.Message = e.Message
	presented.Extensions = map[string]any{"code": errcode.For(e.Code)}
	if e.ID != "" {
		presented.Extensions["errorId"] = e.ID
	}
	for field := range e.Fields {
		presented.Extensions["field"] = field
	}
	if len(e.Fields) > 0 {
		presented.Extensions["errors"] = e.Fields
	}
	return presented
}

// recoverPanic turns a resolver panic into an internal error, logging the stack under
// the error id the client is shown.
func (r *Resolver) recoverPanic(ctx context.Context, p any) error {
	e := models.Internal(r.Now())
	r.Logger.ErrorContext(ctx, "graphql resolver panicked", "errorId", e.ID, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
	return e
}
