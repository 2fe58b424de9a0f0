package planner

// The bind pass: the query as a logical plan, built from the bound
// statement before any of the topology. Names are resolved and the
// checks with ksqlDB's texts that need only the statement and the
// catalog run here; what the onLogical rules decide (where rows are
// re-keyed, whether a join's inputs meet) they read from the facts this
// pass records, and the builder reads their decisions from the plan.

import (
	"fmt"
	"strings"

	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/planner/logical"
	"github.com/sluice-sql/sluice/types"
)

// boundJoin is what binding one join of the FROM clause found out, for
// the repartition and co-partitioning rules.
type boundJoin struct {
	join *parser.Join
	eq   *parser.Binary
	// pre lays out the two inputs' rows as the ON clause was resolved
	// against them (for error texts).
	pre *joinLayout
	// onExpr are the sides of ON, the left input's first.
	onExpr [2]parser.Expr
	// labels name the inputs in errors (the joins before by their first
	// source); table and windowed describe them.
	labels   [2]string
	table    [2]bool
	windowed [2]bool
	// afterJoin says the left input is the result of the joins before.
	afterJoin bool
	// onCols names the column of the joined row each side of ON is (""
	// for an expression). onKeySlot says the left side names the key of
	// the joins before itself.
	onCols    [2]string
	onKeySlot bool
	// sourceKeyed says, for an input that is a source, whether its topic
	// is keyed by its side of ON.
	sourceKeyed [2]bool
	// keyType is the join key's type; syntheticKey the name of the key
	// column when no input column holds the key (ROWKEY, …); fkKey the
	// key columns of a foreign-key join's result (the left table's).
	keyType      types.Type
	syntheticKey string
	fkKey        []string
}

// bind states the query as a logical plan (p.q.Logical) before the
// topology is built, each node with the bound expressions the builder
// compiles (lower.go reads them back). Only what depends on how the
// builder lays out the row is filled in once it has run (nameLogical):
// a join's output columns, a PARTITION BY's column order, the sink.
func (p *planning) bind() error {
	sel := p.sel
	var n logical.Node
	var cols []logical.Column
	if len(sel.Joins) > 0 {
		var err error
		if n, err = p.bindJoins(); err != nil {
			return err
		}
	} else {
		src, err := p.cat.Lookup(sel.From.Name)
		if err != nil {
			return posErr(sel.From.Pos, err)
		}
		p.src = src
		n = logicalRelation(src, p.pull())
		if cols, err = p.bindItems(); err != nil {
			return err
		}
	}
	// The expressions the SELECT list computes: the bound columns, or a
	// join's items as written (their calls are the same).
	var exprs []parser.Expr
	for _, c := range cols {
		exprs = append(exprs, c.Expr)
	}
	if len(sel.Joins) > 0 {
		for _, si := range sel.Items {
			if si.Expr != nil {
				exprs = append(exprs, si.Expr)
			}
		}
	}
	if sel.Where != nil {
		n = &logical.Filter{Pred: sel.Where, Input: n}
	}
	if calls := callsOf(exprs, p.cat.IsTableFunction, false); len(calls) > 0 {
		n = &logical.FlatMap{Calls: calls, Input: n}
	}
	if len(sel.PartitionBy) == 0 && (len(sel.GroupBy) > 0 || selectCalls(sel, p.isAggregate)) {
		if sel.Window != nil {
			n = &logical.Window{Spec: sel.Window, Input: n}
		}
		if sel.Having != nil {
			exprs = append(exprs, sel.Having)
		}
		n = &logical.Aggregate{GroupBy: exprTexts(sel.GroupBy), Keys: sel.GroupBy, Calls: callsOf(exprs, p.isAggregate, true), Input: n}
		if sel.Having != nil {
			n = &logical.Filter{Pred: sel.Having, Input: n}
		}
	}
	proj := &logical.Project{Columns: cols, PartitionBy: sel.PartitionBy, Input: n}
	if len(sel.Joins) > 0 {
		proj.Items = sel.Items
	}
	n = proj
	switch {
	case p.target != nil:
		n = &logical.Sink{Input: n}
	case p.pull():
		n = &logical.Answer{Input: n}
	default:
		n = &logical.Subscribe{Input: n}
	}
	p.q.Logical = n
	return nil
}

