package planner

// The validate pass of an aggregation: the GROUP BY queries ksqlDB
// refuses, in its words.

import (
	"fmt"
	"strings"

	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/expr"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/types"
)

// checkWindowBounds refuses WINDOWSTART and WINDOWEND of a non-windowed
// source anywhere but as plain SELECT items of a windowed aggregation:
// the bounds exist only once rows are in windows, after grouping.
func (p *planning) checkWindowBounds() error {
	if p.src.Window != exec.NotWindowed {
		return nil
	}
	if p.join != nil {
		// Over a join ksqlDB resolves names against the joined sources'
		// columns only: unwindowed sources have no window bounds, so the
		// SELECT cannot name them even in a windowed aggregation.
		for _, it := range p.items {
			if ref, ok := it.expr.(*parser.ColumnRef); ok && isWindowBound(ref.Name) {
				return posErr(ref.Pos, fmt.Errorf("%w: SELECT column '%s' cannot be resolved.", expr.ErrUnknownColumn, strings.ToUpper(ref.String())))
			}
		}
	}
	var found *parser.ColumnRef
	visit := func(e parser.Expr) {
		walkExpr(e, func(x parser.Expr) {
			if ref, ok := x.(*parser.ColumnRef); ok && found == nil && isWindowBound(ref.Name) {
				found = ref
			}
		})
	}
	for _, g := range p.cl.GroupBy {
		visit(g)
	}
	for _, it := range p.items {
		walkExpr(it.expr, func(x parser.Expr) {
			if f, ok := x.(*parser.FuncCall); ok && p.isAggregate(f.Name) {
				for _, a := range f.Args {
					visit(a)
				}
			}
		})
	}
	if p.cl.Having != nil {
		visit(p.cl.Having)
	}
	if found == nil {
		return nil
	}
	return posErr(found.Pos, fmt.Errorf("%w: Window bounds column %s can only be used in the SELECT clause of windowed aggregations", ErrInvalid, strings.ToUpper(found.Name)))
}

// checkGroupingFunctions refuses, before anything is planned, what
// ksqlDB refuses first: an unknown function anywhere in the query, and
// an aggregate inside GROUP BY.
func (p *planning) checkGroupingFunctions() error {
	var err error
	check := func(e parser.Expr, inGroupBy bool) {
		walkExpr(e, func(x parser.Expr) {
			f, ok := x.(*parser.FuncCall)
			if !ok || err != nil {
				return
			}
			switch {
			case !expr.IsFunction(f.Name) && len(p.cat.Functions(f.Name)) == 0:
				err = posErr(f.Pos, fmt.Errorf("%w: Can't find any functions with the name '%s'", expr.ErrUnknownFunction, strings.ToUpper(f.Name)))
			case inGroupBy && p.isAggregate(f.Name):
				err = posErr(f.Pos, fmt.Errorf("%w: GROUP BY does not support aggregate functions: %s is an aggregate function.", ErrInvalid, strings.ToUpper(f.Name)))
			}
		})
	}
	for _, it := range p.items {
		check(it.expr, false)
	}
	for _, g := range p.cl.GroupBy {
		check(g, true)
	}
	if p.cl.Having != nil {
		check(p.cl.Having, false)
	}
	return err
}

// groupingMissing names every grouping expression the projection of a
// persistent aggregation leaves out, in ksqlDB's words: they become the
// key, so they must be selected.
func (p *planning) groupingMissing(groupCols []types.Column, rewritten []parser.Expr) error {
	var missing []string
	for g, c := range groupCols {
		found := false
		for _, e := range rewritten {
			if ref, ok := e.(*parser.ColumnRef); ok && ref.Name == c.Name {
				found = true
				break
			}
		}
		if !found {
			missing = append(missing, p.cl.GroupBy[g].String())
		}
	}
	what, list := "expression "+missing[0], missing[0]
	if len(missing) > 1 {
		what = "expressions " + strings.Join(missing[:len(missing)-1], ", ") + " and " + missing[len(missing)-1]
		list = strings.Join(missing, ", ")
	}
	return posErr(p.sel.Pos, fmt.Errorf("%w (ie, SELECT). The query used to build `%s` must include the grouping %s in its projection (eg, SELECT %s...).", ErrKeyProjection, p.target.Name, what, list))
}

// validateAggregate refuses, in ksqlDB's words, the GROUP BY queries it
// refuses, before anything is resolved. A push query that aggregates
// without GROUP BY is grouped by a constant instead (p.cl.GroupBy).
func (p *planning) validateAggregate() error {
	sel := p.sel
	if p.join == nil && strings.EqualFold(p.src.ValueFormat, "KAFKA") {
		// Its internal topics would have to hold the aggregate's columns
		// in a format of one primitive.
		return posErr(sel.Pos, fmt.Errorf("%w: Source(s) %s are using the 'KAFKA' value format. This format does not yet support GROUP BY.", ErrUnsupported, p.src.Name))
	}
	if len(p.cl.GroupBy) == 0 {
		for _, it := range p.items {
			if !p.containsAggregate(it.expr) {
				return posErr(it.expr.Position(), fmt.Errorf("%w: Non-aggregate SELECT expression(s) not part of GROUP BY: %s", ErrInvalid, parser.KsqlText(it.expr)))
			}
		}
		if p.target != nil && p.target.Kind == parser.KindTable && p.target.Existing == nil {
			var calls []string
			for _, it := range p.items {
				walkExpr(it.expr, func(e parser.Expr) {
					if f, ok := e.(*parser.FuncCall); ok && p.isAggregate(f.Name) {
						text := parser.KsqlText(f)
						if f.Star {
							text = f.Name + "(ROWTIME)" // ksqlDB counts rows by ROWTIME
						}
						calls = append(calls, text)
					}
				})
			}
			return posErr(sel.Pos, fmt.Errorf("%w: CREATE TABLE AS SELECT statement does not support aggregate function [%s] without a GROUP BY clause.", ErrUnsupported, strings.Join(calls, ", ")))
		}
		if p.target != nil {
			return posErr(sel.Pos, fmt.Errorf("%w: aggregate functions require a GROUP BY clause", ErrUnsupported))
		}
		// A push query aggregates all its rows as one group, as ksqlDB
		// does: grouped by a constant, which it does not show.
		p.cl.GroupBy = []parser.Expr{&parser.Literal{Pos: sel.Pos, Kind: parser.LitInteger, Text: "1"}}
	}
	seenGroup := map[int]bool{}
	for _, g := range p.cl.GroupBy {
		if ref, ok := g.(*parser.ColumnRef); ok {
			if i, _, err := p.sc.Resolve(ref); err == nil {
				if seenGroup[i] {
					return posErr(g.Position(), fmt.Errorf("%w: Duplicate GROUP BY expression: %s", ErrInvalid, strings.ToUpper(g.String())))
				}
				seenGroup[i] = true
			}
		}
	}
	if err := p.checkWindowBounds(); err != nil {
		return err
	}
	if err := p.checkGroupingFunctions(); err != nil {
		return err
	}
	if p.src.Kind == parser.KindTable && p.cl.Window != nil {
		return posErr(p.cl.Window.Pos, fmt.Errorf("%w: windowed aggregation of a TABLE is not supported: a table's rows have no place in time to window", ErrUnsupported))
	}
	return p.checkTargetKind(parser.KindTable)
}
