package engine

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/planner"
)

// sourceLateness returns what the queries on this instance measured of
// how late the records of src arrive: since each query started (all),
// and over the last exec.RecentWindow (recent). Queries reading one
// source see the same records, so adding up their histograms would count
// each record once per query; the query that has read the most speaks
// for the source.
func (e *Engine) sourceLateness(src *planner.Source, now time.Time) (all, recent exec.Histogram, ok bool) {
	for _, q := range e.Queries() {
		if q.Metrics == nil {
			continue
		}
		l := q.Metrics.Lateness(src.Topic)
		if l == nil {
			continue
		}
		a, r := l.Snapshot(now)
		if !ok || a.Count() > all.Count() {
			all, recent, ok = a, r, true
		}
	}
	return all, recent, ok
}

// describeLateness writes DESCRIBE EXTENDED's lateness section: the
// distribution since the queries started, and the grace periods that
// would have kept 99% and 99.9% of the records.
func (e *Engine) describeLateness(b *strings.Builder, src *planner.Source) {
	all, _, ok := e.sourceLateness(src, time.Now())
	if !ok || all.Count() == 0 {
		fmt.Fprintf(b, "\nLateness: not measured yet (no query on this instance has read %s)\n", src.Name)
		return
	}
	fmt.Fprintf(b, "\nLateness (records behind stream time, %d seen): p50 %s, p90 %s, p99 %s, max %s\n", all.Count(),
		latenessText(all.Quantile(0.5)), latenessText(all.Quantile(0.9)), latenessText(all.Quantile(0.99)), latenessText(all.Max()))
	fmt.Fprintf(b, "Grace to keep 99%%: %s, 99.9%%: %s\n", latenessText(all.Quantile(0.99)), latenessText(all.Quantile(0.999)))
}

// warnThreshold is the share of recent records a grace period may drop
// before EXPLAIN warns.
const warnThreshold = 0.01

// graceWarning is EXPLAIN's warning for a windowed query whose grace
// period would have dropped more than warnThreshold of the records
// recently read from its source, with a grace that keeps 99%; "" when
// the query is not windowed, nothing was measured, or the grace is
// enough. A record is counted as dropped when it was later than the
// grace: whether it really is depends also on where its window ends, so
// this is an upper bound, and a grace of its lateness always keeps it.
func (e *Engine) graceWarning(sel *parser.Select) string {
	grace, ok := windowGrace(sel)
	if !ok {
		return ""
	}
	src, err := e.cat.Lookup(sel.From.Name)
	if err != nil {
		return ""
	}
	_, recent, ok := e.sourceLateness(src, time.Now())
	n := recent.Count()
	if !ok || n == 0 {
		return ""
	}
	dropped := recent.Above(grace.Milliseconds())
	share := float64(dropped) / float64(n)
	if share <= warnThreshold {
		return ""
	}
	p99 := recent.Quantile(0.99)
	return fmt.Sprintf("WARNING: GRACE %s would have dropped %.1f%% of the %d records recently read from %s (p99 lateness %s); GRACE %s keeps 99%%\n",
		graceText(grace), 100*share, n, src.Name, latenessText(p99), graceText(suggestedGrace(p99)))
}

// windowGrace is the grace period of a query's WINDOW clause, with the
// default the planner applies when none is written: none with EMIT
// FINAL, ksqlDB's 24 hours less the window size with EMIT CHANGES.
func windowGrace(sel *parser.Select) (time.Duration, bool) {
	w := sel.Window
	switch {
	case w == nil:
		return 0, false
	case w.HasGrace:
		return w.Grace, true
	case sel.Emit == parser.EmitFinal:
		return 0, true
	}
	return max(planner.DefaultGrace-w.Size, 0), true
}

// selectOf is the query of a statement that has one.
func selectOf(st parser.Statement) *parser.Select {
	switch s := st.(type) {
	case *parser.Select:
		return s
	case *parser.CreateSource:
		return s.Query
	case *parser.InsertSelect:
		return s.Query
	}
	return nil
}

// latenessText shows a lateness in milliseconds to about two significant
// digits, which is all the histogram's 1.6% precision supports:
// "850ms", "4.1s", "37s", "2m13s".
func latenessText(ms int64) string {
	d := time.Duration(ms) * time.Millisecond
	switch {
	case d < time.Second:
	case d < 10*time.Second:
		d = d.Round(100 * time.Millisecond)
	case d < time.Hour:
		d = d.Round(time.Second)
	default:
		d = d.Round(time.Minute)
	}
	return d.String()
}

// suggestedGrace rounds a lateness in milliseconds up to a grace a user
// would write: whole seconds under ten minutes, whole minutes under ten
// hours, whole hours beyond.
func suggestedGrace(ms int64) time.Duration {
	d := time.Duration(ms) * time.Millisecond
	ceil := func(unit time.Duration) time.Duration { return (d + unit - 1) / unit * unit }
	switch {
	case d < time.Second:
		return d
	case d < 10*time.Minute:
		return ceil(time.Second)
	case d < 10*time.Hour:
		return ceil(time.Minute)
	}
	return ceil(time.Hour)
}

// graceText writes a duration as the compact window syntax does (`5s`,
// `90s`, `2m`), in the largest unit that divides it, so the text can be
// pasted into a WINDOW clause.
func graceText(d time.Duration) string {
	units := []struct {
		d    time.Duration
		abbr string
	}{{24 * time.Hour, "d"}, {time.Hour, "h"}, {time.Minute, "m"}, {time.Second, "s"}, {time.Millisecond, "ms"}}
	if d <= 0 {
		return "0s"
	}
	for _, u := range units {
		if d%u.d == 0 {
			return strconv.FormatInt(int64(d/u.d), 10) + u.abbr
		}
	}
	return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
}