// bindItems resolves the SELECT list of a query without joins against
// its source: the output columns, named as ksqlDB names them, * and
// x->* expanded.
func (p *planning) bindItems() ([]logical.Column, error) {
	src := p.src
	spec := src.sourceSpec()
	spec.Table = src.Kind == parser.KindTable
	spec.FailOnBadTimestamp = p.opts.TimestampThrowOnInvalid
	p.spec = spec
	p.sc = &scope{src: src, alias: p.sel.From.Alias, schema: spec.RowSchema()}
	items, err := expandItems(p.sel, p.sc, p.target != nil)
	if err != nil {
		return nil, err
	}
	return columnsOf(items), nil
}

// columnsOf states items as a Project's columns, and itemsOf back.
func columnsOf(items []item) []logical.Column {
	cols := make([]logical.Column, len(items))
	for i, it := range items {
		cols[i] = logical.Column{Expr: it.expr, Name: it.name, Pos: it.pos, Star: it.star, SourceKey: it.oldKey}
	}
	return cols
}

func itemsOf(cols []logical.Column) []item {
	items := make([]item, len(cols))
	for i, c := range cols {
		items[i] = item{expr: c.Expr, name: c.Name, pos: c.Pos, star: c.Star, oldKey: c.SourceKey}
	}
	return items
}

// callsOf lists the calls in exprs of the functions is recognises, in
// order; with once, each call text only once.
func callsOf(exprs []parser.Expr, is func(name string) bool, once bool) []*parser.FuncCall {
	var out []*parser.FuncCall
	seen := map[string]bool{}
	for _, e := range exprs {
		walkExpr(e, func(e parser.Expr) {
			f, ok := e.(*parser.FuncCall)
			if !ok || !is(f.Name) || (once && seen[f.String()]) {
				return
			}
			seen[f.String()] = true
			out = append(out, f)
		})
	}
	return out
}

// selectCalls reports whether a SELECT item calls a function of the
// kind is recognises (aggregate, table function).
func selectCalls(sel *parser.Select, is func(name string) bool) bool {
	found := false
	for _, si := range sel.Items {
		if si.Expr == nil {
			continue
		}
		walkExpr(si.Expr, func(e parser.Expr) {
			if f, ok := e.(*parser.FuncCall); ok && is(f.Name) {
				found = true
			}
		})
	}
	return found
}

// logicalRelation is a stream or table read by the query: from its
// topic, or, for a pull query (pull) on a table, from the store that
// keeps it.
func logicalRelation(src *Source, pull bool) logical.Node {
	if pull && src.Kind == parser.KindTable {
		return &logical.StoreScan{Table: src.Name}
	}
	var key []string
	for _, c := range src.Schema.Keys() {
		key = append(key, c.Name)
	}
	table := src.Kind == parser.KindTable
	return &logical.Source{Name: src.Name, Table: table, Topic: src.Topic, Keying: logical.Keying{
		Key: key, Format: src.KeyFormat, Partitions: src.Partitions, Windowed: src.Window != exec.NotWindowed, Table: table}}
}

// bindJoins binds the FROM clause's joins, left-deep, and checks what
// ksqlDB checks of each (inputs, ON clause, WITHIN, key types). Whether
// an input must be re-keyed is the repartition rule's to decide.
func (p *planning) bindJoins() (logical.Node, error) {
	sel := p.sel
	left, err := baseInput(p.cat, sel.From, p.opts)
	if err != nil {
		return nil, err
	}
	bases := []*joinInput{left}
	n := logicalRelation(left.src, false)
	var l *joinLayout
	for idx, j := range sel.Joins {
		right, err := baseInput(p.cat, j.Right, p.opts)
		if err != nil {
			return nil, err
		}
		for _, b := range bases {
			if !strings.EqualFold(b.src.Name, right.src.Name) {
				continue
			}
			if len(bases) > 1 {
				return nil, posErr(j.Pos, fmt.Errorf("%w: N-way joins do not support multiple occurrences of the same source. Source: '%s'.", ErrUnsupported, right.src.Name))
			}
			return nil, posErr(j.Pos, fmt.Errorf("%w: Can not join '%s' to '%s': self joins are not yet supported.", ErrUnsupported, b.src.Name, right.src.Name))
		}
		bases = append(bases, right)
		if idx > 0 {
			left = intermediate(l, idx)
		}
		b, err := bindJoin(j, left, right, bases)
		if err != nil {
			return nil, err
		}
		p.bound = append(p.bound, b)
		l = boundLayout(bases, left, right, b.keyType)
		n = &logical.Join{Kind: [...]string{"INNER", "LEFT OUTER", "RIGHT OUTER", "FULL OUTER"}[j.Type], On: j.On.String(), OnExpr: j.On, Index: idx,
			OnSides: b.onExpr, Left: n, Right: logicalRelation(right.src, false)}
	}
	return n, nil
}

