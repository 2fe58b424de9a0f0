package planner

// The project pass: the final projection, key columns first, and the
// sink node after it.

import (
	"fmt"

	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/expr"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/types"
)

// finish projects the items (key items first), builds the sink source and
// the sink node. window carries the positions of window bounds in the
// projection's input when the result is windowed.
func (p *planning) finish(nodes []exec.Node, compiled []expr.Compiled, keyItems []int, win exec.WindowType, winSize int64, winIn [2]int, partitions int32) error {
	isKey := map[int]bool{}
	for _, k := range keyItems {
		isKey[k] = true
	}
	order := append([]int{}, keyItems...)
	for i := range p.items {
		if !isKey[i] {
			order = append(order, i)
		}
	}
	var exprs []expr.Eval
	var names []string
	var keyCols, valCols []types.Column
	keyInputs := map[int]int{}
	inputs := make([]int, len(order))
	for pos, i := range order {
		c := compiled[i]
		exprs = append(exprs, c.Eval)
		names = append(names, p.items[i].name)
		col := types.Column{Name: p.items[i].name, Type: c.Type}
		inputs[pos] = -1
		e := p.items[i].expr
		if p.rewritten != nil {
			e = p.rewritten[i]
		}
		if ref, ok := e.(*parser.ColumnRef); ok {
			if in, _, err := p.projectionScope().Resolve(ref); err == nil {
				inputs[pos] = in
			}
		}
		if isKey[i] {
			col.Key = true
			keyCols = append(keyCols, col)
			if in := inputs[pos]; in >= 0 {
				keyInputs[pos] = in
			}
		} else {
			if c.Type.Kind == types.Unknown {
				return posErr(p.items[i].pos, fmt.Errorf("%w: %s (column %s is a bare NULL)", expr.ErrType, expr.NullTypeMessage, p.items[i].name))
			}
			valCols = append(valCols, col)
		}
	}
	if len(valCols) == 0 && p.target != nil && p.target.Existing == nil {
		// A record needs a value: with only key columns every result
		// would be a tombstone.
		return posErr(p.sel.Pos, fmt.Errorf("%w: The projection contains no value columns.", ErrInvalid))
	}
	// The key passes through when every key column copies an input
	// column unchanged and PARTITION BY does not compute a new one.
	keepsKey := !p.partitionBy && len(keyInputs) == len(keyCols)
	winStart, winEnd := -1, -1
	if win != exec.NotWindowed {
		winStart, winEnd = len(exprs), len(exprs)+1
		s, e := winIn[0], winIn[1]
		exprs = append(exprs, func(row []any) any { return row[s] }, func(row []any) any { return row[e] })
		keyInputs[winStart], keyInputs[winEnd] = s, e
		inputs = append(inputs, s, e)
	}
	project := &exec.ProjectNode{Exprs: exprs, Names: names, KeyInputs: keyInputs, Inputs: inputs, KeepsKey: keepsKey,
		NullKeysOnFailure: p.nullKeysOnFailure}
	if p.partitionBy {
		project.TombstoneKeys, project.InputKeys = len(keyCols), len(p.src.Schema.Keys())
		for _, i := range keyItems {
			project.TombstoneNull = append(project.TombstoneNull, p.readsValue(p.items[i].expr, project.InputKeys))
		}
	}
	nodes = append(nodes, project)

	sink, err := p.sinkSource(keyCols, valCols, win, winSize, partitions)
	if err != nil {
		return err
	}
	keyIdx := make([]int, len(keyCols))
	for i := range keyIdx {
		keyIdx[i] = i
	}
	valIdx := make([]int, len(valCols))
	for i := range valIdx {
		valIdx[i] = len(keyCols) + i
	}
	if p.materializes(sink, nodes) {
		nodes = append(nodes, p.materialize(sink, keyIdx, valIdx, keyInputs, partitions))
	}
	sinkNode := &exec.SinkNode{
		Topic: sink.Topic, KeyFormat: sink.KeyFormat, ValueFormat: sink.ValueFormat,
		KeyCols: sink.Schema.Keys(), ValueCols: sink.Schema.Values(), KeyProps: sink.KeyProps, ValueProps: sink.ValueProps,
		KeyIdx: keyIdx, ValueIdx: valIdx, Window: win, WindowStartIdx: winStart, WindowEndIdx: winEnd,
		Timestamp: sinkTimestamp(sink),
	}
	if sink.ValueProps.Envelope != "" {
		svc := p.opts.ServiceID
		if svc == "" {
			svc = "default"
		}
		sinkNode.Changes = &exec.ChangesOut{Service: svc, Table: sink.Name}
		project.KeepOld = true
		if m, ok := nodes[len(nodes)-1].(*exec.MaterializeNode); ok {
			m.WithOld = true
		}
	}
	nodes = append(nodes, sinkNode)
	p.addSub(p.lastSpec(), nodes)
	p.final.sub, p.final.project, p.final.sink = p.q.Topology.Subs[len(p.q.Topology.Subs)-1], project, sinkNode
	p.q.Sink = sink
	p.q.Topology.SinkTopic = sink.Topic
	return nil
}

// sinkTimestamp says where the sink takes record timestamps from: the
// sink's TIMESTAMP column, at its schema position in the projected row
// (key columns, then value columns, as finish lays them out), or nil for
// the row's event time.
func sinkTimestamp(sink *Source) *exec.SinkTimestamp {
	if sink.TimestampColumn == "" {
		return nil
	}
	return &exec.SinkTimestamp{Col: sink.Schema.Find(sink.TimestampColumn), Name: sink.TimestampColumn, Format: sink.TimestampFormat}
}

// projectionScope is the scope the final projection reads; set by the
// aggregate planner to the post-aggregation schema.
func (p *planning) projectionScope() expr.Scope {
	if p.post != nil {
		return expr.SchemaScope(*p.post)
	}
	return p.sc
}

// lastSpec is the source of the sub-topology the final chain belongs to.
func (p *planning) lastSpec() *exec.SourceSpec {
	if p.finalSpec != nil {
		return p.finalSpec
	}
	return p.spec
}
