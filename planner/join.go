package planner

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/expr"
	"github.com/sluice-sql/sluice/format"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/types"
)

// A join is planned as one sub-topology whose task reads partition p of
// every input (co-partitioned on the join key), preceded by a
// repartition sub-topology for each stream input not keyed by its join
// expression. The joined row is laid out as exec.JoinNode describes;
// its columns are named as in ksqlDB: ALIAS_COLUMN for every column of
// every input, the join key as ROWKEY when no input column holds it.

// joinInput is one input of a join as the join sub-topology reads it: a
// source, or (prev set) the result of the joins before it.
type joinInput struct {
	src   *Source
	prev  *joinLayout
	alias string
	label string // names the input in errors
	table bool
	// window, partitions and key format describe the input's rows as the
	// join reads them.
	window     exec.WindowType
	windowSize int64
	partitions int32
	keyFormat  string
	keyProps   format.Props
	// spec is what the join sub-topology reads: the source itself or its
	// repartition topic.
	spec *exec.SourceSpec
	// names are the names of the input's row slots in the joined row.
	names []string
	types []types.Type
	// keyCol is the position of the join key in the input's rows.
	keyCol int
}

// joinLayout names the slots of a joined row and resolves references.
type joinLayout struct {
	// inputs are the sources joined so far, for names and qualifiers;
	// sides the two inputs of the last join.
	inputs []*joinInput
	sides  [2]*joinInput
	names  []string
	types  []types.Type
	// table, window, partitions and key format describe the result.
	table      bool
	window     exec.WindowType
	windowSize int64
	partitions int32
	keyFormat  string
	keyProps   format.Props
	label      string
	// keySlot is the join key's slot and keyName its name (ROWKEY, or a
	// hidden name when input columns hold the key). candidates are the
	// slots of input columns equal to the key (the join columns).
	keySlot    int
	keyName    string
	synthetic  bool
	candidates map[string]bool
	// candidateText lists the join columns as the user wrote them, for
	// errors.
	candidateText []string
	// fkKeys is, for a foreign-key join, the number of the left table's
	// key columns: they are the result's key (0 for other joins).
	fkKeys int
}

func (l *joinLayout) schema() types.Schema {
	cols := make([]types.Column, len(l.names))
	for i := range cols {
		cols[i] = types.Column{Name: l.names[i], Type: l.types[i]}
	}
	return types.Schema{Columns: cols}
}

func (l *joinLayout) input(qualifier string) *joinInput {
	for _, in := range l.inputs {
		if strings.EqualFold(in.alias, qualifier) {
			return in
		}
	}
	return nil
}

func (l *joinLayout) find(name string) int {
	for i, n := range l.names {
		if strings.EqualFold(n, name) {
			return i
		}
	}
	return -1
}

// resolve finds a column of the joined row: ALIAS.COL, a column only one
// input has, or a column of the joined row itself (ROWKEY, ROWTIME).
func (l *joinLayout) resolve(ref *parser.ColumnRef) (int, types.Type, error) {
	if ref.Source != "" {
		in := l.input(ref.Source)
		if in == nil {
			return 0, types.Type{}, fmt.Errorf("%w: '%s' is not a valid stream/table name or alias.", ErrInvalid, strings.ToUpper(ref.Source))
		}
		if i := l.find(strings.ToUpper(in.alias) + "_" + strings.ToUpper(ref.Name)); i >= 0 {
			return i, l.types[i], nil
		}
		return 0, types.Type{}, fmt.Errorf("%w %s.%s: %s has no such column", expr.ErrUnknownColumn, strings.ToUpper(ref.Source), strings.ToUpper(ref.Name), in.src.Name)
	}
	if i := l.find(ref.Name); i >= 0 {
		return i, l.types[i], nil
	}
	var found []int
	var owners []string
	for _, in := range l.inputs {
		if i := l.find(strings.ToUpper(in.alias) + "_" + strings.ToUpper(ref.Name)); i >= 0 && !isPseudo(ref.Name) {
			found = append(found, i)
			owners = append(owners, strings.ToUpper(in.alias)+"."+strings.ToUpper(ref.Name))
		}
	}
	switch len(found) {
	case 1:
		return found[0], l.types[found[0]], nil
	case 0:
		return 0, types.Type{}, fmt.Errorf("%w %s", expr.ErrUnknownColumn, strings.ToUpper(ref.Name))
	}
	return 0, types.Type{}, fmt.Errorf("%w: Column '%s' is ambiguous. Could be %s.", ErrInvalid, strings.ToUpper(ref.Name), strings.Join(owners, " or "))
}

// shared reports whether more than one input has a column named name.
func (l *joinLayout) shared(name string) bool {
	n := 0
	for _, in := range l.inputs {
		if in.src.Schema.Find(name) >= 0 || isPseudo(name) {
			n++
		}
	}
	return n > 1
}

func isPseudo(name string) bool {
	switch strings.ToUpper(name) {
	case exec.ColRowTime, exec.ColRowPartition, exec.ColRowOffset:
		return true
	}
	return false
}

// joinPlan is what planning a FROM … JOIN … yields for the rest of the
// query: a virtual source and the nodes that start the join sub-topology.
type joinPlan struct {
	layout *joinLayout
	spec   *exec.SourceSpec // the join sub-topology's main input
	nodes  []exec.Node
	sides  []*exec.SideInput
}

