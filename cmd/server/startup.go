package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"messages/cmd/server/edge"
	"messages/graph"
	"messages/models"
	"messages/models/store"
	"messages/rest"
)

// Bounds of one attempt to reach the database at start. Opening is a ping; migrating a
// small schema takes well under a second, so a minute means the database stopped answering.
const (
	openTimeout    = 10 * time.Second
	migrateTimeout = time.Minute
)

// backoff is the wait between attempts to reach the database at start: it doubles from
// min up to max, so a short outage is bridged quickly and a long one is not hammered.
type backoff struct {
	min, max time.Duration
	next     time.Duration
}

// startBackoff is the production schedule: 0.5 s, 1 s, 2 s, 4 s, 8 s, then every 10 s.
var startBackoff = backoff{min: 500 * time.Millisecond, max: 10 * time.Second}

// wait returns the next delay and doubles the one after it.
func (b *backoff) wait() time.Duration {
	d := b.next
	if d < b.min {
		d = b.min
	}
	b.next = min(2*d, b.max)
	return d
}

// connect opens and migrates the database, retrying with backoff for as long as it is
// unreachable, with one log line per failed attempt. It gives up at once on errors that
// waiting cannot fix (a malformed URL, refused credentials, a schema newer than this
// binary), and returns ctx's error when ctx ends first.
func connect(ctx context.Context, c config, logger *slog.Logger, b backoff, opts ...store.OpenOption) (*store.Store, error) {
	for attempt := 1; ; attempt++ {
		s, err := openAndMigrate(ctx, c, logger, opts...)
		if err == nil {
			if attempt > 1 {
				logger.Info("database reachable", "attempts", attempt, "database", store.RedactURL(c.databaseURL))
			}
			return s, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if !models.IsUnavailable(err) {
			return nil, errors.New(redactError(err, c.databaseURL))
		}
		d := b.wait()
		logger.Warn(fmt.Sprintf("database unreachable, retrying in %s", d),
			"attempt", attempt, "database", store.RedactURL(c.databaseURL), "error", redactError(err, c.databaseURL))
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(d):
		}
	}
}

// openAndMigrate is one attempt of connect, each step under its own deadline so a
// database that accepts connections but never answers cannot stall the start. GORM logs
// through logger, as every other part of the server does.
func openAndMigrate(ctx context.Context, c config, logger *slog.Logger, opts ...store.OpenOption) (*store.Store, error) {
	openCtx, cancel := context.WithTimeout(ctx, openTimeout)
	defer cancel()
	s, err := store.Open(openCtx, c.databaseURL, c.pool, append([]store.OpenOption{store.WithLogger(logger), store.WithShardURLs(c.shardURLs)}, opts...)...)
	if err != nil {
		return nil, err
	}
	migrateCtx, cancel := context.WithTimeout(ctx, migrateTimeout)
	defer cancel()
	if err := s.Migrate(migrateCtx); err != nil {
		_ = s.Close()
		return nil, err
	}
	return s, nil
}

// redactError is err's text with the database password, should a driver ever echo it,
// replaced as RedactURL does.
func redactError(err error, databaseURL string) string {
	text := err.Error()
	if u, perr := url.Parse(databaseURL); perr == nil && u.User != nil {
		if pass, ok := u.User.Password(); ok && pass != "" {
			text = strings.ReplaceAll(text, pass, "xxxxx")
		}
	}
	return text
}

// switchHandler serves whichever handler was set last, so the server can listen before
// the database is reachable and switch to the real routes once it is.
type switchHandler struct{ h atomic.Pointer[http.Handler] }

func (s *switchHandler) set(h http.Handler) { s.h.Store(&h) }

func (s *switchHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	(*s.h.Load()).ServeHTTP(w, r)
}

// startingRoutes answer while the database is not reachable yet: /healthz says the
// process is alive, /readyz says 503, and every other request gets a 503 with
// Retry-After and the documented error body (with GraphQL's errors array on /graphql).
func startingRoutes(logger *slog.Logger, now func() time.Time) http.Handler {
	v1Errors := rest.NewErrorWriter(logger, now)
	gqlErrors := v1Errors.WithErrors(graph.ErrorsArray)
	unavailable := models.Errorf(models.EUNAVAILABLE, "%s", models.UnavailableMessage)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeStatus(w, http.StatusOK, "ok")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		writeStatus(w, http.StatusServiceUnavailable, "starting")
	})
	mux.HandleFunc("/graphql", func(w http.ResponseWriter, r *http.Request) {
		gqlErrors.WriteError(w, r, unavailable)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		v1Errors.WriteError(w, r, unavailable)
	})
	return edge.Log(logger, now)(mux)
}

// readyz answers 200 only when the database answers and every migration is applied, so a
// load balancer sends traffic only to an instance that can serve it. It needs no key and
// says nothing about the database beyond that.
func readyz(s *store.Store) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if err := s.Ping(ctx); err != nil {
			writeStatus(w, http.StatusServiceUnavailable, "database unreachable")
			return
		}
		applied, err := s.MigrationsApplied(ctx)
		switch {
		case err != nil:
			writeStatus(w, http.StatusServiceUnavailable, "database unreachable")
		case !applied:
			writeStatus(w, http.StatusServiceUnavailable, "migrations pending")
		default:
			writeStatus(w, http.StatusOK, "ok")
		}
	}
}
