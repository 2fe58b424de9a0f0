package planner

import (
	"fmt"
	"strings"

	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/format"
	"github.com/sluice-sql/sluice/parser"
)

// Pull queries read a table from a state store on the instance that owns
// the store's partition (exec.TableReader). An aggregation's store holds
// its table already; every other table ksqlDB serves pull queries on
// gets a store of its rows (exec.MaterializeNode):
//
//   - a CREATE TABLE … AS SELECT that projects, filters or joins tables:
//     the node stands before the sink and keeps the rows it writes, in a
//     store with a compacted changelog of its own (the sink topic may be
//     partitioned otherwise than the task's input, so it cannot serve as
//     the store's changelog);
//   - a CREATE SOURCE TABLE: a query of its own, CST_<name>
//     (PlanMaterialize), reads the table's topic into a store whose
//     changelog is that topic itself (StoreSpec.FromSource): the store is
//     the topic's content, partition for partition, so nothing is written
//     twice.
//
// A plain CREATE TABLE (not SOURCE) keeps nothing, as in ksqlDB: pull
// queries on it are refused.

// materializes reports whether a persistent query's final chain keeps
// its result table in a store for pull queries: a new table, not
// windowed, whose rows no aggregation holds already.
func (p *planning) materializes(sink *Source, nodes []exec.Node) bool {
	if p.target == nil || p.target.Existing != nil || sink.Kind != parser.KindTable || sink.Window != exec.NotWindowed {
		return false
	}
	for _, n := range nodes {
		if _, ok := n.(*exec.AggregateNode); ok {
			return false
		}
	}
	return true
}

// materialize adds the store of a result table's rows and returns the
// node that keeps them. The store's partitions are those of the final
// chain's input: a repartition topic's, or the source's. keyInputs maps
// the result's key columns to the input row columns they copy, if they
// do.
func (p *planning) materialize(sink *Source, keyIdx, valIdx []int, keyInputs map[int]int, partitions int32) exec.Node {
	in := p.lastSpec()
	for _, it := range p.q.Topology.Internal {
		if it.Name == in.Topic {
			partitions = it.Partitions
		}
	}
	// A key's row is where its input record was: in the input topic's
	// partition of that key, when the key is the input's key. A join's
	// result is keyed by the join key, by which its inputs are
	// co-partitioned; other chains must copy the input's key columns in
	// order (an input row starts with them).
	byKey := len(keyIdx) == len(in.KeyCols)
	if p.join != nil && in == p.join.spec {
		byKey = byKey && len(keyIdx) == 1
	} else {
		for i := range keyIdx {
			if c, ok := keyInputs[i]; !ok || c != i {
				byKey = false
			}
		}
	}
	// A change event's record key is the connector's (Debezium's struct
	// of the primary key), not the key serialised in the table's key
	// format: its partition is not one Sluice can compute.
	byKey = byKey && !in.Enveloped()
	node := &exec.MaterializeNode{Store: p.q.ID + "-Materialize", KeyIdx: keyIdx, ValueIdx: valIdx, Timestamp: sinkTimestamp(sink), ByInputKey: byKey, Text: sink.Name}
	// A change-data-capture connector re-sends events after a restart:
	// a result row repeating the kept one is no change to pass on.
	node.SameRow = p.spec != nil && p.spec.Enveloped()
	if f := strings.ToUpper(sink.ValueFormat); f == format.Protobuf || f == format.ProtobufNoSR {
		// proto3 has no NULL scalars: keep what the topic's readers get.
		// The framing-free codec writes the same message without a
		// registry.
		props := format.Props{Nullable: sink.ValueProps.Nullable}
		node.AsWritten = exec.AsWritten{Format: format.ProtobufNoSR, Cols: sink.Schema.Values(), Props: props}
	}
	p.q.Topology.Stores = append(p.q.Topology.Stores, exec.StoreSpec{Name: node.Store, Changelog: p.prefix + "-Materialize-changelog", Partitions: partitions})
	p.q.Topology.Table = node
	return node
}

// MaterializeQueryID is the id of the query that keeps a source table in
// state: ksqlDB's CST_ prefix and the table's name.
func MaterializeQueryID(table string) string { return "CST_" + table }

// PlanMaterialize plans the query of a CREATE SOURCE TABLE: it reads the
// table's topic into a store of its rows, the topic being the store's
// changelog, and writes nothing.
func PlanMaterialize(src *Source) (*Query, error) {
	if src.Kind != parser.KindTable || !src.ReadOnly {
		return nil, fmt.Errorf("%w: only a source table is materialized on its own: %s", ErrInvalid, src.Name)
	}
	if src.Window != exec.NotWindowed {
		return nil, fmt.Errorf("%w: windowed source table %s is not materialized", ErrUnsupported, src.Name)
	}
	id := MaterializeQueryID(src.Name)
	spec := src.sourceSpec()
	spec.Table = true // a null value deletes the key's row
	node := exec.NewSourceMaterialize(id+"-Materialize", src.Name, spec)
	node.SameRow = spec.Enveloped()
	node.ByInputKey = !spec.Enveloped() // see materialize
	topo := &exec.Topology{QueryID: id,
		Subs:   []*exec.SubTopology{{ID: 0, Source: spec, Nodes: []exec.Node{node}}},
		Stores: []exec.StoreSpec{{Name: node.Store, Changelog: src.Topic, FromSource: spec, Partitions: src.Partitions}},
		Table:  node,
	}
	return &Query{ID: id, Topology: topo, Sources: []string{src.Name}}, nil
}
