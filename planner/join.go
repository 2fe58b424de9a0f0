package planner

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/expr"
	"github.com/sluice-sql/sluice/format"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/planner/logical"
	"github.com/sluice-sql/sluice/types"
)

// A join is planned as one sub-topology whose task reads partition p of
// every input (co-partitioned on the join key), preceded by a
// repartition sub-topology for each stream input not keyed by its join
// expression. The joined row is laid out as exec.JoinNode describes;
// its columns are named as in ksqlDB: ALIAS_COLUMN for every column of
// every input, the join key as ROWKEY when no input column holds it.

// joinPlan is what planning a FROM … JOIN … yields for the rest of the
// query: a virtual source and the nodes that start the join sub-topology.
type joinPlan struct {
	layout *joinLayout
	spec   *exec.SourceSpec // the join sub-topology's main input
	nodes  []exec.Node
	sides  []*exec.SideInput
}

// planJoin builds the FROM clause's joins as the logical plan decided
// them and keeps the chain that ends with them for the rest of the query.
func (p *planning) planJoin() (*Source, *scope, error) {
	jb := &joinBuilder{from: p.sel.From, joins: p.cl.Joins, cat: p.cat, opts: p.opts, target: p.target, queryID: p.q.ID, prefix: p.prefix,
		topology: p.q.Topology, decided: joinNodes(p.q.Logical), functions: p.withFunctions}
	src, sc, err := jb.build()
	p.join = jb.join
	p.pushFailed = jb.pushFailed
	return src, sc, err
}

// joinBuilder builds the joins of a FROM clause into the topology.
type joinBuilder struct {
	// from and joins are the FROM clause, each join's ON as the plan
	// states it.
	from            *parser.Relation
	joins           []*parser.Join
	cat             *Catalog
	opts            Options
	target          *Target
	queryID, prefix string
	topology        *exec.Topology
	// decided are the plan's joins in FROM order, with the repartition
	// rule's decisions.
	decided []*logical.Join
	// join is the chain built so far, ending with the last join.
	join *joinPlan
	// functions adds the query's functions to a scope (planning's
	// withFunctions), for the filters moved onto the inputs.
	functions func(expr.Scope) expr.Scope
	// pushFailed says a filter the predicate-pushdown rule moved onto an
	// input did not compile there: the WHERE then runs whole above the
	// join (the moved filters that compiled still run, and hold for
	// every row the WHERE keeps).
	pushFailed bool
}

// build plans the joins left-deep: each join's left input is the source
// in FROM or the result of the joins before it. It returns the virtual
// source the rest of the query reads and the scope naming its columns.
func (jb *joinBuilder) build() (*Source, *scope, error) {
	left, err := baseInput(jb.cat, jb.from, jb.opts)
	if err != nil {
		return nil, nil, err
	}
	bases := []*joinInput{left}
	var l *joinLayout
	for idx, j := range jb.joins {
		right, err := baseInput(jb.cat, j.Right, jb.opts)
		if err != nil {
			return nil, nil, err
		}
		bases = append(bases, right)
		if idx > 0 {
			left = intermediate(l, idx)
		}
		if l, err = jb.planOneJoin(idx, j, jb.decided[idx], left, right, bases); err != nil {
			return nil, nil, err
		}
	}
	if l.fkKeys > 0 {
		return fkVirtual(l), &scope{src: fkVirtual(l), schema: l.schema(), join: l}, nil
	}
	first := bases[0].src
	kind := parser.KindStream
	if l.table {
		kind = parser.KindTable
	}
	virtual := &Source{
		Name: first.Name, Kind: kind, Topic: first.Topic, KeyFormat: first.KeyFormat, ValueFormat: first.ValueFormat,
		KeyProps: first.KeyProps, ValueProps: first.ValueProps, Partitions: l.partitions, Window: l.window, WindowSize: l.windowSize,
	}
	virtual.ValueProps.Envelope = "" // joined rows are rows, not change events
	cols := []types.Column{{Name: l.keyName, Type: l.types[l.keySlot], Key: true}}
	for _, in := range bases {
		for i, n := range in.names {
			if !strings.HasPrefix(n, "KSQL_INTERNAL_") && i < len(in.names)-3-windowCols(in) {
				cols = append(cols, types.Column{Name: n, Type: in.types[i]})
			}
		}
	}
	virtual.Schema = types.Schema{Columns: cols}
	return virtual, &scope{src: virtual, schema: l.schema(), join: l}, nil
}

