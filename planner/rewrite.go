package planner

import (
	"maps"

	"github.com/sluice-sql/sluice/expr"
	"github.com/sluice-sql/sluice/parser"
)

// walkExpr calls f on every node of e, parents first.
func walkExpr(e parser.Expr, f func(parser.Expr)) {
	parser.Inspect(e, func(x parser.Expr) bool {
		f(x)
		return true
	})
}

// unresolvedColumn returns the first column reference of e that sc cannot
// resolve, with the error saying why, or nil.
func unresolvedColumn(e parser.Expr, sc expr.Scope) (*parser.ColumnRef, error) {
	var found *parser.ColumnRef
	var why error
	walkColumns(e, func(ref *parser.ColumnRef) {
		if found != nil {
			return
		}
		if _, _, err := sc.Resolve(ref); err != nil {
			found, why = ref, err
		}
	})
	return found, why
}

// walkColumns calls f on each reference of e to a column: a lambda's
// parameters are not columns (inside its body they are skipped), nor is
// the unit word of TIMESTAMPADD and its kin.
func walkColumns(e parser.Expr, f func(*parser.ColumnRef)) {
	var visit func(e parser.Expr, bound map[string]bool)
	visit = func(e parser.Expr, bound map[string]bool) {
		parser.Inspect(e, func(x parser.Expr) bool {
			switch n := x.(type) {
			case *parser.Lambda:
				inner := maps.Clone(bound)
				if inner == nil {
					inner = map[string]bool{}
				}
				for _, p := range n.Params {
					inner[p] = true
				}
				visit(n.Body, inner)
				return false
			case *parser.FuncCall:
				for i, a := range n.Args {
					if !expr.IsTimeUnitArg(n.Name, i) {
						visit(a, bound)
					}
				}
				return false
			case *parser.ColumnRef:
				if n.Source == "" && bound[n.Name] {
					return false
				}
				f(n)
			}
			return true
		})
	}
	visit(e, nil)
}

// WalkColumns calls f on each column reference of e (lambda parameters
// and unit words are not columns).
func WalkColumns(e parser.Expr, f func(*parser.ColumnRef)) { walkColumns(e, f) }
