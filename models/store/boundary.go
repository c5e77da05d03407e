package store

import (
	"messages/models"

	lru "github.com/hashicorp/golang-lru/v2"
)

// A walk through every page (page 0, 1, 2, ... of one filter, the way export scripts
// use /v1) would cost OFFSET scans growing with the depth, so the whole walk would grow
// with the square of the list. Instead, an offset page remembers where it ended, and
// the page that continues from there starts at that position (a keyset range of the
// index, as cursors do) when nothing was inserted or deleted under the filter since:
// the filter's exact count, read before each such page, is unchanged. A jump to a page
// no recent page ended at, or any change of the count, reads with OFFSET as before, so
// every page is what OFFSET would return.
//
// Boundaries are per instance: a walk whose requests alternate between instances gets
// the boundary only where its previous page was served. A message whose createdAt is
// rewritten in place (an import replacing it) moves without changing the count; pages
// read across such a rewrite may repeat or skip that message, as OFFSET pages read
// across it also would.

// minBoundaryOffset is the shallowest offset worth a boundary: above it, OFFSET reads
// enough index entries to cost more than the count the boundary check needs.
const minBoundaryOffset = 1000

// boundaryCacheSize bounds the remembered boundaries of one instance (about 150 bytes
// each).
const boundaryCacheSize = 10_000

// boundaryCache maps an offset in one filtered list to the position of the message just
// before it, with the filter's count when that position was read.
type boundaryCache struct {
	entries *lru.Cache[boundaryKey, boundary]
}

type boundaryKey struct {
	filter string
	offset int
}

type boundary struct {
	before models.Keyset
	total  int
}

func newBoundaryCache() boundaryCache {
	return boundaryCache{entries: newLRU[boundaryKey, boundary](boundaryCacheSize)}
}

// filterKey identifies a filter within an environment (models.ListFilter.AppendKey).
func filterKey(environmentID string, f models.ListFilter) string {
	return string(f.AppendKey(append([]byte(environmentID), 0)))
}
