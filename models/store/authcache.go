package store

import (
	"messages/models"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
)

// DefaultAuthTTL is how long an instance trusts a credential it checked against the
// database: the longest a key revoked through another instance (or the CLI) still
// authenticates here. Revoking through this instance takes effect at once.
const DefaultAuthTTL = 2 * time.Second

// authCacheSize bounds the credentials one instance remembers; past it, the least
// recently used are checked again.
const authCacheSize = 10_000

// authCache remembers recent successful credential checks for a bounded time, so a
// steady client costs one key lookup per TTL instead of one per request. Failures are
// never remembered: a key created a moment ago works at once, and a guessed key always
// costs the database lookup the rate limiter already bounds.
type authCache struct {
	entries *lru.Cache[authKey, authEntry]
}

// authKey is what was checked: an API key's hash, or a session's issuing key id within
// its environment.
type authKey struct {
	hash          string
	environmentID string
	keyID         string
}

type authEntry struct {
	caller models.Caller
	at     time.Time
}

func newAuthCache() authCache {
	return authCache{entries: newLRU[authKey, authEntry](authCacheSize)}
}

// get returns the caller checked for k less than ttl before now.
func (c authCache) get(k authKey, now time.Time, ttl time.Duration) (models.Caller, bool) {
	if ttl <= 0 {
		return models.Caller{}, false
	}
	e, ok := c.entries.Get(k)
	if !ok || now.Sub(e.at) >= ttl || now.Before(e.at) {
		return models.Caller{}, false
	}
	return e.caller, true
}

func (c authCache) put(k authKey, caller models.Caller, now time.Time) {
	c.entries.Add(k, authEntry{caller: caller, at: now})
}

// forgetKey drops every entry of the API key keyID: its own checks and those of the
// sessions it issued.
func (c authCache) forgetKey(keyID string) {
	for _, k := range c.entries.Keys() {
		if e, ok := c.entries.Peek(k); ok && e.caller.KeyID == keyID {
			c.entries.Remove(k)
		}
	}
}
