package store

import (
	"context"
	"maps"
	"slices"
	"strings"
	"time"

	"messages/models"
)

// Counts by workflow and creation range, for one subscriber: message_workflow_counts
// (migration 15) holds how many of the subscriber's messages of each channel, workflow
// and calendar month of creation (UTC) are in each state. A filter's count sums the rows
// of its workflows and of the months its range covers whole; a month the range covers
// in part is counted from the messages themselves, grouped as the counters are (by
// workflow and state), through the (environment, subscriber[, channel], created_at)
// index: either the part the range takes, or the part it leaves, subtracted from the
// month's counters, whichever spans less time. The counters and those parts are read in
// one statement, so in one snapshot: a message counts once, whatever commits meanwhile.

// WorkflowCounter is one row of message_workflow_counts: how many of a subscriber's
// messages (internal id) of one channel, one workflow (none: the empty string) and one
// month of creation one shard has counted in one state. Triggers on messages keep the
// rows in the writing transaction (migration 15); only the sum over the shards means
// anything.
type WorkflowCounter struct {
	EnvironmentID string `gorm:"primaryKey"`
	Shard         int    `gorm:"primaryKey;autoIncrement:false"`
	SubscriberID  string `gorm:"primaryKey"`
	Channel       string `gorm:"primaryKey"`
	TemplateID    string `gorm:"primaryKey"`
	// CreatedMonth is the month of the messages' created_at, UTC: 202501.
	CreatedMonth int          `gorm:"primaryKey;autoIncrement:false"`
	State        models.State `gorm:"primaryKey;autoIncrement:false"`
	N            int64
}

// TableName is the table the counters live in.
func (WorkflowCounter) TableName() string { return "message_workflow_counts" }

// month is a calendar month of created_at, UTC, as the counters key it: 202501.
type month int

func monthOf(t time.Time) month {
	t = t.UTC()
	return month(t.Year()*100 + int(t.Month()))
}

func (m month) start() time.Time {
	return time.Date(int(m)/100, time.Month(int(m)%100), 1, 0, 0, 0, 0, time.UTC)
}

// end is the start of the next month.
func (m month) end() time.Time { return m.start().AddDate(0, 1, 0) }

// Bounds of the months a filter covers whole, open at either end.
const (
	firstMonth month = 0
	lastMonth  month = 1 << 30
)

// timeSlice is a part of one month counted from the messages: created_at after from (or
// at it, when fromIncl) and before to (or at it, when toIncl).
type timeSlice struct {
	from, to         time.Time
	fromIncl, toIncl bool
}

// workflowCount is how one filter's count is made: the counters of the months from
// first to last (inclusive; none when last < first), plus the slices added, less the
// slices taken away, each part of its workflows (none: all) and states.
type workflowCount struct {
	first, last month
	add, sub    []int // indexes into the statement's slices
}

// countPlan is the statement's parts: the slices to count (each once, however many
// filters need it) and, by filter, how its count is made of them and the counters.
type countPlan struct {
	slices []timeSlice
	counts []workflowCount
	at     map[timeSlice]int
	now    time.Time
}

func (p *countPlan) slice(s timeSlice) int {
	if i, ok := p.at[s]; ok {
		return i
	}
	p.at[s] = len(p.slices)
	p.slices = append(p.slices, s)
	return len(p.slices) - 1
}

// span is how much of month m, up to now, lies between from and to: a guess at how many
// of its messages a slice reads (messages are written when they are created, so none
// lies ahead of now).
func (p *countPlan) span(m month, from, to time.Time) time.Duration {
	end := m.end()
	if p.now.Before(end) {
		end = p.now
	}
	if to.After(end) {
		to = end
	}
	if from.Before(m.start()) {
		from = m.start()
	}
	if to.Before(from) {
		return 0
	}
	return to.Sub(from)
}

