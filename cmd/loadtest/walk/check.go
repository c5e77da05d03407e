package walk

import (
	"fmt"
	"time"
)

// walkCheck follows the messages of a walk as they come: each id must come once, each
// message after the one before it in the API's order (createdAt descending, then _id
// descending), and every page but the last must be full.
type walkCheck struct {
	limit int
	// seen maps each id to the page it came on.
	seen       map[string]int32
	messages   int
	totalCount int // the first page's
	// totalCountChanged counts pages whose totalCount differs from the first's: the
	// data changed during the walk, so missing or extra messages may be writes, not bugs.
	totalCountChanged int
	duplicates        int
	outOfOrder        int
	badTimestamps     int
	shortPages        []int
	examples          []string
	prevCreated       time.Time
	prevID            string
	complete          bool
}

// maxExamples is how many problems the report spells out.
const maxExamples = 10

func newWalkCheck(limit int) *walkCheck {
	return &walkCheck{limit: limit, seen: make(map[string]int32)}
}

func (c *walkCheck) problem(format string, args ...any) {
	if len(c.examples) < maxExamples {
		c.examples = append(c.examples, fmt.Sprintf(format, args...))
	}
}

// page checks page number n.
func (c *walkCheck) page(n int, p *walkPage) {
	if n == 0 {
		c.totalCount = p.TotalCount
	} else if p.TotalCount != c.totalCount {
		c.totalCountChanged++
	}
	if p.HasMore && len(p.Data) < c.limit {
		c.shortPages = append(c.shortPages, n)
		c.problem("page %d has %d messages and says more follow", n, len(p.Data))
	}
	c.complete = !p.HasMore
	for _, m := range p.Data {
		c.messages++
		if first, ok := c.seen[m.ID]; ok {
			c.duplicates++
			c.problem("%s on page %d again (first on page %d)", m.ID, n, first)
		} else {
			c.seen[m.ID] = int32(n)
		}
		created, err := time.Parse(time.RFC3339Nano, m.CreatedAt)
		if err != nil {
			c.badTimestamps++
			c.problem("%s on page %d: createdAt %q", m.ID, n, m.CreatedAt)
			continue
		}
		if c.prevID != "" && !(created.Before(c.prevCreated) || (created.Equal(c.prevCreated) && m.ID < c.prevID)) {
			c.outOfOrder++
			c.problem("%s (%s) on page %d after %s (%s)", m.ID, m.CreatedAt, n, c.prevID, c.prevCreated.Format(time.RFC3339Nano))
		}
		c.prevCreated, c.prevID = created, m.ID
	}
}