// baseInput is a stream or table named in FROM or JOIN.
func baseInput(cat *Catalog, rel *parser.Relation, opts Options) (*joinInput, error) {
	src, err := cat.Lookup(rel.Name)
	if err != nil {
		return nil, posErr(rel.Pos, err)
	}
	in := &joinInput{src: src, alias: aliasOf(rel), spec: src.sourceSpec(), table: src.Kind == parser.KindTable,
		window: src.Window, windowSize: src.WindowSize, partitions: src.Partitions, keyFormat: src.KeyFormat, keyProps: src.KeyProps, label: src.Name}
	in.spec.Table = in.table
	in.spec.FailOnBadTimestamp = opts.TimestampThrowOnInvalid
	in.spec.NoCDCColumns = true
	for _, c := range in.spec.RowSchema().Columns {
		in.names = append(in.names, strings.ToUpper(in.alias)+"_"+c.Name)
		in.types = append(in.types, c.Type)
	}
	return in, nil
}

// intermediate is the result of the joins so far as the left input of
// join idx: its row is the joined row, whose own key, time and window
// slots get hidden names (the next join's result has its own).
func intermediate(l *joinLayout, idx int) *joinInput {
	in := &joinInput{prev: l, table: l.table, window: l.window, windowSize: l.windowSize, partitions: l.partitions,
		keyFormat: l.keyFormat, keyProps: l.keyProps, label: l.label, keyCol: l.keySlot}
	in.names = append([]string{}, l.names...)
	in.types = append([]types.Type{}, l.types...)
	for i := l.keySlot; i < len(in.names); i++ {
		in.names[i] = fmt.Sprintf("KSQL_INTERNAL_J%d_%s", idx, in.names[i])
	}
	if l.fullNames != nil {
		// The joined row's own slots are the last ones in both layouts.
		in.fullNames = append([]string{}, l.fullNames...)
		in.fullTypes = append([]types.Type{}, l.fullTypes...)
		for i := len(in.fullNames) - (len(l.names) - l.keySlot); i < len(in.fullNames); i++ {
			in.fullNames[i] = fmt.Sprintf("KSQL_INTERNAL_J%d_%s", idx, in.fullNames[i])
		}
	}
	return in
}

