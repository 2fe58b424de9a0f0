package planner

// The resolve pass of an aggregation: grouping keys and aggregate calls
// typed against the source row.

import (
	"fmt"
	"strings"

	"github.com/sluice-sql/sluice/expr"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/types"
)

// resolveGrouping types the GROUP BY expressions against the source row:
// each becomes a key column of the aggregate's rows, found by its text.
func (p *planning) resolveGrouping() (groupText map[string]int, groupCols []types.Column, groupEvals []expr.Eval, err error) {
	groupText = map[string]int{}
	for i, g := range p.cl.GroupBy {
		c, err := expr.Compile(g, p.withFunctions(p.sc))
		if err != nil {
			return nil, nil, nil, err
		}
		groupText[g.String()] = i
		groupCols = append(groupCols, types.Column{Name: fmt.Sprintf("%s%d", groupColPrefix, i), Type: c.Type, Key: true})
		groupEvals = append(groupEvals, c.Eval)
	}
	return groupText, groupCols, groupEvals, nil
}

// resolveAggregateCalls finds the aggregate calls of the SELECT list and
// HAVING, de-duplicated by their text, rewrites both to read the grouping
// and aggregate columns, and lists the source columns the calls' arguments
// read.
func (p *planning) resolveAggregateCalls(groupText map[string]int, groupCols []types.Column) (calls []*parser.FuncCall, rewritten []parser.Expr, having parser.Expr, argCols []int, err error) {
	callIndex := map[string]int{}
	rewrite := func(e parser.Expr) parser.Expr {
		return parser.Rewrite(e, func(x parser.Expr) parser.Expr {
			if i, ok := groupText[x.String()]; ok {
				return &parser.ColumnRef{Pos: x.Position(), Name: groupCols[i].Name}
			}
			if f, ok := x.(*parser.FuncCall); ok && p.isAggregate(f.Name) {
				key := f.String()
				i, seen := callIndex[key]
				if !seen {
					i = len(calls)
					callIndex[key] = i
					calls = append(calls, f)
				}
				return &parser.ColumnRef{Pos: f.Pos, Name: fmt.Sprintf("%s%d", aggColPrefix, i)}
			}
			return nil
		})
	}
	rewritten = make([]parser.Expr, len(p.items))
	for i, it := range p.items {
		rewritten[i] = rewrite(it.expr)
	}
	if p.cl.Having != nil {
		having = rewrite(p.cl.Having)
	}
	if len(calls) == 0 {
		return nil, nil, nil, nil, posErr(p.sel.Pos, fmt.Errorf("%w: GROUP BY requires aggregate functions in either the SELECT or HAVING clause.", ErrInvalid))
	}
	seenCol := map[int]bool{}
	for _, f := range calls {
		for _, a := range f.Args {
			var err error
			walkExpr(a, func(e parser.Expr) {
				if err != nil {
					return
				}
				if ff, ok := e.(*parser.FuncCall); ok && p.isAggregate(ff.Name) {
					err = posErr(ff.Pos, fmt.Errorf("%w: Aggregate functions can not be nested: %s(%s())", ErrInvalid, f.Name, ff.Name))
				}
				if ref, ok := e.(*parser.ColumnRef); ok {
					i, _, rerr := p.sc.Resolve(ref)
					if rerr != nil {
						err = posErr(ref.Pos, rerr)
						return
					}
					if !seenCol[i] {
						seenCol[i] = true
						argCols = append(argCols, i)
					}
				}
			})
			if err != nil {
				return nil, nil, nil, nil, err
			}
		}
	}
	return calls, rewritten, having, argCols, nil
}

// literalInitArgs refuses an aggregate call whose arguments after the
// ones read from each row (expr.AggregateColumnArgs) are not literal
// constants, in ksqlDB's words: those arguments configure the aggregate
// once, before it sees a row. Like ksqlDB it asks once the call's
// argument types have chosen the aggregate.
func literalInitArgs(f *parser.FuncCall) error {
	for i := expr.AggregateColumnArgs(f.Name, len(f.Args)); i < len(f.Args); i++ {
		if !isLiteral(f.Args[i]) {
			return posErr(f.Args[i].Position(), fmt.Errorf("%w: Parameter %d passed to function %s must be a literal constant, but was expression: '%s'",
				ErrInvalid, i+1, strings.ToUpper(f.Name), parser.KsqlText(f.Args[i])))
		}
	}
	return nil
}

// isLiteral reports whether e is a literal, a signed number included.
func isLiteral(e parser.Expr) bool {
	switch x := e.(type) {
	case *parser.Literal:
		return true
	case *parser.Unary:
		_, ok := x.X.(*parser.Literal)
		return ok && (x.Op == parser.OpNeg || x.Op == parser.OpPlus)
	}
	return false
}
