package engine

import (
	"fmt"
	"strings"
	"time"

	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/planner"
)

// describe describes a stream or table: its columns and topic and, with
// EXTENDED, how late its records arrive at the queries reading it, and
// the query writing it with its counters, its tasks on this instance
// (state, restore progress), its state stores, and warnings when adding
// instances would not speed it up (see scaleWarnings).
func (e *Engine) describe(st *parser.Describe, props map[string]string) (*SourceDescription, error) {
	src, err := e.cat.Lookup(st.Name)
	if err != nil {
		return nil, err
	}
	d := e.sourceDescription(src, st.Extended)
	if !st.Extended {
		return d, nil
	}
	if q := e.query(src.QueryID); q != nil {
		if d.Warnings, err = e.scaleWarnings(q, props); err != nil {
			return nil, fmt.Errorf("describe %s: %w", src.Name, err)
		}
	}
	if d.Runtime, err = e.runtimeText(src); err != nil {
		return nil, err
	}
	return d, nil
}

// runtimeText is what DESCRIBE … EXTENDED says beyond the source's
// description: how late its records arrive, and the query writing it as
// this instance runs it (windows, counters, failures, stalls, tasks,
// owners, state stores).
func (e *Engine) runtimeText(src *planner.Source) (string, error) {
	var b strings.Builder
	q := e.query(src.QueryID)
	e.describeLateness(&b, src)
	if q == nil {
		return b.String(), nil
	}
	for _, sub := range q.Plan.Topology.Subs {
		for _, n := range sub.Nodes {
			if agg, ok := n.(*exec.AggregateNode); ok && agg.Window != nil {
				// Always state the grace and retention in force: the
				// defaults differ by EMIT mode and surprise people.
				fmt.Fprintf(&b, "\nWindow: %s", agg.Window)
				if agg.LateTopic != "" {
					fmt.Fprintf(&b, "; late records to %s", agg.LateTopic)
				}
				b.WriteString("\n")
			}
		}
	}
	m := q.Metrics
	fmt.Fprintf(&b, "\nRecords in: %d, out: %d, late and dropped: %d", m.RecordsIn.Load(), m.RecordsOut.Load(), m.LateDropped.Load())
	for _, kind := range m.ErrorKinds() {
		fmt.Fprintf(&b, ", %s errors: %d", kind, m.Errors()[kind])
	}
	fmt.Fprintf(&b, "\nRestored: %d records in %s\n", m.RestoredRecords.Load(), time.Duration(m.RestoreNanos.Load()).Round(time.Millisecond))
	if n := q.PushSubscribers(); n > 0 {
		fmt.Fprintf(&b, "Scalable push queries on this instance: %d\n", n)
	}
	if err := q.Err(); err != nil {
		fmt.Fprintf(&b, "Query FAILED: %v\n", err)
	}
	if w, ok := q.RegistryWait(); ok {
		fmt.Fprintf(&b, "Schema registry UNAVAILABLE for %s: %s/%d@%d waits for its schema, %d attempts, next in %s: %v\n",
			time.Since(w.Since).Round(time.Second), w.Topic, w.Partition, w.Offset, w.Attempts, max(time.Until(w.Next), 0).Round(time.Millisecond), w.Err)
	}
	writeStalls(&b, q.Stalls())
	b.WriteString("\nTasks on this instance:\n")
	tasks := q.Tasks()
	if len(tasks) == 0 {
		b.WriteString(" (none yet: tasks start when their partition has records)\n")
	}
	for _, t := range tasks {
		fmt.Fprintf(&b, " %s/%d  %s", t.Topic, t.Partition, t.State)
		if r := t.Restore; r != nil {
			fmt.Fprintf(&b, "  %s %d/%d", r.Store, r.Done, r.Total)
			if el := time.Since(r.Started).Seconds(); el > 0 && r.Done > 0 {
				rate := float64(r.Done) / el
				fmt.Fprintf(&b, " (%.0f/s, ETA %s)", rate, (time.Duration(float64(r.Total-r.Done)/rate) * time.Second).Round(time.Second))
			}
		}
		b.WriteString("\n")
	}
	e.writeOwners(&b, q.ID)
	b.WriteString("\nState stores:\n")
	stores, err := e.QueryState(q.ID)
	if err != nil {
		return "", fmt.Errorf("describe %s: %w", src.Name, err)
	}
	for _, s := range stores {
		what := "keys"
		if s.Windowed {
			what = "windows"
		}
		fmt.Fprintf(&b, " %s  changelog %s  %d %s, ~%d bytes local\n", s.Name, s.Changelog, s.Entries, what, s.Bytes)
	}
	return b.String(), nil
}

// writeStalls prints a query's stalled partitions, as DESCRIBE EXTENDED
// shows them.
func writeStalls(b *strings.Builder, stalls []exec.Stall) {
	for _, s := range stalls {
		fmt.Fprintf(b, "Query STALLED: sub-topology %d, %s/%d waits on %s: %d records to read, no progress for %s\n",
			s.SubTopology, s.Topic, s.Partition, s.WaitingOn, s.Lag, time.Since(s.Since).Round(time.Second))
	}
}