// plan adds f's count: its creation range, both ends included, as months whole and
// slices of the months at its ends.
func (p *countPlan) plan(f models.ListFilter) {
	c := workflowCount{first: firstMonth, last: lastMonth}
	var lo, hi *time.Time
	if f.CreatedFrom != nil {
		t := f.CreatedFrom.UTC()
		lo = &t
	}
	if f.CreatedTo != nil {
		t := f.CreatedTo.UTC()
		hi = &t
	}
	switch {
	case lo != nil && hi != nil && hi.Before(*lo):
		c.first, c.last = lastMonth, firstMonth // an empty range
	case lo != nil && hi != nil && monthOf(*lo) == monthOf(*hi):
		m := monthOf(*lo)
		inside := p.span(m, *lo, *hi)
		outside := p.span(m, m.start(), *lo) + p.span(m, *hi, m.end())
		if lo.Equal(m.start()) || inside <= outside {
			c.first, c.last = lastMonth, firstMonth
			c.add = append(c.add, p.slice(timeSlice{from: *lo, fromIncl: true, to: *hi, toIncl: true}))
		} else {
			c.first, c.last = m, m
			c.sub = append(c.sub, p.slice(timeSlice{from: m.start(), fromIncl: true, to: *lo}),
				p.slice(timeSlice{from: *hi, to: m.end()}))
		}
	default:
		if lo != nil {
			m := monthOf(*lo)
			switch {
			case lo.Equal(m.start()):
				c.first = m
			case p.span(m, *lo, m.end()) <= p.span(m, m.start(), *lo):
				c.first = m + 1 // not a month past December: months compare only
				c.add = append(c.add, p.slice(timeSlice{from: *lo, fromIncl: true, to: m.end()}))
			default:
				c.first = m
				c.sub = append(c.sub, p.slice(timeSlice{from: m.start(), fromIncl: true, to: *lo}))
			}
		}
		if hi != nil {
			m := monthOf(*hi)
			if p.span(m, m.start(), *hi) <= p.span(m, *hi, m.end()) {
				c.last = m - 1
				c.add = append(c.add, p.slice(timeSlice{from: m.start(), fromIncl: true, to: *hi, toIncl: true}))
			} else {
				c.last = m
				c.sub = append(c.sub, p.slice(timeSlice{from: *hi, to: m.end()}))
			}
		}
	}
	p.counts = append(p.counts, c)
}

// CountReadsRows reports whether CountEach, for one subscriber (nil: all), reads messages
// for some of filters and not only counters: the filters the counters do not answer
// (models.ListFilter.Counted), and creation ranges that cover a month in part (a start
// other than a month's first instant, any end). What it reads is bounded by the
// filters' rows, or by half a month of the subscriber's messages per end of a range,
// not by the counters.
func CountReadsRows(subscriberID *string, filters []models.ListFilter) bool {
	for _, f := range filters {
		f.SubscriberID = subscriberID
		if !f.Counted() || f.CreatedTo != nil {
			return true
		}
		if f.CreatedFrom != nil && !f.CreatedFrom.Equal(monthOf(f.CreatedFrom.Time).start()) {
			return true
		}
	}
	return false
}

// stateSQL is a message's state as the counters' triggers compute it (migrations 9 and
// 12), so a slice of messages is grouped exactly as the counters are.
const stateSQL = "(`read` <> 0) + 2 * (seen <> 0) + 4 * (archived <> 0) + 8 * (snoozed_until IS NOT NULL)" +
	" + 16 * (CASE severity WHEN 'high' THEN 3 WHEN 'medium' THEN 2 WHEN 'low' THEN 1 ELSE 0 END)"

// workflowCell is how many messages of one workflow, month (0 in a slice) and state one
// part of the statement read.
type workflowCell struct {
	part     int // -1: the counters; else the slice's index
	template string
	month    month
	state    models.State
	n        int64
}

