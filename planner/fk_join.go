package planner

import (
	"fmt"
	"sort"
	"strings"

	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/expr"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/types"
)

// planFKJoin plans a foreign-key join of two tables (exec/fkjoin.go): the
// left table's task subscribes each row to its foreign key through an
// internal topic partitioned like the right table, whose task answers
// through a topic partitioned like the left table. The result is keyed by
// the left table's key.
func (jb *joinBuilder) planFKJoin(j *parser.Join, ins []*joinInput, fk expr.Compiled) (*joinLayout, error) {
	left, right := ins[0], ins[1]
	l := &joinLayout{inputs: ins, sides: [2]*joinInput{left, right}, candidates: map[string]bool{}, fkKeys: len(left.src.Schema.Keys()),
		table: true, partitions: left.src.Partitions, keyFormat: left.src.KeyFormat, keyProps: left.src.KeyProps, label: left.src.Name}
	for _, in := range ins {
		l.names = append(l.names, in.names...)
		l.types = append(l.types, in.types...)
	}
	rightKey := right.src.Schema.Keys()[0]
	leftKeys := left.src.Schema.Keys()
	// The result is keyed by the left table's key. A join after this one
	// reads it as it is when it joins on that key (a single column, which
	// the key slot then holds as well).
	keyType := fk.Type
	if len(leftKeys) == 1 {
		keyType = leftKeys[0].Type
		l.candidates[left.names[0]] = true
		l.candidateText = []string{strings.ToUpper(left.alias) + "." + leftKeys[0].Name}
	}
	l.keySlot, l.keyName = len(l.names), "KSQL_INTERNAL_JOINKEY"
	l.names = append(l.names, l.keyName, exec.ColRowTime, exec.ColRowPartition, exec.ColRowOffset)
	l.types = append(l.types, keyType, types.BigIntType, types.IntegerType, types.BigIntType)
	subValues := []types.Column{{Name: "KSQL_INTERNAL_OP", Type: types.IntegerType}}
	for _, k := range leftKeys {
		k.Key = false
		subValues = append(subValues, k)
	}
	sub := &exec.FKTopic{Topic: jb.prefix + "-FK-subscription", KeyFormat: right.src.KeyFormat, KeyProps: right.src.KeyProps,
		KeyCols: []types.Column{rightKey}, ValueCols: subValues, Partitions: right.src.Partitions}
	respValues := []types.Column{{Name: "KSQL_INTERNAL_FK", Type: fk.Type}, {Name: "KSQL_INTERNAL_FOUND", Type: types.BooleanType}}
	for _, c := range right.src.Schema.Columns {
		respValues = append(respValues, types.Column{Name: "KSQL_INTERNAL_R_" + c.Name, Type: c.Type})
	}
	respValues = append(respValues, types.Column{Name: "KSQL_INTERNAL_R_ROWTIME", Type: types.BigIntType})
	resp := &exec.FKTopic{Topic: jb.prefix + "-FK-response", KeyFormat: left.src.KeyFormat, KeyProps: left.src.KeyProps,
		KeyCols: leftKeys, ValueCols: respValues, Partitions: left.src.Partitions}

	t := jb.topology
	leftStore, rightStore, subStore := jb.queryID+"-FK-left-table", jb.queryID+"-FK-right-table", jb.queryID+"-FK-subscriptions"
	t.Stores = append(t.Stores,
		exec.StoreSpec{Name: leftStore, Changelog: left.spec.Topic, FromSource: left.spec, Partitions: left.src.Partitions},
		exec.StoreSpec{Name: rightStore, Changelog: right.spec.Topic, FromSource: right.spec, Partitions: right.src.Partitions},
		exec.StoreSpec{Name: subStore, Changelog: jb.prefix + "-FK-subscriptions-changelog", Partitions: right.src.Partitions},
	)
	for _, it := range []*exec.FKTopic{sub, resp} {
		t.Internal = append(t.Internal, exec.TopicSpec{Name: it.Topic, Partitions: max(it.Partitions, 1), Configs: map[string]string{"cleanup.policy": "delete"}})
	}
	rightNode := &exec.FKJoinRightNode{RightName: right.src.Name, RightCols: len(right.src.Schema.Columns), LeftKeys: len(leftKeys),
		Store: rightStore, SubStore: subStore, Response: resp, Subscribed: sub.Topic}
	t.Subs = append(t.Subs, &exec.SubTopology{ID: len(t.Subs), Source: sub.Spec(), Nodes: []exec.Node{rightNode},
		Sides: []*exec.SideInput{{Source: right.spec, Node: 0, Side: 1}}})
	leftNode := &exec.FKJoinLeftNode{Type: exec.JoinType(j.Type), LeftName: left.src.Name, LeftWidth: len(left.names), LeftKeys: len(leftKeys),
		RightWidth: len(right.names), RightCols: len(right.src.Schema.Columns), FK: fk.Eval, Store: leftStore, Subscription: sub,
		Text: parenthesized(j.On)}
	jb.join = &joinPlan{layout: l, spec: left.spec, nodes: []exec.Node{leftNode}, sides: []*exec.SideInput{{Source: resp.Spec(), Node: 0, Side: 1}}}
	return l, nil
}

