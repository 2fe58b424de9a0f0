package planner

// Lowering: the clauses the builder compiles, read back from the logical
// plan once the onLogical rules have run, so that a rule that rewrites a
// node (a filter's predicate, a projection's expressions, the GROUP BY
// keys, a join's ON) changes what runs, not only what EXPLAIN prints.
// The SELECT itself (p.sel) still gives what is not plan: positions for
// errors, EMIT, LIMIT, the FROM clause's relations.

import (
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/planner/logical"
)

// clauses are the parts of a query the builder compiles, as the logical
// plan states them.
type clauses struct {
	// Where and Having are the predicates of the filters below and above
	// the aggregate.
	Where, Having parser.Expr
	// Aggregate says the plan aggregates, by GroupBy, in Window.
	Aggregate bool
	GroupBy   []parser.Expr
	Window    *parser.WindowSpec
	// PartitionBy are the expressions the result is re-keyed by.
	PartitionBy []parser.Expr
	// Joins are the FROM clause's joins, each with the plan's ON.
	Joins []*parser.Join
	// Columns are the output columns of a query without joins; Items a
	// join's SELECT list, which the builder expands.
	Columns []item
	Items   []parser.SelectItem
}

// lower reads the clauses of sel the builder compiles from the plan.
func lower(sel *parser.Select, root logical.Node) *clauses {
	c := &clauses{}
	var walk func(n logical.Node, aboveAggregate bool)
	walk = func(n logical.Node, aboveAggregate bool) {
		switch x := n.(type) {
		case *logical.Filter:
			if aboveAggregate {
				c.Having = x.Pred
			} else {
				c.Where = x.Pred
			}
		case *logical.Aggregate:
			c.Aggregate, c.GroupBy, aboveAggregate = true, x.Keys, false
		case *logical.Window:
			c.Window = x.Spec
		case *logical.Project:
			c.Items, c.PartitionBy = x.Items, x.PartitionBy
			if x.Columns != nil {
				c.Columns = itemsOf(x.Columns)
			}
			if r, ok := x.Input.(*logical.Repartition); ok && r.Exprs != nil {
				c.PartitionBy = r.Exprs
			}
		}
		if _, ok := n.(*logical.Join); ok {
			// Below a join are its inputs: their filters are the
			// predicate-pushdown rule's, which the join builder compiles.
			return
		}
		for _, in := range n.Inputs() {
			walk(in, aboveAggregate)
		}
	}
	walk(root, hasAggregate(root))
	for _, j := range joinNodes(root) {
		pj := *sel.Joins[j.Index]
		pj.On = j.OnExpr
		c.Joins = append(c.Joins, &pj)
	}
	return c
}

// hasAggregate reports whether the plan aggregates.
func hasAggregate(root logical.Node) bool {
	if _, ok := root.(*logical.Aggregate); ok {
		return true
	}
	for _, in := range root.Inputs() {
		if hasAggregate(in) {
			return true
		}
	}
	return false
}