// planJoin plans the FROM clause's joins, left-deep: each join's left
// input is the source in FROM or the result of the joins before it. It
// returns the virtual source the rest of the query reads and the scope
// naming its columns.
func (p *planning) planJoin() (*Source, *scope, error) {
	sel := p.sel
	left, err := p.baseInput(sel.From)
	if err != nil {
		return nil, nil, err
	}
	bases := []*joinInput{left}
	var l *joinLayout
	for idx, j := range sel.Joins {
		right, err := p.baseInput(j.Right)
		if err != nil {
			return nil, nil, err
		}
		for _, b := range bases {
			if strings.EqualFold(b.src.Name, right.src.Name) {
				return nil, nil, posErr(j.Pos, fmt.Errorf("%w: Can not join '%s' to '%s': self joins are not yet supported.", ErrUnsupported, b.src.Name, right.src.Name))
			}
		}
		bases = append(bases, right)
		if idx > 0 {
			left = intermediate(l, idx)
		}
		if l, err = p.planOneJoin(idx, j, left, right, bases); err != nil {
			return nil, nil, err
		}
		if l.fkKeys > 0 && idx+1 < len(sel.Joins) {
			return nil, nil, posErr(sel.Joins[idx+1].Pos, fmt.Errorf("%w: a foreign-key join can only be the last join of a query", ErrUnsupported))
		}
	}
	if l.fkKeys > 0 {
		return p.fkVirtual(l), &scope{src: p.fkVirtual(l), schema: l.schema(), join: l}, nil
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
func (p *planning) baseInput(rel *parser.Relation) (*joinInput, error) {
	src, err := p.cat.Lookup(rel.Name)
	if err != nil {
		return nil, posErr(rel.Pos, err)
	}
	in := &joinInput{src: src, alias: aliasOf(rel), spec: src.sourceSpec(), table: src.Kind == parser.KindTable,
		window: src.Window, windowSize: src.WindowSize, partitions: src.Partitions, keyFormat: src.KeyFormat, keyProps: src.KeyProps, label: src.Name}
	in.spec.Table = in.table
	in.spec.FailOnBadTimestamp = p.opts.TimestampThrowOnInvalid
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
	return in
}

// planOneJoin plans join idx of the FROM clause between left (a source,
// or the joins before) and right (a source), and returns the layout of
// its result. It extends p.join, the chain that ends with the join.
func (p *planning) planOneJoin(idx int, j *parser.Join, left, right *joinInput, bases []*joinInput) (*joinLayout, error) {
	var kafka []string
	for _, in := range []*joinInput{left, right} {
		if in.src != nil && strings.EqualFold(in.src.ValueFormat, "KAFKA") {
			kafka = append(kafka, in.src.Name)
		}
	}
	if len(kafka) > 0 {
		return nil, posErr(j.Pos, fmt.Errorf("%w: Source(s) %s are using the 'KAFKA' value format. This format does not yet support JOIN.", ErrUnsupported, strings.Join(kafka, ", ")))
	}
	leftTable, rightTable := left.table, right.table
	streams := !leftTable && !rightTable
	if leftTable && !rightTable {
		return nil, posErr(j.Pos, fmt.Errorf("%w: Invalid join order: table-stream joins are not supported; only stream-table joins. Got %s %s %s.", ErrInvalid, left.label, joinSyntax(j.Type), right.label))
	}
	if rightTable && !leftTable && (j.Type == parser.JoinRight || j.Type == parser.JoinFull) {
		return nil, posErr(j.Pos, fmt.Errorf("%w: Invalid join type: %s join not supported for stream-table join. Got %s %s %s.", ErrInvalid, joinTypeName(j.Type), left.label, joinSyntax(j.Type), right.label))
	}
	if left.window != right.window || (left.window == exec.TimeWindowed && left.windowSize != right.windowSize) {
		return nil, posErr(j.Pos, windowMismatch(left, right))
	}

	ins := []*joinInput{left, right}
	// The ON clause: one equality, each side naming one input.
	eq, ok := j.On.(*parser.Binary)
	if !ok || eq.Op != parser.OpEq {
		return nil, posErr(j.On.Position(), fmt.Errorf("%w: Invalid join condition: joins on multiple conditions are not yet supported. Got %s.", ErrUnsupported, parenthesized(j.On)))
	}
	pre := &joinLayout{inputs: bases, sides: [2]*joinInput{left, right}}
	for _, in := range ins {
		pre.names = append(pre.names, in.names...)
		pre.types = append(pre.types, in.types...)
	}
	var badQualifier error
	walkExpr(j.On, func(x parser.Expr) {
		if ref, ok := x.(*parser.ColumnRef); ok && ref.Source != "" && pre.input(ref.Source) == nil && badQualifier == nil {
			badQualifier = posErr(ref.Pos, fmt.Errorf("%w: Failed to prepare statement: '%s' is not a valid stream/table name or alias.", ErrInvalid, strings.ToUpper(ref.Source)))
		}
	})
	if badQualifier != nil {
		return nil, badQualifier
	}
	sideOf := func(e parser.Expr) (int, error) {
		side := -1
		var err error
		walkExpr(e, func(x parser.Expr) {
			ref, ok := x.(*parser.ColumnRef)
			if !ok || err != nil {
				return
			}
			i, _, rerr := pre.resolve(ref)
			if rerr != nil {
				if strings.Contains(rerr.Error(), "ambiguous") || strings.Contains(rerr.Error(), "not a valid stream/table") {
					err = rerr
				} else {
					err = fmt.Errorf("%w: JOIN ON column '%s' cannot be resolved.", ErrInvalid, strings.ToUpper(ref.String()))
				}
				return
			}
			s := 0
			if i >= len(left.names) {
				s = 1
			}
			if side >= 0 && side != s {
				side = -2
			} else if side != -2 {
				side = s
			}
		})
		if err != nil {
			return 0, err
		}
		if side < 0 {
			return 0, fmt.Errorf("%w: Invalid comparison expression '%s' in join '%s'. Each side of the join comparision must contain references from exactly one source.", ErrInvalid, e, parenthesized(j.On))
		}
		return side, nil
	}
	ls, err := sideOf(eq.Left)
	if err != nil {
		return nil, posErr(eq.Left.Position(), err)
	}
	rs, err := sideOf(eq.Right)
	if err != nil {
		return nil, posErr(eq.Right.Position(), err)
	}
	if ls == rs {
		return nil, posErr(j.On.Position(), fmt.Errorf("%w: Each side of the join comparision must contain references from exactly one source. Got %s.", ErrInvalid, parenthesized(j.On)))
	}
	if streams && j.Within == nil {
		return nil, posErr(j.Pos, fmt.Errorf("%w: Stream-Stream joins must have a WITHIN clause specified. None was provided. To learn about how to specify a WITHIN clause with a stream-stream join, please visit: https://docs.confluent.io/current/ksql/docs/syntax-reference.html#create-stream-as-select", ErrInvalid))
	}
	if !streams && j.Within != nil {
		return nil, posErr(j.Pos, fmt.Errorf("%w: A window definition was provided for a Stream-Table join. These joins are not windowed. Please drop the window definition (i.e. the WITHIN clause) and try to execute your Stream-Table join again.", ErrInvalid))
	}
	onExpr := [2]parser.Expr{eq.Left, eq.Right}
	if ls == 1 {
		onExpr = [2]parser.Expr{eq.Right, eq.Left}
	}
	var keyType [2]types.Type
	var keyExpr [2]expr.Compiled
	for side, e := range onExpr {
		c, err := expr.Compile(e, pre.scopeOf(side))
		if err != nil {
			return nil, posErr(e.Position(), err)
		}
		keyType[side], keyExpr[side] = c.Type, c
	}
	if !keyType[0].Equal(keyType[1]) {
		return nil, posErr(j.On.Position(), fmt.Errorf("%w: Invalid join condition: types don't match. Got %s{%s} = %s{%s}.", ErrInvalid, qualifiedText(onExpr[0], left.alias), keyType[0], qualifiedText(onExpr[1], right.alias), keyType[1]))
	}
	if containsMap(keyType[0]) {
		return nil, posErr(j.On.Position(), fmt.Errorf("%w: Map keys, including types that contain maps, are not supported as they may lead to unexpected behavior due to inconsistent serialization. Key column name: %s. Column type: %s. See https://github.com/confluentinc/ksql/issues/6621 for more.", ErrUnsupported, mapKeyName(pre, onExpr), keyType[0]))
	}

	// Which inputs are keyed by their join expression already.
	keyed := [2]bool{left.keyedBy(onExpr[0], pre), right.keyedBy(onExpr[1], pre)}
	if leftTable && rightTable {
		if !keyed[1] {
			return nil, posErr(j.On.Position(), fmt.Errorf("%w: Invalid join condition: table-table joins require to join on the primary key of the right input table. Got %s.", ErrInvalid, onText(eq, pre)))
		}
		if !keyed[0] {
			switch {
			case j.Type == parser.JoinRight:
				return nil, posErr(j.Pos, fmt.Errorf("%w: RIGHT OUTER JOIN on a foreign key is not supported", ErrUnsupported))
			case j.Type == parser.JoinFull:
				return nil, posErr(j.Pos, fmt.Errorf("%w: FULL OUTER JOIN on a foreign key is not supported", ErrUnsupported))
			case left.window != exec.NotWindowed:
				return nil, posErr(j.Pos, fmt.Errorf("%w: Foreign-key table-table joins are not supported on windowed tables.", ErrUnsupported))
			case left.prev != nil:
				return nil, posErr(j.On.Position(), fmt.Errorf("%w: Invalid join condition: foreign-key table-table joins are not supported as part of n-way joins. Got %s.", ErrInvalid, onText(eq, pre)))
			}
			return p.planFKJoin(j, ins, keyExpr[0])
		}
	}
	for side, in := range ins {
		if in.table && !keyed[side] {
			return nil, posErr(j.On.Position(), fmt.Errorf("%w: Invalid join condition: %s joins require to join on the table's primary key. Got %s.", ErrInvalid, joinKind(leftTable, rightTable), onText(eq, pre)))
		}
		if !keyed[side] && in.window != exec.NotWindowed {
			return nil, posErr(j.On.Position(), fmt.Errorf("%w: Implicit repartitioning of windowed sources is not supported. See https://github.com/confluentinc/ksql/issues/4385.", ErrUnsupported))
		}
	}
	// Both inputs must hash keys the same way into the same number of
	// partitions; a stream keyed otherwise is repartitioned, in the other
	// input's key format.
	if keyed[0] && keyed[1] && !strings.EqualFold(left.keyFormat, right.keyFormat) {
		switch {
		case !rightTable:
			keyed[1] = false
		case !leftTable:
			keyed[0] = false
		}
	}
	partitions := left.partitions
	if !keyed[0] {
		partitions = right.partitions
	}
	if keyed[0] && keyed[1] && left.partitions != right.partitions && left.partitions > 0 && right.partitions > 0 {
		return nil, posErr(j.Pos, fmt.Errorf("%w: Can't join `%s` with `%s` since the number of partitions don't match. `%s` partitions = %d; `%s` partitions = %d. Please repartition either one so that the number of partitions match.",
			ErrInvalid, left.label, right.label, left.label, left.partitions, right.label, right.partitions))
	}
	sfx := ""
	if idx > 0 {
		sfx = strconv.Itoa(idx + 1)
	}
	chained := left.prev != nil && keyed[0]
	for side, in := range ins {
		if keyed[side] {
			if in.prev == nil {
				in.keyCol = 0
			}
			continue
		}
		// Re-keyed into the format of the other input when that one is
		// read as it is, so that both hash a key to the same partition.
		keyFormat, keyProps := "", format.Props{}
		if other := ins[1-side]; keyed[1-side] {
			keyFormat, keyProps = other.keyFormat, other.keyProps
		}
		p.repartitionJoinInput(in, sfx+"-"+[2]string{"left", "right"}[side], keyExpr[side], partitions, keyFormat, keyProps)
		if p.rekeyed == nil {
			p.rekeyed = map[rekey]string{}
		}
		p.rekeyed[rekey{idx, side}] = onExpr[side].String()
	}

	// The joined row.
	l := &joinLayout{inputs: bases, sides: [2]*joinInput{left, right}, candidates: map[string]bool{}, table: leftTable && rightTable,
		window: left.window, windowSize: left.windowSize, partitions: partitions, label: bases[0].label}
	l.keyFormat, l.keyProps = left.keyFormat, left.keyProps
	if !keyed[0] {
		l.keyFormat, l.keyProps = left.spec.KeyFormat, left.spec.KeyProps
	}
	for _, in := range ins {
		l.names = append(l.names, in.names...)
		l.types = append(l.types, in.types...)
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
	l.types = append(l.types, keyType[0], types.BigIntType, types.IntegerType, types.BigIntType)
	if left.window != exec.NotWindowed {
		l.names = append(l.names, exec.ColWindowStart, exec.ColWindowEnd)
		l.types = append(l.types, types.BigIntType, types.BigIntType)
	}

	node := &exec.JoinNode{Type: exec.JoinType(j.Type), Text: parenthesized(j.On)}
	node.Left, node.Right = left.joinSide(), right.joinSide()
	storeBase := p.q.ID + "-Join" + sfx
	topicBase := p.prefix + "-Join" + sfx
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
		node.LateTopic, _ = p.target.withProp("LATE_TOPIC")
		retention := node.Before + node.After + node.Grace + int64(24*time.Hour/time.Millisecond)
		for side, name := range []string{"left", "right"} {
			store := storeBase + "-" + name + "-store"
			if side == 0 {
				node.Left.Store = store
			} else {
				node.Right.Store = store
			}
			p.q.Topology.Stores = append(p.q.Topology.Stores, exec.StoreSpec{Name: store, Changelog: topicBase + "-" + name + "-store-changelog", Windowed: true, Partitions: partitions, RetentionMs: retention})
		}
	} else {
		if _, ok := p.target.withProp("LATE_TOPIC"); ok {
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
			p.q.Topology.Stores = append(p.q.Topology.Stores, spec)
		}
	}
	if chained {
		nodes := append(append([]exec.Node{}, p.join.nodes...), node)
		sides := append(append([]*exec.SideInput{}, p.join.sides...), &exec.SideInput{Source: right.spec, Node: len(nodes) - 1, Side: 1})
		p.join = &joinPlan{layout: l, spec: p.join.spec, nodes: nodes, sides: sides}
	} else {
		p.join = &joinPlan{layout: l, spec: left.spec, nodes: []exec.Node{node}, sides: []*exec.SideInput{{Source: right.spec, Node: 0, Side: 1}}}
	}
	return l, nil
}

// keyedBy reports whether the input's rows are keyed by e already: e
// names a source's only key column, or the key of the joins before.
func (in *joinInput) keyedBy(e parser.Expr, pre *joinLayout) bool {
	ref, ok := e.(*parser.ColumnRef)
	if !ok {
		return false
	}
	if in.prev == nil {
		return isKeyRef(e, in)
	}
	i, _, err := pre.resolve(ref)
	if err != nil || i >= len(in.names) {
		return false
	}
	return i == in.keyCol || in.prev.candidates[pre.names[i]]
}

// aliasOf is the qualifier of a column reference on this input: the
// reference's own, or the input's alias.
func (in *joinInput) aliasOf(ref *parser.ColumnRef) string {
	if ref.Source != "" {
		return ref.Source
	}
	if in.alias != "" {
		return in.alias
	}
	return in.label
}

// joinSide describes the input to the join operator.
func (in *joinInput) joinSide() exec.JoinSide {
	js := exec.JoinSide{Name: in.label, Width: len(in.names), KeyCol: in.keyCol, Table: in.table}
	if in.window != exec.NotWindowed {
		ws, we := -1, -1
		for i, n := range in.names {
			switch {
			case strings.HasSuffix(n, "_"+exec.ColWindowStart):
				ws = i
			case strings.HasSuffix(n, "_"+exec.ColWindowEnd):
				we = i
			}
		}
		js.Window = []int{ws, we}
	}
	return js
}

// qualifiedText prints a join expression with its columns qualified by
// their source, as ksqlDB's errors do.
func qualifiedText(e parser.Expr, alias string) string {
	return strings.ToUpper(qualified(e, alias).String())
}

// mapKeyName names the join column ksqlDB would have made the key, for
// the error refusing MAP keys.
func mapKeyName(l *joinLayout, on [2]parser.Expr) string {
	for side, e := range on {
		if ref, ok := e.(*parser.ColumnRef); ok {
			return "`" + strings.ToUpper(l.sides[side].aliasOf(ref)) + "_" + strings.ToUpper(ref.Name) + "`"
		}
	}
	return "`ROWKEY`"
}

// windowCols is the number of window-bound slots at the end of an
// input's row.
func windowCols(in *joinInput) int {
	if in.spec.Window != exec.NotWindowed {
		return 2
	}
	return 0
}

// onText prints a join's ON equality as ksqlDB does in its errors: in
// the order written, each column qualified by the source it belongs to.
func onText(eq *parser.Binary, pre *joinLayout) string {
	q := func(e parser.Expr) string {
		return parenthesizedOperand(mapExpr(e, func(x parser.Expr) parser.Expr {
			ref, ok := x.(*parser.ColumnRef)
			if !ok || ref.Source != "" {
				return nil
			}
			i, _, err := pre.resolve(ref)
			if err != nil || i >= len(pre.names) {
				return nil
			}
			c := *ref
			best := ""
			for _, b := range pre.inputs {
				if a := strings.ToUpper(b.alias); len(a) > len(best) && strings.HasPrefix(pre.names[i], a+"_") {
					best = a
				}
			}
			c.Source = best
			return &c
		}))
	}
	return q(eq.Left) + " = " + q(eq.Right)
}

// joinSyntax is a join type as ksqlDB prints it, optional words in
// brackets.
func joinSyntax(t parser.JoinType) string {
	return [...]string{"[INNER] JOIN", "LEFT [OUTER] JOIN", "RIGHT [OUTER] JOIN", "[FULL] OUTER JOIN"}[t]
}

// joinTypeName is a join type's lower-case name in ksqlDB's errors.
func joinTypeName(t parser.JoinType) string {
	return [...]string{"inner", "left", "right", "full-outer"}[t]
}

func joinKind(leftTable, rightTable bool) string {
	if leftTable && rightTable {
		return "table-table"
	}
	return "stream-table"
}

func windowMismatch(left, right *joinInput) error {
	name := func(s *joinInput) string {
		switch s.window {
		case exec.SessionWindowed:
			return "SESSION"
		case exec.TimeWindowed:
			return "TUMBLING"
		}
		return "not windowed"
	}
	if left.window == exec.NotWindowed || right.window == exec.NotWindowed {
		w, n := left, right
		if left.window == exec.NotWindowed {
			w, n = right, left
		}
		return fmt.Errorf("%w: Can not join windowed source to non-windowed source.\n`%s` is %s windowed\n`%s` is not windowed", ErrInvalid, w.label, name(w), n.label)
	}
	if left.window != right.window {
		return fmt.Errorf("%w: Incompatible windowed sources.\nLeft source: %s\nRight source: %s\nSession windowed sources can only be joined to other session windowed sources, and may still not result in expected behaviour as session bounds must be an exact match for the join to work\nHopping and tumbling windowed sources can only be joined to other hopping and tumbling windowed sources", ErrInvalid, name(left), name(right))
	}
	return fmt.Errorf("%w: Implicit repartitioning of windowed sources is not supported. See https://github.com/confluentinc/ksql/issues/4385.", ErrUnsupported)
}

func (l *joinLayout) scopeOf(side int) expr.Scope { return sideScope{l, side} }

// sideScope resolves the columns of one input only: a join expression
// must name columns of one side.
type sideScope struct {
	l    *joinLayout
	side int
}

func (s sideScope) Resolve(ref *parser.ColumnRef) (int, types.Type, error) {
	i, t, err := s.l.resolve(ref)
	if err != nil {
		return 0, t, err
	}
	off := 0
	if s.side == 1 {
		off = len(s.l.sides[0].names)
	}
	if i < off || i >= off+len(s.l.sides[s.side].names) {
		return 0, t, fmt.Errorf("%w %s", expr.ErrUnknownColumn, ref)
	}
	return i - off, t, nil
}

// isKeyRef reports whether e names in's only key column.
func isKeyRef(e parser.Expr, in *joinInput) bool {
	ref, ok := e.(*parser.ColumnRef)
	keys := in.src.Schema.Keys()
	return ok && len(keys) == 1 && strings.EqualFold(ref.Name, keys[0].Name) &&
		(ref.Source == "" || strings.EqualFold(ref.Source, in.alias) || strings.EqualFold(ref.Source, in.src.Name))
}

func aliasOf(r *parser.Relation) string {
	if r.Alias != "" {
		return strings.ToUpper(r.Alias)
	}
	return strings.ToUpper(r.Name)
}

// syntheticKeyName is ROWKEY, or ROWKEY_n past every such name an input
// already has.
func syntheticKeyName(ins []*joinInput) string {
	top := -1
	for _, in := range ins {
		for _, c := range in.src.Schema.Columns {
			n := strings.ToUpper(c.Name)
			if n == "ROWKEY" {
				top = max(top, 0)
			} else if rest, ok := strings.CutPrefix(n, "ROWKEY_"); ok {
				if k, err := strconv.Atoi(rest); err == nil {
					top = max(top, k)
				}
			}
		}
	}
	if top < 0 {
		return "ROWKEY"
	}
	return "ROWKEY_" + strconv.Itoa(top+1)
}

// parenthesized prints a join condition as ksqlDB does in errors.
func parenthesized(e parser.Expr) string {
	if b, ok := e.(*parser.Binary); ok {
		return "(" + parenthesizedOperand(b.Left) + " " + b.Op.String() + " " + parenthesizedOperand(b.Right) + ")"
	}
	return e.String()
}

func parenthesizedOperand(e parser.Expr) string {
	if _, ok := e.(*parser.Binary); ok {
		return parenthesized(e)
	}
	if ref, ok := e.(*parser.ColumnRef); ok && ref.Source != "" {
		return strings.ToUpper(ref.Source) + "." + strings.ToUpper(ref.Name)
	}
	return strings.ToUpper(e.String())
}

// repartitionJoinInput writes a stream input to a topic keyed by its join
// expression, with all its columns in the value, and makes the join read
// that topic instead.
//
// A source input keeps its key and value columns (its time comes with the
// record); the result of earlier joins keeps every slot of its row. The
// topic's key is written in keyFormat (the other input's, so that both
// hash a key alike), or KAFKA/JSON when empty.
func (p *planning) repartitionJoinInput(in *joinInput, name string, c expr.Compiled, partitions int32, keyFormat string, keyProps format.Props) {
	keyType := c.Type
	ncols := len(in.names)
	if in.prev == nil {
		ncols = len(in.src.Schema.Columns) // key and value columns
	}
	exprs := []expr.Eval{c.Eval}
	names := []string{"KSQL_INTERNAL_JOINKEY"}
	var values []types.Column
	for i := 0; i < ncols; i++ {
		i := i
		exprs = append(exprs, func(r []any) any { return r[i] })
		col := types.Column{Name: in.names[i], Type: in.types[i]}
		values = append(values, col)
		names = append(names, col.Name)
	}
	keyCol := types.Column{Name: "KSQL_INTERNAL_JOINKEY", Type: keyType, Key: true}
	if keyFormat == "" || strings.EqualFold(keyFormat, "NONE") {
		keyFormat, keyProps = "JSON", format.Props{}
		if isPrimitive(keyType) {
			keyFormat = "KAFKA"
		}
	}
	topic := p.prefix + "-Join" + name + "-repartition"
	nodes := []exec.Node{
		&exec.ProjectNode{Exprs: exprs, Names: names},
		&exec.SinkNode{Topic: topic, KeyFormat: keyFormat, KeyProps: keyProps, ValueFormat: "JSON", KeyCols: []types.Column{keyCol}, ValueCols: values,
			KeyIdx: []int{0}, ValueIdx: seq(1, 1+len(values)), Internal: true},
	}
	if in.prev == nil {
		p.addSub(in.spec, nodes)
	} else {
		// The joins so far end by writing their rows to the topic.
		t := p.q.Topology
		t.Subs = append(t.Subs, &exec.SubTopology{ID: len(t.Subs), Source: p.join.spec,
			Nodes: append(append([]exec.Node{}, p.join.nodes...), nodes...), Sides: p.join.sides})
	}
	p.q.Topology.Internal = append(p.q.Topology.Internal, exec.TopicSpec{Name: topic, Partitions: partitions, Configs: map[string]string{"cleanup.policy": "delete"}})
	in.spec = &exec.SourceSpec{Topic: topic, KeyFormat: keyFormat, KeyProps: keyProps, ValueFormat: "JSON", KeyCols: []types.Column{keyCol}, ValueCols: values, TimestampCol: -1, Dedupe: true}
	in.keyFormat, in.keyProps, in.partitions = keyFormat, keyProps, partitions
	// The input's slots: the join key, its columns, then the pseudo
	// columns of the repartition topic (a source's own under its names).
	hidden := "KSQL_INTERNAL_" + strings.ToUpper(in.alias) + name + "_"
	newNames := []string{hidden + "JOINKEY"}
	newTypes := []types.Type{keyType}
	newNames = append(newNames, in.names[:ncols]...)
	newTypes = append(newTypes, in.types[:ncols]...)
	for _, pc := range []string{exec.ColRowTime, exec.ColRowPartition, exec.ColRowOffset} {
		if in.prev == nil {
			newNames = append(newNames, strings.ToUpper(in.alias)+"_"+pc)
		} else {
			newNames = append(newNames, hidden+pc)
		}
		newTypes = append(newTypes, types.BigIntType)
	}
	newTypes[len(newTypes)-2] = types.IntegerType
	in.names, in.types, in.keyCol = newNames, newTypes, 0
}

// joinItems expands the SELECT of a join: * is every column of every
// input (the synthetic key first), ALIAS.* one input's; a column named
// with its source is called ALIAS_COLUMN, as in ksqlDB.
func joinItems(sel *parser.Select, l *joinLayout, sc expr.Scope) ([]item, error) {
	var list itemList
	add := list.add
	generated := 0
	for _, si := range sel.Items {
		if si.Star {
			var ins []*joinInput
			if si.StarSource != "" {
				in := l.input(si.StarSource)
				if in == nil {
					return nil, posErr(si.Pos, fmt.Errorf("%w: '%s' is not a valid stream/table name or alias.", ErrInvalid, strings.ToUpper(si.StarSource)))
				}
				ins = []*joinInput{in}
			} else {
				ins = l.inputs
				if l.synthetic {
					if err := add(item{expr: &parser.ColumnRef{Pos: si.Pos, Name: l.keyName}, name: l.keyName, pos: si.Pos, star: true}); err != nil {
						return nil, err
					}
				}
			}
			for _, in := range ins {
				// A windowed input's window bounds follow its key columns
				// (S1_K, S1_WINDOWSTART, S1_WINDOWEND, S1_V), as in ksqlDB.
				names := in.names[:len(in.names)-3-windowCols(in)]
				if w := windowCols(in); w > 0 {
					nkeys := min(len(in.src.Schema.Keys()), len(names))
					names = slices.Concat(names[:nkeys], in.names[len(in.names)-w:], names[nkeys:])
				}
				for _, n := range names {
					if strings.HasPrefix(n, "KSQL_INTERNAL_") {
						continue
					}
					if err := add(item{expr: &parser.ColumnRef{Pos: si.Pos, Name: n}, name: n, pos: si.Pos, star: true}); err != nil {
						return nil, err
					}
				}
			}
			continue
		}
		if si.AllFields {
			if err := addStructFields(si, sc, add); err != nil {
				return nil, err
			}
			continue
		}
		name := si.Alias
		if name == "" {
			switch x := si.Expr.(type) {
			case *parser.ColumnRef:
				// ksqlDB names a qualified column ALIAS_COLUMN only when
				// more than one input has a column of that name.
				name = strings.ToUpper(x.Name)
				if in := l.input(x.Source); in != nil && l.shared(x.Name) {
					name = strings.ToUpper(in.alias) + "_" + name
				}
			case *parser.Dereference:
				name = x.Field
			default:
				name = fmt.Sprintf("KSQL_COL_%d", generated)
				generated++
			}
		}
		if err := checkOutputName(si, name, false); err != nil {
			return nil, err
		}
		if err := add(item{expr: si.Expr, name: name, pos: si.Pos}); err != nil {
			return nil, err
		}
	}
	return list.items, nil
}

// joinKey picks the item that becomes the result's key: the first that
// names a join column (or the synthetic key), which then reads the join
// key itself, so that it is set on rows where its own input is missing.
// A persistent query must select one.
func (p *planning) joinKey() error {
	l := p.join.layout
	if l.fkKeys > 0 {
		return p.fkKey()
	}
	var keyItems []int
	for i, it := range p.items {
		ref, ok := it.expr.(*parser.ColumnRef)
		if !ok {
			continue
		}
		slot, _, err := p.sc.Resolve(ref)
		if err != nil {
			continue
		}
		if l.candidates[l.names[slot]] || slot == l.keySlot {
			keyItems = append(keyItems, i)
		}
	}
	if len(keyItems) == 0 {
		if p.target == nil {
			return nil
		}
		if l.synthetic {
			return posErr(p.sel.Pos, fmt.Errorf("%w (ie, SELECT). See https://cnfl.io/2LV7ouS.\nThe query used to build `%s` must include the join expression %s in its projection (eg, SELECT %s...).\n%s was added as a synthetic key column because the join criteria did not match any source column. This expression must be included in the projection and may be aliased. ",
				ErrKeyProjection, strings.ToUpper(p.target.Name), l.keyName, l.keyName, l.keyName))
		}
		what := "expression " + l.candidateText[0]
		if len(l.candidateText) > 1 {
			what = "expressions " + strings.Join(l.candidateText, " or ")
		}
		return posErr(p.sel.Pos, fmt.Errorf("%w (ie, SELECT). The query used to build `%s` must include the join %s in its projection (eg, SELECT %s...).", ErrKeyProjection, strings.ToUpper(p.target.Name), what, l.candidateText[0]))
	}
	// The left input's join column is the key when selected, else the
	// right's, as in ksqlDB.
	first := keyItems[0]
	for _, i := range keyItems {
		if slot, _, _ := p.sc.Resolve(p.items[i].expr.(*parser.ColumnRef)); slot < len(l.sides[0].names) {
			first = i
			break
		}
	}
	firstSlot, _, _ := p.sc.Resolve(p.items[first].expr.(*parser.ColumnRef))
	var dup []string
	for _, i := range keyItems {
		s, _, _ := p.sc.Resolve(p.items[i].expr.(*parser.ColumnRef))
		if s == firstSlot {
			dup = append(dup, p.items[i].name)
		}
	}
	if len(dup) > 1 && p.target != nil {
		sort.Strings(dup)
		return posErr(p.sel.Pos, fmt.Errorf("%w: The projection contains a key column (`%s`) more than once, aliased as: %s.", ErrInvalid, l.names[firstSlot], strings.Join(dup, " and ")))
	}
	if p.target != nil {
		p.items[first].expr = &parser.ColumnRef{Pos: p.items[first].pos, Name: l.keyName}
		p.items[first].star = false
	}
	return nil
}

// planFKJoin plans a foreign-key join of two tables (exec/fkjoin.go): the
// left table's task subscribes each row to its foreign key through an
// internal topic partitioned like the right table, whose task answers
// through a topic partitioned like the left table. The result is keyed by
// the left table's key.
func (p *planning) planFKJoin(j *parser.Join, ins []*joinInput, fk expr.Compiled) (*joinLayout, error) {
	left, right := ins[0], ins[1]
	l := &joinLayout{inputs: ins, sides: [2]*joinInput{left, right}, candidates: map[string]bool{}, fkKeys: len(left.src.Schema.Keys()),
		table: true, partitions: left.src.Partitions, keyFormat: left.src.KeyFormat, keyProps: left.src.KeyProps, label: left.src.Name}
	for _, in := range ins {
		l.names = append(l.names, in.names...)
		l.types = append(l.types, in.types...)
	}
	l.keySlot, l.keyName = len(l.names), "KSQL_INTERNAL_JOINKEY"
	l.names = append(l.names, l.keyName, exec.ColRowTime, exec.ColRowPartition, exec.ColRowOffset)
	l.types = append(l.types, fk.Type, types.BigIntType, types.IntegerType, types.BigIntType)

	rightKey := right.src.Schema.Keys()[0]
	leftKeys := left.src.Schema.Keys()
	subValues := []types.Column{{Name: "KSQL_INTERNAL_OP", Type: types.IntegerType}}
	for _, k := range leftKeys {
		k.Key = false
		subValues = append(subValues, k)
	}
	sub := &exec.FKTopic{Topic: p.prefix + "-FK-subscription", KeyFormat: right.src.KeyFormat, KeyProps: right.src.KeyProps,
		KeyCols: []types.Column{rightKey}, ValueCols: subValues, Partitions: right.src.Partitions}
	respValues := []types.Column{{Name: "KSQL_INTERNAL_FK", Type: fk.Type}, {Name: "KSQL_INTERNAL_FOUND", Type: types.BooleanType}}
	for _, c := range right.src.Schema.Columns {
		respValues = append(respValues, types.Column{Name: "KSQL_INTERNAL_R_" + c.Name, Type: c.Type})
	}
	respValues = append(respValues, types.Column{Name: "KSQL_INTERNAL_R_ROWTIME", Type: types.BigIntType})
	resp := &exec.FKTopic{Topic: p.prefix + "-FK-response", KeyFormat: left.src.KeyFormat, KeyProps: left.src.KeyProps,
		KeyCols: leftKeys, ValueCols: respValues, Partitions: left.src.Partitions}

	t := p.q.Topology
	leftStore, rightStore, subStore := p.q.ID+"-FK-left-table", p.q.ID+"-FK-right-table", p.q.ID+"-FK-subscriptions"
	t.Stores = append(t.Stores,
		exec.StoreSpec{Name: leftStore, Changelog: left.spec.Topic, FromSource: left.spec, Partitions: left.src.Partitions},
		exec.StoreSpec{Name: rightStore, Changelog: right.spec.Topic, FromSource: right.spec, Partitions: right.src.Partitions},
		exec.StoreSpec{Name: subStore, Changelog: p.prefix + "-FK-subscriptions-changelog", Partitions: right.src.Partitions},
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
	p.join = &joinPlan{layout: l, spec: left.spec, nodes: []exec.Node{leftNode}, sides: []*exec.SideInput{{Source: resp.Spec(), Node: 0, Side: 1}}}
	return l, nil
}

// fkVirtual is the source a foreign-key join's result is read as: keyed
// by the left table's key.
func (p *planning) fkVirtual(l *joinLayout) *Source {
	left := l.inputs[0]
	leftKeys := left.src.Schema.Keys()
	virtual := &Source{
		Name: left.src.Name, Kind: parser.KindTable, Topic: left.src.Topic, KeyFormat: left.src.KeyFormat, ValueFormat: left.src.ValueFormat,
		KeyProps: left.src.KeyProps, ValueProps: left.src.ValueProps, Partitions: left.src.Partitions,
	}
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