// fkVirtual is the source a foreign-key join's result is read as: keyed
// by the left table's key.
func fkVirtual(l *joinLayout) *Source {
	left := l.inputs[0]
	leftKeys := left.src.Schema.Keys()
	virtual := &Source{
		Name: left.src.Name, Kind: parser.KindTable, Topic: left.src.Topic, KeyFormat: left.src.KeyFormat, ValueFormat: left.src.ValueFormat,
		KeyProps: left.src.KeyProps, ValueProps: left.src.ValueProps, Partitions: left.src.Partitions,
	}
	virtual.ValueProps.Envelope = "" // joined rows are rows, not change events
	var cols []types.Column
	for i := range leftKeys {
		cols = append(cols, types.Column{Name: l.names[i], Type: l.types[i], Key: true})
	}
	for _, in := range l.inputs {
		for i, n := range in.names {
			if (in == left && i < len(leftKeys)) || i >= len(in.names)-3 {
				continue
			}
			cols = append(cols, types.Column{Name: n, Type: in.types[i]})
		}
	}
	virtual.Schema = types.Schema{Columns: cols}
	return virtual
}

// fkKey checks that a foreign-key join's projection selects every key
// column of the left table, which become the result's key.
func (p *planning) fkKey() error {
	l := p.join.layout
	left := l.inputs[0]
	var missing []string
	for k := 0; k < l.fkKeys; k++ {
		var found []int
		for i, it := range p.items {
			if ref, ok := it.expr.(*parser.ColumnRef); ok {
				if slot, _, err := p.sc.Resolve(ref); err == nil && slot == k {
					found = append(found, i)
				}
			}
		}
		if len(found) == 0 {
			missing = append(missing, "`"+left.src.Schema.Columns[k].Name+"`")
			continue
		}
		if len(found) > 1 && p.target != nil {
			var names []string
			for _, i := range found {
				names = append(names, p.items[i].name)
			}
			sort.Strings(names)
			return posErr(p.sel.Pos, fmt.Errorf("%w: The projection contains a key column (`%s`) more than once, aliased as: %s.", ErrInvalid, l.names[k], strings.Join(names, " and ")))
		}
		p.items[found[0]].expr = &parser.ColumnRef{Pos: p.items[found[0]].pos, Name: l.names[k]}
		p.items[found[0]].star = false
	}
	if len(missing) == 0 || p.target == nil {
		return nil
	}
	if len(missing) == 1 {
		return posErr(p.sel.Pos, fmt.Errorf("%w: Primary key column missing in projection. For foreign-key table-table joins, the projection must include all primary key columns from the left input table (`%s`). Missing column: %s.", ErrKeyProjection, left.src.Name, missing[0]))
	}
	return posErr(p.sel.Pos, fmt.Errorf("%w: Primary key columns missing in projection. For foreign-key table-table joins, the projection must include all primary key columns from the left input table (`%s`). Missing columns: %s.", ErrKeyProjection, left.src.Name, strings.Join(missing, ", ")))
}