// bindJoin checks one join and records what the rules need of it.
func bindJoin(j *parser.Join, left, right *joinInput, bases []*joinInput) (*boundJoin, error) {
	if err := checkJoinInputs(j, left, right); err != nil {
		return nil, err
	}
	pre, eq, ls, err := joinCondition(j, left, right, bases)
	if err != nil {
		return nil, err
	}
	if err := checkWithin(j, !left.table && !right.table); err != nil {
		return nil, err
	}
	onExpr, keyExpr, err := joinKeyExprs(j, eq, ls, pre, left, right)
	if err != nil {
		return nil, err
	}
	b := &boundJoin{join: j, eq: eq, pre: pre, onExpr: onExpr, labels: [2]string{left.label, right.label}, table: [2]bool{left.table, right.table},
		windowed: [2]bool{left.window != exec.NotWindowed, right.window != exec.NotWindowed}, afterJoin: left.prev != nil,
		keyType: keyExpr[0].Type, syntheticKey: syntheticKeyName(bases)}
	for side, in := range []*joinInput{left, right} {
		if in.prev == nil {
			b.sourceKeyed[side] = isKeyRef(onExpr[side], in)
		}
		ref, ok := onExpr[side].(*parser.ColumnRef)
		if !ok {
			continue
		}
		i, _, err := pre.resolve(ref)
		if err != nil {
			continue
		}
		b.onCols[side] = pre.names[i]
		if side == 0 && in.prev != nil && i == in.keyCol {
			b.onKeySlot = true
		}
	}
	if left.prev == nil {
		for i := range left.src.Schema.Keys() {
			b.fkKey = append(b.fkKey, left.names[i])
		}
	}
	return b, nil
}

// boundLayout lays out a join's result for binding the next join: the
// inputs' rows as they come, then the key and pseudo columns. The
// builder's layout differs only in the hidden slots of re-keyed inputs,
// which no ON clause names.
func boundLayout(bases []*joinInput, left, right *joinInput, keyType types.Type) *joinLayout {
	l := &joinLayout{inputs: bases, sides: [2]*joinInput{left, right}, candidates: map[string]bool{}, table: left.table && right.table,
		window: left.window, windowSize: left.windowSize, label: bases[0].label}
	for _, in := range []*joinInput{left, right} {
		l.names = append(l.names, in.names...)
		l.types = append(l.types, in.types...)
	}
	l.keySlot, l.keyName = len(l.names), "KSQL_INTERNAL_JOINKEY"
	l.names = append(l.names, l.keyName, exec.ColRowTime, exec.ColRowPartition, exec.ColRowOffset)
	l.types = append(l.types, keyType, types.BigIntType, types.IntegerType, types.BigIntType)
	if left.window != exec.NotWindowed {
		l.names = append(l.names, exec.ColWindowStart, exec.ColWindowEnd)
		l.types = append(l.types, types.BigIntType, types.BigIntType)
	}
	return l
}

// nameLogical fills in what the builder decided: a join's output
// columns (expanded against the join's row as built), the order of a
// PARTITION BY's (its key columns first) and the sink.
func (p *planning) nameLogical() {
	p.q.Logical = logical.Transform(p.q.Logical, func(n logical.Node) logical.Node {
		switch x := n.(type) {
		case *logical.Project:
			// A PARTITION BY puts the key columns first, adding one a *
			// left out: the order is the builder's.
			if x.Columns != nil && len(x.PartitionBy) == 0 {
				return n
			}
			c := *x
			c.Columns = columnsOf(p.items)
			return &c
		case *logical.Sink:
			s := p.q.Sink
			return &logical.Sink{Name: s.Name, Table: s.Kind == parser.KindTable, Topic: s.Topic, Input: x.Input}
		}
		return n
	})
}

// joinNodes lists the joins of a logical plan in FROM clause order.
func joinNodes(root logical.Node) []*logical.Join {
	var out []*logical.Join
	var walk func(n logical.Node)
	walk = func(n logical.Node) {
		for _, in := range n.Inputs() {
			walk(in)
		}
		if j, ok := n.(*logical.Join); ok {
			out = append(out, j)
		}
	}
	walk(root)
	return out
}

// rekeyed reports whether a join input is read through a repartition.
func rekeyed(in logical.Node) bool {
	_, ok := in.(*logical.Repartition)
	return ok
}
