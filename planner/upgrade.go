package planner

import (
	"fmt"
	"slices"
	"strings"

	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/types"
)

// CREATE OR REPLACE … AS SELECT upgrades a running query in place: the
// new plan keeps the query's id, consumer group, offsets and state, so
// it resumes where the old one stopped. That is only sound when what
// carries over still fits (the rules ksqlDB follows):
//
//   - the query reads the same sources;
//   - every stateful step (aggregation, join, window, the repartitions
//     in front of them) is unchanged, since its stores and changelogs hold
//     state in the old step's layout; stateless steps (WHERE, the
//     projection) may change freely;
//   - the sink keeps its topic and formats, and its columns: the new
//     schema has the old columns, unchanged and in order, and may add
//     value columns after them.
//
// Anything else is refused with the reason; TERMINATE and DROP, then
// CREATE, start the query over instead.

// CheckUpgrade says whether the running query old may be replaced by
// next in place.
func CheckUpgrade(old, next *Query) error {
	if !slices.Equal(sortedNames(old.Sources), sortedNames(next.Sources)) {
		return fmt.Errorf("%w: Cannot upgrade query %s in place: it reads %s, the new statement reads %s. TERMINATE the query and DROP %s to start over.",
			ErrInvalid, old.ID, strings.Join(old.Sources, ", "), strings.Join(next.Sources, ", "), sinkName(old))
	}
	if a, b := statefulSteps(old.Topology), statefulSteps(next.Topology); !slices.Equal(a, b) {
		return fmt.Errorf("%w: Cannot upgrade query %s in place: its stateful steps change (%s → %s), and their state would not fit. TERMINATE the query and DROP %s to start over.",
			ErrInvalid, old.ID, stepList(a), stepList(b), sinkName(old))
	}
	if old.Sink == nil || next.Sink == nil {
		return nil
	}
	o, n := old.Sink, next.Sink
	if o.Topic != n.Topic || !strings.EqualFold(o.KeyFormat, n.KeyFormat) || !strings.EqualFold(o.ValueFormat, n.ValueFormat) || o.Window != n.Window {
		return fmt.Errorf("%w: Cannot upgrade data source %s: its topic, formats or windowing change (topic %s, key %s, value %s → topic %s, key %s, value %s).",
			ErrInvalid, o.Name, o.Topic, o.KeyFormat, o.ValueFormat, n.Topic, n.KeyFormat, n.ValueFormat)
	}
	if bad := upgradeBreaks(o.Schema, n.Schema); len(bad) > 0 {
		return fmt.Errorf("%w: Cannot upgrade data source: DataSource '`%s`' has schema = %s which is not upgrade compatible with %s. The following columns are changed, missing or reordered: [%s]",
			ErrInvalid, o.Name, schemaText(o.Schema), schemaText(n.Schema), strings.Join(bad, ", "))
	}
	return nil
}

// upgradeBreaks lists the old columns the new schema does not keep in
// place: every old column must be at its position with its name, type
// and role; columns after them are additions (value columns only).
func upgradeBreaks(old, next types.Schema) []string {
	var bad []string
	for i, c := range old.Columns {
		if i >= len(next.Columns) {
			bad = append(bad, columnText(c))
			continue
		}
		n := next.Columns[i]
		if !strings.EqualFold(c.Name, n.Name) || !c.Type.Equal(n.Type) || c.Key != n.Key {
			bad = append(bad, columnText(c))
		}
	}
	for _, n := range next.Columns[min(len(old.Columns), len(next.Columns)):] {
		if n.Key {
			bad = append(bad, columnText(n))
		}
	}
	return bad
}

func columnText(c types.Column) string {
	s := fmt.Sprintf("`%s` %s", c.Name, c.Type)
	if c.Key {
		s += " KEY"
	}
	return s
}

func schemaText(s types.Schema) string {
	parts := make([]string, len(s.Columns))
	for i, c := range s.Columns {
		parts[i] = columnText(c)
	}
	return strings.Join(parts, ", ")
}

// statefulSteps describes, sub-topology by sub-topology, the steps that
// keep state or re-key records for them, and the stores they use.
func statefulSteps(t *exec.Topology) []string {
	var out []string
	for _, sub := range t.Subs {
		for _, n := range sub.Nodes {
			if n.Stateful() {
				out = append(out, fmt.Sprintf("%d: %s [%s]", sub.ID, n.Describe(), strings.Join(n.StoreNames(), ",")))
			}
		}
	}
	for _, it := range t.Internal {
		out = append(out, "repartition "+it.Name)
	}
	return out
}

func stepList(steps []string) string {
	if len(steps) == 0 {
		return "none"
	}
	return strings.Join(steps, "; ")
}

func sortedNames(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = strings.ToUpper(n)
	}
	slices.Sort(out)
	return out
}

func sinkName(q *Query) string {
	if q.Sink != nil {
		return q.Sink.Name
	}
	return "its sink"
}
