package planner

import (
	"strings"

	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/expr"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/planner/logical"
	"github.com/sluice-sql/sluice/types"
)

// builtChain is what the builder made of the query's final chain, for
// the rules that run on the built plan.
type builtChain struct {
	sub     *exec.SubTopology
	filter  *exec.FilterNode
	project *exec.ProjectNode
	sink    *exec.SinkNode
	// evaluated marks the row positions the filter and the computed
	// items read (not those only selected), from their one compilation.
	evaluated map[int]bool
}

// readsScope resolves through a scope and records the row positions it
// resolved, so the builder learns what an expression reads from the
// compilation it does anyway.
type readsScope struct {
	expr.Scope
	reads map[int]bool
}

func (r *readsScope) Resolve(ref *parser.ColumnRef) (int, types.Type, error) {
	i, t, err := r.Scope.Resolve(ref)
	if err == nil {
		r.reads[i] = true
	}
	return i, t, err
}

// rekey is a repartition the builder inserted before a join input.
type rekey struct {
	join, side int
}

// logicalPlan is the query as relational steps, as the builder planned
// it: where it re-keys through a repartition topic is the builder's
// decision (p.aggRepartition, p.rekeyed).
func (p *planning) logicalPlan() logical.Node {
	sel := p.sel
	n := p.logicalFrom()
	if sel.Where != nil {
		n = &logical.Filter{Pred: sel.Where, Input: n}
	}
	if fns := p.tableFunctionTexts(); len(fns) > 0 {
		n = &logical.FlatMap{Functions: fns, Input: n}
	}
	switch {
	case p.partitionBy:
		n = &logical.Repartition{By: exprTexts(sel.PartitionBy), Input: n}
	case len(sel.GroupBy) > 0 || p.hasAggregates():
		if p.aggRepartition {
			n = &logical.Repartition{By: exprTexts(sel.GroupBy), Input: n}
		}
		if sel.Window != nil {
			n = &logical.Window{Spec: strings.TrimPrefix(sel.Window.String(), "WINDOW "), Input: n}
		}
		n = &logical.Aggregate{GroupBy: exprTexts(sel.GroupBy), Aggregates: p.aggregateTexts(), Input: n}
		if sel.Having != nil {
			n = &logical.Filter{Pred: sel.Having, Input: n}
		}
	}
	names := make([]string, len(p.items))
	for i, it := range p.items {
		names[i] = it.name
	}
	n = &logical.Project{Names: names, Input: n}
	switch {
	case p.q.Sink != nil:
		s := p.q.Sink
		return &logical.Sink{Name: s.Name, Table: s.Kind == parser.KindTable, Topic: s.Topic, Input: n}
	case p.pull():
		return &logical.Answer{Input: n}
	}
	return &logical.Subscribe{Input: n}
}

// pull reports whether the query is a pull query: a SELECT without EMIT
// that answers with the rows as of now.
func (p *planning) pull() bool {
	return p.target == nil && p.sel.Emit == parser.EmitNone
}

// logicalFrom is the FROM clause: a source, or its joins left-deep.
func (p *planning) logicalFrom() logical.Node {
	n := p.logicalRelation(p.sel.From)
	for i, j := range p.sel.Joins {
		left, right := n, p.logicalRelation(j.Right)
		if by, ok := p.rekeyed[rekey{i, 0}]; ok {
			left = &logical.Repartition{By: []string{by}, Input: left}
		}
		if by, ok := p.rekeyed[rekey{i, 1}]; ok {
			right = &logical.Repartition{By: []string{by}, Input: right}
		}
		n = &logical.Join{Kind: [...]string{"INNER", "LEFT OUTER", "RIGHT OUTER", "FULL OUTER"}[j.Type], On: j.On.String(), Left: left, Right: right}
	}
	return n
}

func (p *planning) logicalRelation(r *parser.Relation) logical.Node {
	src, err := p.cat.Lookup(r.Name)
	if err != nil {
		// Planned queries read only sources the catalog has.
		return &logical.Source{Name: r.Name}
	}
	if read := p.q.StoreRead(); read != nil && read.Table == src.Name {
		// A pull query reads a table from the store that keeps it.
		return &logical.StoreScan{Table: src.Name}
	}
	return &logical.Source{Name: src.Name, Table: src.Kind == parser.KindTable, Topic: src.Topic}
}

// tableFunctionTexts lists the table function calls of the SELECT list.
func (p *planning) tableFunctionTexts() []string {
	var out []string
	for _, it := range p.items {
		walkExpr(it.expr, func(e parser.Expr) {
			if f, ok := e.(*parser.FuncCall); ok && expr.IsTableFunction(f.Name) {
				out = append(out, f.String())
			}
		})
	}
	return out
}

// aggregateTexts lists the aggregate calls of the SELECT list and HAVING.
func (p *planning) aggregateTexts() []string {
	var out []string
	seen := map[string]bool{}
	visit := func(e parser.Expr) {
		walkExpr(e, func(e parser.Expr) {
			if f, ok := e.(*parser.FuncCall); ok && expr.IsAggregate(f.Name) && !seen[f.String()] {
				seen[f.String()] = true
				out = append(out, f.String())
			}
		})
	}
	for _, it := range p.items {
		visit(it.expr)
	}
	if p.sel.Having != nil {
		visit(p.sel.Having)
	}
	return out
}

func exprTexts(es []parser.Expr) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.String()
	}
	return out
}