// countWorkflows counts filters[which] for one subscriber (external id) and channel (nil:
// all), into out, in one statement:
//
//	SELECT -1, template_id, created_month, state, SUM(n) FROM message_workflow_counts WHERE <the subscriber's> GROUP BY 2, 3, 4
//	UNION ALL SELECT 0, template_id, 0, <state>, COUNT(*) FROM messages WHERE <the subscriber's> AND <slice 0> GROUP BY 2, 4
//	UNION ALL ...
//
// The filters' transaction ids must be empty; their own subscriber and channel are
// ignored.
func (s *Store) countWorkflows(ctx context.Context, environmentID, subscriberID string, channel *models.ChannelType, filters []models.ListFilter, which []int, out []int) error {
	p := &countPlan{at: map[timeSlice]int{}, now: s.Now()}
	templates := map[string]struct{}{}
	allTemplates := true
	for _, i := range which {
		f := filters[i]
		p.plan(f)
		if len(f.TemplateIDs) == 0 {
			allTemplates = false
		}
		for _, id := range f.TemplateIDs {
			templates[id] = struct{}{}
		}
	}
	// What every part reads: the subscriber's, of the channel; the counters also only of
	// the filters' workflows when every filter names some (the slices, half a month at
	// most each, need not repeat them).
	scope := " AND subscriber_id = " + oneSubscriber
	scopeArgs := []any{environmentID, subscriberID}
	if channel != nil {
		scope += " AND channel = ?"
		scopeArgs = append(scopeArgs, string(*channel))
	}
	var q strings.Builder
	q.WriteString("SELECT -1, template_id, created_month, state, SUM(n) FROM message_workflow_counts" +
		" WHERE environment_id = ? AND shard IN (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)" + scope)
	args := append([]any{environmentID}, scopeArgs...)
	if allTemplates && len(templates) <= maxCountArgs {
		ids := slices.Sorted(maps.Keys(templates))
		q.WriteString(" AND template_id IN (" + placeholders(len(ids)) + ")")
		for _, id := range ids {
			args = append(args, id)
		}
	}
	q.WriteString(" GROUP BY 2, 3, 4")
	for k, sl := range p.slices {
		from, to := ">", "<"
		if sl.fromIncl {
			from = ">="
		}
		if sl.toIncl {
			to = "<="
		}
		q.WriteString(" UNION ALL SELECT ?, template_id, 0, " + stateSQL + ", COUNT(*) FROM messages WHERE environment_id = ?" +
			scope + " AND created_at " + from + " ? AND created_at " + to + " ? GROUP BY 2, 4")
		args = append(append(append(args, k, environmentID), scopeArgs...), models.NewTime(sl.from), models.NewTime(sl.to))
	}
	rows, err := s.conn(ctx).Raw(q.String(), args...).Rows()
	if err != nil {
		return err
	}
	defer rows.Close()
	var cells []workflowCell
	for rows.Next() {
		var c workflowCell
		var state int64
		if err := rows.Scan(&c.part, &c.template, &c.month, &state, &c.n); err != nil {
			return err
		}
		if state < 0 || state >= models.States {
			continue // no trigger writes one
		}
		c.state = models.State(state)
		cells = append(cells, c)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for n, i := range which {
		out[i] = p.counts[n].count(filters[i], cells)
	}
	return nil
}

// count sums f's cells: the counters of its months and its slices, added or taken away.
func (c workflowCount) count(f models.ListFilter, cells []workflowCell) int {
	var templates map[string]bool
	if len(f.TemplateIDs) > 0 {
		templates = make(map[string]bool, len(f.TemplateIDs))
		for _, id := range f.TemplateIDs {
			templates[id] = true
		}
	}
	sign := make(map[int]int64, len(c.add)+len(c.sub))
	for _, k := range c.add {
		sign[k]++
	}
	for _, k := range c.sub {
		sign[k]--
	}
	var n int64
	for _, cell := range cells {
		if !f.StateFilter.Matches(cell.state) || (templates != nil && !templates[cell.template]) {
			continue
		}
		if cell.part < 0 {
			if cell.month >= c.first && cell.month <= c.last {
				n += cell.n
			}
			continue
		}
		n += sign[cell.part] * cell.n
	}
	return int(n)
}