// planOneJoin builds join idx of the FROM clause between left (a source,
// or the joins before) and right (a source) as the plan decided it
// (decided: which inputs are re-keyed, whether it is a foreign-key join),
// and returns the layout of its result. It extends jb.join, the chain that
// ends with the join. The bind pass checked the join already.
func (jb *joinBuilder) planOneJoin(idx int, j *parser.Join, decided *logical.Join, left, right *joinInput, bases []*joinInput) (*joinLayout, error) {
	leftTable, rightTable := left.table, right.table
	streams := !leftTable && !rightTable
	ins := []*joinInput{left, right}
	pre, eq, ls, err := joinCondition(j, left, right, bases)
	if err != nil {
		return nil, err
	}
	onExpr, keyExpr, err := joinKeyExprs(j, eq, ls, pre, left, right)
	if err != nil {
		return nil, err
	}
	if decided.ForeignKey {
		return jb.planFKJoin(j, ins, keyExpr[0])
	}
	// An input is read as it is unless the plan re-keys it.
	keyed := [2]bool{!rekeyed(decided.Left), !rekeyed(decided.Right)}
	partitions := left.partitions
	if !keyed[0] {
		partitions = right.partitions
	}
	sfx := ""
	if idx > 0 {
		sfx = strconv.Itoa(idx + 1)
	}
	chained := left.prev != nil && keyed[0]
	// The filters the predicate-pushdown rule moved onto the inputs, over
	// their rows as they come (pre): before the repartition of an input
	// re-keyed, in the join of one read as it is.
	var filters [2]*exec.FilterNode
	for side, n := range [2]logical.Node{decided.Left, decided.Right} {
		if pred := inputFilter(n); pred != nil {
			c, err := expr.Compile(pred, jb.functions(pre.scopeOf(side)))
			if err != nil || !c.Type.Equal(types.BooleanType) {
				jb.pushFailed = true
				continue
			}
			filters[side] = &exec.FilterNode{Pred: c.Eval, Text: pred.String()}
		}
	}
	for side, in := range ins {
		if keyed[side] {
			if in.prev == nil {
				in.keyCol = 0
			}
			continue
		}
		// Re-keyed in the key format the plan gives the topic (the other
		// input's when that one is read as it is, so that both hash a key
		// to the same partition), with that input's key properties. In a
		// Schema Registry format the key is written with the other
		// input's schema, its field named as the other's key column, so
		// that equal keys are equal bytes (the schema id is in them).
		r := [2]logical.Node{decided.Left, decided.Right}[side].(*logical.Repartition)
		keyFormat, keyProps, keyName := r.Keying.Format, format.Props{}, "KSQL_INTERNAL_JOINKEY"
		if other := ins[1-side]; keyed[1-side] && other.keyFormat == keyFormat {
			keyProps = other.keyProps
			if format.UsesRegistry(keyFormat) && keyProps.SchemaID > 0 {
				if other.prev != nil || len(other.src.Schema.Keys()) != 1 {
					keyProps = internalProps(keyProps)
				} else {
					keyName = other.src.Schema.Keys()[0].Name
				}
			}
		}
		if err := jb.repartitionJoinInput(in, sfx+"-"+[2]string{"left", "right"}[side], keyExpr[side], partitions, keyFormat, keyProps, keyName, r.Carries, bases, filters[side]); err != nil {
			return nil, posErr(j.Pos, err)
		}
	}

	// The joined row.
	l := &joinLayout{inputs: bases, sides: [2]*joinInput{left, right}, candidates: map[string]bool{}, table: leftTable && rightTable,
		window: left.window, windowSize: left.windowSize, partitions: partitions, label: bases[0].label}
	l.keyFormat, l.keyProps = left.keyFormat, left.keyProps
	if !keyed[0] {
		l.keyFormat, l.keyProps = left.spec.KeyFormat, left.spec.KeyProps
	}
	pruned := false
	for _, in := range ins {
		l.names = append(l.names, in.names...)
		l.types = append(l.types, in.types...)
		pruned = pruned || in.fullNames != nil
	}
	if pruned {
		for _, in := range ins {
			fn, ft := in.full()
			l.fullNames = append(l.fullNames, fn...)
			l.fullTypes = append(l.fullTypes, ft...)
		}
	}
	if chained && j.Type != parser.JoinFull {
		// Joined on the same key as the joins before: their join columns
		// hold this key too.
		for n := range left.prev.candidates {
			l.candidates[n] = true
		}
		l.candidateText = append(l.candidateText, left.prev.candidateText...)
	}
	for side, e := range onExpr {
		ref, ok := e.(*parser.ColumnRef)
		if !ok || j.Type == parser.JoinFull {
			continue
		}
		if i, _, err := l.resolve(ref); err == nil && !strings.HasPrefix(l.names[i], "KSQL_INTERNAL_") && !l.candidates[l.names[i]] {
			l.candidates[l.names[i]] = true
			l.candidateText = append(l.candidateText, strings.ToUpper(ins[side].aliasOf(ref))+"."+strings.ToUpper(ref.Name))
		}
	}
	l.keySlot = len(l.names)
	l.synthetic = len(l.candidates) == 0
	l.keyName = "KSQL_INTERNAL_JOINKEY"
	if l.synthetic {
		l.keyName = syntheticKeyName(bases)
	}
	l.names = append(l.names, l.keyName, exec.ColRowTime, exec.ColRowPartition, exec.ColRowOffset)
	l.types = append(l.types, keyExpr[0].Type, types.BigIntType, types.IntegerType, types.BigIntType)
	if left.window != exec.NotWindowed {
		l.names = append(l.names, exec.ColWindowStart, exec.ColWindowEnd)
		l.types = append(l.types, types.BigIntType, types.BigIntType)
	}
	if pruned {
		l.fullNames = append(l.fullNames, l.names[l.keySlot:]...)
		l.fullTypes = append(l.fullTypes, l.types[l.keySlot:]...)
	}

	node := &exec.JoinNode{Type: exec.JoinType(j.Type), Text: parenthesized(j.On)}
	node.Left, node.Right = left.joinSide(), right.joinSide()
	for side, js := range []*exec.JoinSide{&node.Left, &node.Right} {
		if f := filters[side]; f != nil && keyed[side] {
			js.Filter, js.FilterText = f.Pred, f.Text
		}
	}
	if left.window == exec.TimeWindowed && left.windowSize != right.windowSize {
		// Allowed only where keys carry the window start alone
		// (checkJoinInputs): rows meet on it.
		node.Left.WindowStartOnly, node.Right.WindowStartOnly = true, true
	}
	storeBase := jb.queryID + "-Join" + sfx
	topicBase := jb.prefix + "-Join" + sfx
	if streams {
		w := j.Within
		node.Before, node.After = w.Before.Milliseconds(), w.After.Milliseconds()
		if w.HasGrace {
			node.Grace = w.Grace.Milliseconds()
		} else {
			// ksqlDB without GRACE PERIOD: Kafka Streams' old join windows,
			// 24 hours less the window, unmatched rows emitted at once.
			node.Grace = max(int64(24*time.Hour/time.Millisecond)-node.Before-node.After, 0)
			node.Legacy = true
		}
		node.LateTopic, _ = jb.target.withProp("LATE_TOPIC")
		retention := node.Before + node.After + node.Grace + int64(24*time.Hour/time.Millisecond)
		for side, name := range []string{"left", "right"} {
			store := storeBase + "-" + name + "-store"
			if side == 0 {
				node.Left.Store = store
			} else {
				node.Right.Store = store
			}
			jb.topology.Stores = append(jb.topology.Stores, exec.StoreSpec{Name: store, Changelog: topicBase + "-" + name + "-store-changelog", Windowed: true, Partitions: partitions, RetentionMs: retention})
		}
	} else {
		if _, ok := jb.target.withProp("LATE_TOPIC"); ok {
			return nil, posErr(j.Pos, fmt.Errorf("%w: LATE_TOPIC needs a windowed aggregation or a stream-stream join: only windows close and turn records away", ErrInvalid))
		}
		for side, in := range ins {
			if !in.table {
				continue
			}
			name := [2]string{"left", "right"}[side]
			store := storeBase + "-" + name + "-table"
			if side == 0 {
				node.Left.Store = store
			} else {
				node.Right.Store = store
			}
			spec := exec.StoreSpec{Name: store, Partitions: partitions}
			if in.prev == nil {
				// A table is read from its own topic: it is the table's
				// changelog, so restoring it bootstraps the join before
				// any stream record is joined.
				spec.Changelog, spec.FromSource = in.spec.Topic, in.spec
			} else {
				spec.Changelog = topicBase + "-" + name + "-table-changelog"
			}
			jb.topology.Stores = append(jb.topology.Stores, spec)
		}
	}
	if chained {
		nodes := append(append([]exec.Node{}, jb.join.nodes...), node)
		sides := append(append([]*exec.SideInput{}, jb.join.sides...), &exec.SideInput{Source: right.spec, Node: len(nodes) - 1, Side: 1})
		jb.join = &joinPlan{layout: l, spec: jb.join.spec, nodes: nodes, sides: sides}
	} else {
		jb.join = &joinPlan{layout: l, spec: left.spec, nodes: []exec.Node{node}, sides: []*exec.SideInput{{Source: right.spec, Node: 0, Side: 1}}}
	}
	return l, nil
}

// internalProps are the format properties an internal topic takes from an
// input's: how its format writes (delimiter, wrapping, nullable fields,
// the registry), not the schema it writes with, which describes the
// input's columns, not the topic's.
func internalProps(p format.Props) format.Props {
	p.Schema, p.SchemaID, p.References, p.FullName = "", 0, nil, ""
	return p
}
