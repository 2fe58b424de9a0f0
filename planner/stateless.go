package planner

// The stateless pass: queries that filter, flat-map and project.

import (
	"fmt"
	"strings"

	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/expr"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/types"
)

// planStateless builds the chain of a query that keeps no state: filter,
// flat-map and projection into the sink or to the client.
func (p *planning) planStateless() error {
	produces := p.src.Kind
	if err := p.checkTargetKind(produces); err != nil {
		return err
	}
	if _, ok := p.target.withProp("RETENTION"); ok {
		return posErr(p.sel.Pos, fmt.Errorf("%w: RETENTION bounds the state of an aggregation (GROUP BY); this query keeps no state", ErrInvalid))
	}
	var nodes []exec.Node
	// The filter and the computed items compile through evaluated, which
	// records the columns they read (a JSON copy converts only those).
	evaluated := &readsScope{Scope: p.sc, reads: map[int]bool{}}
	filter, err := p.whereNode(evaluated)
	if err != nil {
		return err
	}
	if filter != nil {
		nodes = append(nodes, filter)
		p.final.filter = filter
	}
	keyPositions := map[int]bool{}
	for i, c := range p.sc.schema.Columns {
		if c.Key {
			keyPositions[i] = true
		}
	}
	// ksqlDB checks the SELECT list's column references before anything
	// else about the items, and names the reference as written.
	for _, it := range p.items {
		if ref, err := unresolvedColumn(it.expr, p.sc); ref != nil {
			return posErr(ref.Pos, fmt.Errorf("%w: SELECT column '%s' cannot be resolved. (%s)", expr.ErrUnknownColumn, strings.ToUpper(ref.String()), unknownDetail(err)))
		}
	}
	var itemScope expr.Scope = p.sc
	if p.hasTableFunctions() {
		fm, sc, err := p.flatMap()
		if err != nil {
			return err
		}
		nodes, itemScope = append(nodes, fm), sc
	}
	if itemScope == p.sc {
		itemScope = evaluated
	}
	compiled := make([]expr.Compiled, len(p.items))
	for i, it := range p.items {
		e := it.expr
		if p.rewritten != nil {
			e = p.rewritten[i]
		}
		sc := itemScope
		if _, plain := e.(*parser.ColumnRef); plain && sc == evaluated {
			sc = p.sc // selected, not evaluated
		}
		if compiled[i], err = expr.Compile(e, p.withFunctions(sc)); err != nil {
			return err
		}
	}
	if p.target == nil {
		return p.transient(nodes, compiled, itemScope)
	}
	p.final.evaluated = evaluated.reads
	// The result keeps the source's key: each key column must be
	// selected, and becomes a key column under its output name.
	keyItem := make([]int, 0)
	for _, kc := range p.src.Schema.Keys() {
		found := -1
		for i, it := range p.items {
			if ref, ok := it.expr.(*parser.ColumnRef); ok && strings.EqualFold(ref.Name, kc.Name) {
				found = i
				break
			}
		}
		if found < 0 {
			if p.opts.NewQueryPlanner && produces == parser.KindStream && p.join == nil {
				keyItem = keyItem[:0]
				break // the result is keyless
			}
			return p.keyMissing(p.src.Schema.Keys())
		}
		// The key column selected again (under another name) would be a
		// value column holding the key: ksqlDB refuses the projection.
		var aliases []string
		for _, it := range p.items {
			if ref, ok := it.expr.(*parser.ColumnRef); ok && strings.EqualFold(ref.Name, kc.Name) {
				aliases = append(aliases, it.name)
			}
		}
		if len(aliases) > 1 && p.target != nil && p.join == nil && !p.partitionBy {
			return posErr(p.sel.Pos, fmt.Errorf("%w: The projection contains a key column (`%s`) more than once, aliased as: %s.", ErrInvalid, kc.Name, strings.Join(aliases, " and ")))
		}
		keyItem = append(keyItem, found)
	}
	// A null-value record of a stream passes a plain projection as a
	// null-value record (ksqlDB's behaviour); a WHERE drops it.
	p.spec.KeepNullValues = produces == parser.KindStream && filter == nil && p.join == nil
	return p.finish(nodes, compiled, keyItem, p.src.Window, p.src.WindowSize, windowInputs(p.sc.schema), p.src.Partitions)
}

// keyMissing refuses a projection that leaves out a key column; like
// ksqlDB it names every key column, not only the missing ones.
func (p *planning) keyMissing(keys []types.Column) error {
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = k.Name
	}
	noun := "key column"
	if len(names) > 1 {
		noun = "key columns"
	}
	return posErr(p.sel.Pos, fmt.Errorf("%w (ie, SELECT). The query used to build `%s` must include the %s %s in its projection (eg, SELECT %s...).", ErrKeyProjection, p.target.Name, noun, andJoined(names), strings.Join(names, ", ")))
}

// andJoined lists names as prose: "A", "A and B", "A, B and C".
func andJoined(names []string) string {
	if len(names) <= 1 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// readsValue reports whether e reads a column past the first keys input
// columns (the key columns): a value column or a pseudo column such as
// ROWTIME, none of which a null-value record has.
func (p *planning) readsValue(e parser.Expr, keys int) bool {
	found := false
	walkColumns(e, func(ref *parser.ColumnRef) {
		if i, _, err := p.sc.Resolve(ref); err == nil && i >= keys {
			found = true
		}
	})
	return found
}

// windowInputs finds WINDOWSTART/WINDOWEND in a row schema (-1 if absent).
func windowInputs(s types.Schema) [2]int {
	return [2]int{s.Find(exec.ColWindowStart), s.Find(exec.ColWindowEnd)}
}

// transient ends the chain with a callback delivering items in order.
func (p *planning) transient(nodes []exec.Node, compiled []expr.Compiled, sc expr.Scope) error {
	exprs := make([]expr.Eval, len(compiled))
	names := make([]string, len(compiled))
	var cols []types.Column
	for i, c := range compiled {
		exprs[i], names[i] = c.Eval, p.items[i].name
		cols = append(cols, types.Column{Name: p.items[i].name, Type: c.Type})
	}
	collect := &exec.CallbackNode{Names: names}
	nodes = append(nodes, &exec.ProjectNode{Exprs: exprs, Names: names, KeyInputs: p.tombstoneKeys(sc)}, collect)
	p.q.Output = types.Schema{Columns: cols}
	p.q.Collect = collect
	p.addSub(p.spec, nodes)
	return nil
}

// tombstoneKeys maps the items of a push query on a table that copy a
// key column or a window bound to that input column: a row the table
// deletes reaches the client with them set and its other columns NULL,
// as ksqlDB sends it.
func (p *planning) tombstoneKeys(sc expr.Scope) map[int]int {
	if sc == nil || p.join != nil || p.src.Kind != parser.KindTable {
		return nil
	}
	nkeys := len(p.src.Schema.Keys())
	out := map[int]int{}
	for i, it := range p.items {
		ref, ok := it.expr.(*parser.ColumnRef)
		if !ok {
			continue
		}
		in, _, err := sc.Resolve(ref)
		if err == nil && (in < nkeys || isWindowBound(ref.Name)) {
			out[i] = in
		}
	}
	return out
}
