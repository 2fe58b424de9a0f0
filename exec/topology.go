package exec

import (
	"fmt"
	"strings"
	"time"
)

// SubTopology is a chain of operators fed by one source topic and, for a
// join, by further co-partitioned topics (Sides) whose rows enter the
// chain at a join node. A query splits into several sub-topologies at
// repartition topics. A task of the sub-topology reads partition p of
// each of its topics.
type SubTopology struct {
	ID     int
	Source *SourceSpec
	Nodes  []Node
	Sides  []*SideInput
	// Copy, when set, lets a task copy a record's JSON text into its
	// result instead of running Nodes (the planner's json-copy rule).
	Copy *JSONCopy
	// Read, when set, says Nodes run over rows read from a table's state
	// store, not over records of Source (a pull query on a table).
	Read *StoreRead
}

// SideInput is a further input of a sub-topology: its rows go to the
// ProcessSide of the operator of Nodes[Node], as side Side.
type SideInput struct {
	Source *SourceSpec
	Node   int
	Side   int
}

// Inputs lists the sources of the sub-topology, the main one first.
func (s *SubTopology) Inputs() []*SourceSpec {
	out := []*SourceSpec{s.Source}
	for _, si := range s.Sides {
		out = append(out, si.Source)
	}
	return out
}

// StoreSpec names a state store and its changelog topic.
type StoreSpec struct {
	Name      string
	Changelog string
	Windowed  bool
	// FromSource, when set, says the changelog is that source topic of
	// the sub-topology (a table a join reads): nothing is produced to it,
	// the checkpoint's changelog offset is the task's position in the
	// topic, and a restore decodes its records as the source does.
	FromSource *SourceSpec
	// Partitions is the partition count of the changelog, equal to that
	// of the sub-topology's source.
	Partitions int32
	// RetentionMs bounds a windowed store's changelog (compact,delete).
	RetentionMs int64
}

// TopicSpec is a topic the query needs created: repartition topics and
// changelogs.
type TopicSpec struct {
	Name       string
	Partitions int32
	Configs    map[string]string
}

// Topology is the physical plan of one query.
type Topology struct {
	QueryID string
	Subs    []*SubTopology
	// NoCopy makes every record go through the operator chain, even one
	// whose result a task could copy (SubTopology.Copy): tests and
	// benchmarks compare the two ways with it.
	NoCopy bool
	Stores []StoreSpec
	// Internal lists repartition topics; changelogs are derived from Stores.
	Internal []TopicSpec
	// SinkTopic is where results go ("" for a transient query whose sink
	// is a callback).
	SinkTopic string
	// ErrorTopic, when set, receives every input record the query could
	// not read (WITH (ERROR_TOPIC=…)): a dead-letter topic, so nothing is
	// lost silently.
	ErrorTopic string
	// LateTopic, when set, receives records that arrived after their
	// windows closed (WITH (LATE_TOPIC=…)).
	LateTopic string
	// Table is the node that keeps the table the query writes in state
	// (its AggregateNode, or a MaterializeNode), which pull queries read
	// through a TableReader; nil when it keeps none. The planner says
	// which node it is.
	Table Node
	// IdleTimeout, when positive, lets a task whose partition has sent
	// no record for this long of wall-clock time move its stream time on
	// with the clock, so the last windows of an EMIT FINAL query close
	// without new data (WITH (IDLE_TIMEOUT=…) or sluice.idle.timeout).
	// 0: stream time moves only with records.
	IdleTimeout time.Duration
}

// SourceTopics lists the topics the query reads.
func (t *Topology) SourceTopics() []string {
	out := make([]string, 0, len(t.Subs))
	for _, s := range t.Subs {
		for _, in := range s.Inputs() {
			out = append(out, in.Topic)
		}
	}
	return out
}

