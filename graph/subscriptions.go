package graph

import (
	"context"
	"time"

	"github.com/99designs/gqlgen/graphql/handler/transport"
	coderws "github.com/coder/websocket"

	"messages/models"
)

// The transports of subscriptions on /graphql: WebSocket with graphql-transport-ws
// (what the graphql-ws client speaks) and Server-Sent Events (graphql-sse's distinct
// connections mode). A WebSocket carries its credential in connection_init's payload,
// because a browser cannot set headers on one; Server-Sent Events are a plain POST, so
// the HTTP edge authenticates them by header like any request.

// WebSocket close codes of a refused connection_init (graphql-ws's conventions).
const (
	closeForbidden   = 4403 // no valid credential: the client must not retry as it is
	closeRateLimited = 4429 // over the caller's rate limit: retry later
	closeTryAgain    = 1013 // the database could not be asked: retry later
)

const (
	// initTimeout is how long a socket may stay open without connection_init.
	initTimeout = 10 * time.Second
	// sseKeepAlive is how often an idle event stream gets a comment line, so proxies do
	// not close it.
	sseKeepAlive = 15 * time.Second
)

// websocketTransport accepts graphql-transport-ws sockets. Origins are checked by the
// HTTP edge, with the same list as CORS, before the upgrade reaches here. ping, when
// positive, is how often the server pings each socket, closing one whose client has not
// answered two intervals later. By default the server does not ping, as graphql-ws's
// own server does not: clients keep their sockets alive (graphql-ws's keepAlive option
// pings, and the server answers), and the operating system's TCP keep-alive, which the
// server enables, finds peers that vanished. Server pings cost a goroutine and a timer
// per socket and, at 10,000 sockets every 25 s, about 8% of a core.
func (r *Resolver) websocketTransport(ping time.Duration) transport.Websocket {
	return transport.Websocket{
		Implementation:   transport.CoderWebsocketImplementation{AcceptOptions: coderws.AcceptOptions{InsecureSkipVerify: true}},
		InitFunc:         r.initWebSocket,
		InitTimeout:      initTimeout,
		PingPongInterval: ping,
	}
}

func sseTransport() transport.SSE {
	return transport.SSE{KeepAlivePingInterval: sseKeepAlive}
}

// initWebSocket authenticates a socket by the Authorization entry of connection_init's
// payload ("ApiKey <key>" or "Bearer <session token>") and counts it against the
// caller's rate limits. A refusal closes the socket with 4403, 4429 when over the rate
// limit, or 1013 when the database is unreachable; a session's socket closes when its
// token expires, and the client reconnects with a new token.
func (r *Resolver) initWebSocket(ctx context.Context, p transport.InitPayload) (context.Context, *transport.InitPayload, error) {
	caller, err := r.authenticateCredential(ctx, p.Authorization())
	if err == nil && r.AdmitStream != nil {
		err = r.AdmitStream(ctx, caller)
	}
	if err != nil {
		code, reason := closeForbidden, "Forbidden: "+err.Error()
		switch {
		case models.ErrorCode(err) == models.ERATELIMITED:
			code, reason = closeRateLimited, "Too many requests: "+err.Error()
		case models.IsUnavailable(err):
			code, reason = closeTryAgain, "database unavailable, retry later"
			err = models.Errorf(models.EUNAVAILABLE, "%s", reason)
		}
		if len(reason) > 120 { // a close frame's reason holds at most 123 bytes
			reason = reason[:120]
		}
		return transport.AppendCloseReason(transport.WithWebsocketCloseCode(ctx, code), reason), nil, err
	}
	ctx = models.WithCaller(ctx, caller)
	if !caller.ExpiresAt.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(transport.AppendCloseReason(ctx, "session expired"), caller.ExpiresAt)
		context.AfterFunc(ctx, cancel)
	}
	return ctx, nil, nil
}

// authenticateCredential resolves an Authorization value to its caller.
func (r *Resolver) authenticateCredential(ctx context.Context, authorization string) (models.Caller, error) {
	c, err := models.ParseCredential(authorization)
	if err != nil {
		return models.Caller{}, err
	}
	if c.Token != "" {
		return r.AuthenticateSession(ctx, c.Token)
	}
	return r.Authenticate(ctx, c.APIKey)
}
