package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"syscall"
	"time"

	"messages/cmd/server/edge"
	"messages/models/changefeed"
	"messages/models/store"
	"messages/rest"
)

// shutdownGrace is how long in-flight requests get to finish after SIGTERM.
const shutdownGrace = 20 * time.Second

// listener is the HTTP server from the moment it listens: on the starting routes until
// the database is ready, then on the real ones.
type listener struct {
	ln      net.Listener
	conns   *edge.Connections
	handler *switchHandler
	srv     *http.Server
	errc    chan error
	logger  *slog.Logger
}

// listen listens on o.addr, within the connection bounds, and serves the starting routes.
func listen(o serveOptions, logger *slog.Logger, now func() time.Time) (*listener, error) {
	ln, err := net.Listen("tcp", o.addr)
	if errors.Is(err, syscall.EADDRINUSE) {
		return nil, fmt.Errorf("%w: another program listens there; choose another address with --addr or ADDR (for example ADDR=127.0.0.1:8081)", err)
	}
	if err != nil {
		return nil, err
	}
	l := &listener{conns: edge.NewConnections(o.connections, rest.NewErrorWriter(logger, now)), handler: &switchHandler{},
		errc: make(chan error, 1), logger: logger}
	l.ln = l.conns.Listen(ln)
	l.handler.set(startingRoutes(logger, now))
	l.srv = &http.Server{
		Handler:           l.handler,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       o.readTimeout,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    128 << 10, // a URI up to edge.MaxURIBytes (longer is 414) and the usual headers; past this net/http answers 431
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
		ConnContext:       l.conns.ConnContext,
	}
	go func() { l.errc <- l.srv.Serve(l.ln) }()
	return l, nil
}

// abandon stops serving because the database could not be opened: err, unless ctx ended
// first (stopped while waiting for the database: a clean exit, not a failure).
func (l *listener) abandon(ctx context.Context, err error) error {
	if serr := l.shutdown(); serr != nil {
		return serr
	}
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// startFeed starts the change feed behind live events and returns it once it knows where
// it starts, so a change made right after a client subscribed is never taken for one
// made before the feed began. It returns nil when ctx ends first, with shutdown's error.
func (l *listener) startFeed(ctx context.Context, st *store.Store, o changefeed.Options, logger *slog.Logger) (*changefeed.Feed, error) {
	o.Logger = logger
	feed := changefeed.New(st, o)
	go func() { _ = feed.Run(ctx) }()
	select {
	case <-feed.Started():
	case <-ctx.Done():
		return nil, l.shutdown()
	}
	// Streams are not requests Shutdown can wait for: end them, and their clients
	// reconnect to another instance.
	l.srv.RegisterOnShutdown(feed.Shutdown)
	return feed, nil
}

// wait serves until the server fails or ctx ends, then shuts down.
func (l *listener) wait(ctx context.Context) error {
	select {
	case err := <-l.errc:
		return err
	case <-ctx.Done():
	}
	return l.shutdown()
}

// shutdown stops accepting, gives in-flight requests shutdownGrace to finish, and
// returns once the server has stopped.
func (l *listener) shutdown() error {
	l.logger.Info("shutting down", "grace", shutdownGrace.String())
	ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := l.srv.Shutdown(ctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-l.errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