// CoPartitionGroups lists the groups of source topics that must be
// co-partitioned: partition p of every topic of a group goes to the same
// member (see CoPartitioned), the first topic of a group leading. The
// topics of a join's sub-topology form a group.
func (t *Topology) CoPartitionGroups() [][]string {
	var out [][]string
	for _, s := range t.Subs {
		if len(s.Sides) == 0 {
			continue
		}
		var g []string
		for _, in := range s.Inputs() {
			g = append(g, in.Topic)
		}
		out = append(out, g)
	}
	return out
}

// sub returns the sub-topology reading topic.
func (t *Topology) sub(topic string) *SubTopology {
	for _, s := range t.Subs {
		for _, in := range s.Inputs() {
			if in.Topic == topic {
				return s
			}
		}
	}
	return nil
}

// changelogs lists the changelog topics the query writes: those of its
// stores, less the tables' own topics a store restores from.
func (t *Topology) changelogs() []string {
	var out []string
	for _, s := range t.Stores {
		if s.FromSource == nil {
			out = append(out, s.Changelog)
		}
	}
	return out
}

// windowedTopics maps each topic the query writes windowed keys to (a
// sink whose keys carry their window: a windowed aggregation's result, a
// windowed source's rows written on) to its window type, so that
// Partitioner sends every window of a key to the key's partition. The
// sink nodes say so; a topic's name or format never does.
func (t *Topology) windowedTopics() map[string]WindowType {
	var out map[string]WindowType
	for _, s := range t.Subs {
		for _, n := range s.Nodes {
			if sn, ok := n.(*SinkNode); ok && sn.Window != NotWindowed {
				if out == nil {
					out = map[string]WindowType{}
				}
				out[sn.Topic] = sn.Window
			}
		}
	}
	return out
}

// subIndex is the id of the sub-topology reading topic, -1 if none.
func (t *Topology) subIndex(topic string) int {
	if s := t.sub(topic); s != nil {
		return s.ID
	}
	return -1
}

// store returns the spec of a named store.
func (t *Topology) store(name string) (StoreSpec, error) {
	for _, s := range t.Stores {
		if s.Name == name {
			return s, nil
		}
	}
	return StoreSpec{}, fmt.Errorf("query %s: no state store %s", t.QueryID, name)
}

// Explain prints the topology as a tree, stateful steps marked, the
// format EXPLAIN shows.
func (t *Topology) Explain() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Query %s\n", t.QueryID)
	for _, s := range t.Subs {
		fmt.Fprintf(&b, "└─ sub-topology %d\n", s.ID)
		if s.Read != nil {
			fmt.Fprintf(&b, "   ├─ %s\n", s.Read.Describe())
		} else {
			fmt.Fprintf(&b, "   ├─ %s\n", s.Source.Describe())
		}
		for _, si := range s.Sides {
			fmt.Fprintf(&b, "   ├─ %s, into step %d\n", si.Source.Describe(), si.Node+1)
		}
		for i, n := range s.Nodes {
			branch := "├─"
			if i == len(s.Nodes)-1 {
				branch = "└─"
			}
			kind := "stateless"
			if n.Stateful() {
				kind = "stateful"
			}
			fmt.Fprintf(&b, "   %s %s  (%s)\n", branch, n.Describe(), kind)
		}
		if s.Copy != nil {
			b.WriteString("   ⤷ " + s.Copy.Describe() + "\n")
		}
	}
	for _, st := range t.Stores {
		if st.FromSource != nil {
			fmt.Fprintf(&b, "state store %s → changelog %s (the table's own topic, restored from, never written)\n", st.Name, st.Changelog)
			continue
		}
		fmt.Fprintf(&b, "state store %s → changelog %s\n", st.Name, st.Changelog)
	}
	for _, it := range t.Internal {
		unit := "partitions"
		if it.Partitions == 1 {
			unit = "partition"
		}
		fmt.Fprintf(&b, "repartition topic %s (%d %s)\n", it.Name, it.Partitions, unit)
	}
	if t.IdleTimeout > 0 {
		fmt.Fprintf(&b, "idle timeout %s: a partition without records for that long moves its stream time on with the wall clock\n", t.IdleTimeout)
	}
	return b.String()
}
