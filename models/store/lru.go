package store

import lru "github.com/hashicorp/golang-lru/v2"

// newLRU returns a least-recently-used cache of size entries, for the store's per-instance
// caches (credentials, templates, page boundaries), whose sizes are constants above zero.
func newLRU[K comparable, V any](size int) *lru.Cache[K, V] {
	c, err := lru.New[K, V](size)
	if err != nil {
		panic(err) // only for a size below 1
	}
	return c
}
