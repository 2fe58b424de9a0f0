package planner

import (
	"slices"
	"strings"

	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/expr"
	"github.com/sluice-sql/sluice/format"
	"github.com/sluice-sql/sluice/types"
)

// repartitionJoinInput writes a stream input to a topic keyed by its join
// expression, with its columns in the value, and makes the join read
// that topic instead.
//
// A source input keeps its key and value columns (its time comes with the
// record); the result of earlier joins keeps every slot of its row. With
// carries set (the join-column-pruning rule), the input columns of the
// sources in bases that it does not list are left out; the hidden slots
// of joins before stay. The topic's key is written in keyFormat, the
// repartition rule's choice.
//
// The key column is called keyName in the topic: a Schema Registry
// format's schema names it. Without a schema in keyProps, one of the
// topic's own is registered under its subject. filter, when set, runs
// before the row is written (the predicate-pushdown rule's).
func (jb *joinBuilder) repartitionJoinInput(in *joinInput, name string, c expr.Compiled, partitions int32, keyFormat string, keyProps format.Props, keyName string, carries []string, bases []*joinInput, filter *exec.FilterNode) error {
	keyType := c.Type
	ncols := len(in.names)
	if in.prev == nil {
		ncols = len(in.src.Schema.Columns) // key and value columns
	}
	// full is what a plan without the join-column-pruning rule carried:
	// a query started by an older Sluice may have left records of that
	// width in the topic, which the reader maps onto the carried columns
	// by name.
	fullNames, fullTypes := in.full()
	nfull := ncols
	if in.prev != nil {
		nfull = len(fullNames)
	}
	var full []types.Column
	for i := 0; i < nfull; i++ {
		full = append(full, types.Column{Name: fullNames[i], Type: fullTypes[i]})
	}
	dropped := droppedSlots(carries, bases)
	exprs := []expr.Eval{c.Eval}
	names := []string{"KSQL_INTERNAL_JOINKEY"}
	var values []types.Column
	var keptNames []string
	var keptTypes []types.Type
	for i := 0; i < ncols; i++ {
		if dropped[in.names[i]] {
			continue
		}
		i := i
		exprs = append(exprs, func(r []any) any { return r[i] })
		col := types.Column{Name: in.names[i], Type: in.types[i]}
		values = append(values, col)
		names = append(names, col.Name)
		keptNames = append(keptNames, in.names[i])
		keptTypes = append(keptTypes, in.types[i])
	}
	keyCol := types.Column{Name: keyName, Type: keyType, Key: true}
	topic := jb.prefix + "-Join" + name + "-repartition"
	if err := jb.cat.registerSink(topic, true, keyFormat, []types.Column{keyCol}, &keyProps); err != nil {
		return err
	}
	nodes := []exec.Node{
		&exec.ProjectNode{Exprs: exprs, Names: names},
		&exec.SinkNode{Topic: topic, KeyFormat: keyFormat, KeyProps: keyProps, ValueFormat: format.Rows, KeyCols: []types.Column{keyCol}, ValueCols: values,
			KeyIdx: []int{0}, ValueIdx: seq(1, 1+len(values)), Internal: true},
	}
	if filter != nil {
		// Rows the predicate-pushdown rule's filter rejects are not
		// written to the topic.
		nodes = append([]exec.Node{filter}, nodes...)
	}
	t := jb.topology
	if in.prev == nil {
		t.Subs = append(t.Subs, &exec.SubTopology{ID: len(t.Subs), Source: in.spec, Nodes: nodes})
	} else {
		// The joins so far end by writing their rows to the topic.
		t.Subs = append(t.Subs, &exec.SubTopology{ID: len(t.Subs), Source: jb.join.spec,
			Nodes: append(append([]exec.Node{}, jb.join.nodes...), nodes...), Sides: jb.join.sides})
	}
	t.Internal = append(t.Internal, exec.TopicSpec{Name: topic, Partitions: partitions, Configs: map[string]string{"cleanup.policy": "delete"}})
	in.spec = &exec.SourceSpec{Topic: topic, KeyFormat: keyFormat, KeyProps: keyProps, ValueFormat: format.Rows, KeyCols: []types.Column{keyCol}, ValueCols: values, TimestampCol: -1, Dedupe: true}
	if len(values) != len(full) {
		in.spec.ValueProps = format.Props{RowsLegacy: full}
	}
	in.keyFormat, in.keyProps, in.partitions = keyFormat, keyProps, partitions
	// The input's slots: the join key, its columns, then the pseudo
	// columns of the repartition topic (a source's own under its names).
	hidden := "KSQL_INTERNAL_" + strings.ToUpper(in.alias) + name + "_"
	newNames := []string{hidden + "JOINKEY"}
	newTypes := []types.Type{keyType}
	newNames = append(newNames, keptNames...)
	newTypes = append(newTypes, keptTypes...)
	for _, pc := range []string{exec.ColRowTime, exec.ColRowPartition, exec.ColRowOffset} {
		if in.prev == nil {
			newNames = append(newNames, strings.ToUpper(in.alias)+"_"+pc)
		} else {
			newNames = append(newNames, hidden+pc)
		}
		newTypes = append(newTypes, types.BigIntType)
	}
	newTypes[len(newTypes)-2] = types.IntegerType
	in.fullNames, in.fullTypes = nil, nil
	if len(values) != len(full) {
		in.fullNames = slices.Concat(newNames[:1], fullNames[:nfull], newNames[1+len(keptNames):])
		in.fullTypes = slices.Concat(newTypes[:1], fullTypes[:nfull], newTypes[1+len(keptTypes):])
	}
	in.names, in.types, in.keyCol = newNames, newTypes, 0
	return nil
}

// droppedSlots are the joined row's names of the sources' key and value
// columns that carries leaves out (none when carries is nil).
func droppedSlots(carries []string, bases []*joinInput) map[string]bool {
	if carries == nil {
		return nil
	}
	kept := map[string]bool{}
	for _, n := range carries {
		kept[n] = true
	}
	dropped := map[string]bool{}
	for _, b := range bases {
		if b.src == nil {
			continue
		}
		for _, c := range b.src.Schema.Columns {
			if n := strings.ToUpper(b.alias) + "_" + c.Name; !kept[n] {
				dropped[n] = true
			}
		}
	}
	return dropped
}
