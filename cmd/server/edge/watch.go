package edge

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"messages/models"
)

// DefaultWatchInterval is how often the credentials of open streams are checked again: a
// revoked key loses its streams within the store's authentication TTL (2 s) and one
// interval, an expired session within one interval.
const DefaultWatchInterval = time.Second

// KeyChecker tells which API keys are no longer valid (the resolver layer, over the
// store): those of keyIDs revoked or deleted, in one query however many there are.
type KeyChecker interface {
	RevokedKeys(ctx context.Context, keyIDs []string) ([]string, error)
}

// Watch keeps long-lived doors (WebSockets, event streams) no longer open than their
// credential is valid. It holds each door as state, not as a goroutine: one goroutine,
// running while anything is watched, asks once per interval which of the API keys
// behind open doors were revoked (one statement for all of them: every session a key
// issued shares its check), compares each session's expiry with the clock, and ends the
// doors whose credential failed.
type Watch struct {
	keys     KeyChecker
	now      func() time.Time
	interval time.Duration
	logger   *slog.Logger

	mu      sync.Mutex
	byKey   map[string]*doors // by API key id: the credential or a session's issuer
	running bool
}

// doors are the open doors of one API key, and when the first of their sessions expires
// (zero when none does): a check looks at each door only when its key was revoked or
// that time has come, not at every door every interval.
type doors struct {
	open    map[*watcher]struct{}
	soonest time.Time
}

// watcher is one open door.
type watcher struct {
	key     string
	scoped  bool      // a subscriber session, not the API key itself
	expires time.Time // zero for an API key
	end     func(error)
}

// NewWatch returns a watch over keys, on the clock now (time.Now when nil), checking
// every interval (DefaultWatchInterval when 0 or less).
func NewWatch(keys KeyChecker, now func() time.Time, interval time.Duration, logger *slog.Logger) *Watch {
	if now == nil {
		now = time.Now
	}
	if interval <= 0 {
		interval = DefaultWatchInterval
	}
	if logger == nil {
		logger = slog.Default()
	}
	return &Watch{keys: keys, now: now, interval: interval, logger: logger, byKey: map[string]*doors{}}
}

// Add watches caller's credential and calls end, once, when it fails; stop unregisters.
func (w *Watch) Add(caller models.Caller, end func(error)) (stop func()) {
	if w == nil {
		return func() {}
	}
	m := &watcher{key: caller.KeyID, scoped: caller.Scoped(), expires: caller.ExpiresAt, end: end}
	w.mu.Lock()
	set := w.byKey[m.key]
	if set == nil {
		set = &doors{open: map[*watcher]struct{}{}}
		w.byKey[m.key] = set
	}
	set.open[m] = struct{}{}
	if !m.expires.IsZero() && (set.soonest.IsZero() || m.expires.Before(set.soonest)) {
		set.soonest = m.expires
	}
	if !w.running {
		w.running = true
		go w.run()
	}
	w.mu.Unlock()
	return func() { w.remove(m) }
}

// Len is the number of doors watched, for metrics and tests.
func (w *Watch) Len() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, set := range w.byKey {
		n += len(set.open)
	}
	return n
}

// remove unregisters m and reports whether it was still registered.
func (w *Watch) remove(m *watcher) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	set := w.byKey[m.key]
	if set == nil {
		return false
	}
	if _, ok := set.open[m]; !ok {
		return false
	}
	// soonest may now be early: the check that reaches it finds nothing expired and
	// sets it again.
	delete(set.open, m)
	if len(set.open) == 0 {
		delete(w.byKey, m.key)
	}
	return true
}

// run checks every interval until nothing is watched.
func (w *Watch) run() {
	t := time.NewTicker(w.interval)
	defer t.Stop()
	for range t.C {
		if !w.check() {
			return
		}
	}
}

// check ends the doors whose key was revoked or whose session expired, and reports
// whether anything is still watched (when not, run stops until the next Add).
func (w *Watch) check() bool {
	w.mu.Lock()
	if len(w.byKey) == 0 {
		w.running = false
		w.mu.Unlock()
		return false
	}
	keys := make([]string, 0, len(w.byKey))
	for k := range w.byKey {
		keys = append(keys, k)
	}
	w.mu.Unlock()

	ctx, cancel := context.WithTimeout(context.Background(), w.interval)
	revokedKeys, err := w.keys.RevokedKeys(ctx, keys)
	cancel()
	if err != nil {
		// The database could not say: the doors stay open, and the next check asks again.
		w.logger.Warn("checking the API keys of open streams failed", "error", err)
	}
	gone := make(map[string]bool, len(revokedKeys))
	for _, k := range revokedKeys {
		gone[k] = true
	}
	var ended []*watcher
	var causes []error
	now := w.now()
	w.mu.Lock()
	for k, set := range w.byKey {
		if !gone[k] && (set.soonest.IsZero() || now.Before(set.soonest)) {
			continue
		}
		set.soonest = time.Time{}
		for m := range set.open {
			switch {
			case gone[k]:
				ended, causes = append(ended, m), append(causes, revoked(m))
			case !m.expires.IsZero() && !now.Before(m.expires):
				ended, causes = append(ended, m), append(causes, models.Errorf(models.EUNAUTHORIZED, "session expired"))
			case !m.expires.IsZero() && (set.soonest.IsZero() || m.expires.Before(set.soonest)):
				set.soonest = m.expires
			}
		}
	}
	w.mu.Unlock()
	for i, m := range ended {
		if w.remove(m) {
			m.end(causes[i])
		}
	}
	return true
}

// revoked is the reason a door of a revoked key ends.
func revoked(m *watcher) error {
	if m.scoped {
		return models.Errorf(models.EUNAUTHORIZED, "session token is no longer valid: the API key that issued it was revoked")
	}
	return models.Errorf(models.EUNAUTHORIZED, "API key was revoked")
}
