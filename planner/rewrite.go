package planner

import (
	"maps"

	"github.com/sluice-sql/sluice/expr"
	"github.com/sluice-sql/sluice/parser"
)

// mapExpr rebuilds e bottom-up, replacing each node for which f returns
// a non-nil expression. f sees a node before its children; returning nil
// descends into them.
func mapExpr(e parser.Expr, f func(parser.Expr) parser.Expr) parser.Expr {
	if e == nil {
		return nil
	}
	if r := f(e); r != nil {
		return r
	}
	m := func(x parser.Expr) parser.Expr { return mapExpr(x, f) }
	ms := func(xs []parser.Expr) []parser.Expr {
		out := make([]parser.Expr, len(xs))
		for i, x := range xs {
			out[i] = m(x)
		}
		return out
	}
	switch x := e.(type) {
	case *parser.Binary:
		c := *x
		c.Left, c.Right = m(x.Left), m(x.Right)
		return &c
	case *parser.Unary:
		c := *x
		c.X = m(x.X)
		return &c
	case *parser.FuncCall:
		c := *x
		c.Args = ms(x.Args)
		return &c
	case *parser.Case:
		c := *x
		c.Operand = m(x.Operand)
		c.Whens = make([]parser.When, len(x.Whens))
		for i, w := range x.Whens {
			c.Whens[i] = parser.When{Cond: m(w.Cond), Result: m(w.Result)}
		}
		c.Else = m(x.Else)
		return &c
	case *parser.Cast:
		c := *x
		c.X = m(x.X)
		return &c
	case *parser.IsNull:
		c := *x
		c.X = m(x.X)
		return &c
	case *parser.In:
		c := *x
		c.X, c.List = m(x.X), ms(x.List)
		return &c
	case *parser.Between:
		c := *x
		c.X, c.Lo, c.Hi = m(x.X), m(x.Lo), m(x.Hi)
		return &c
	case *parser.Like:
		c := *x
		c.X, c.Pattern = m(x.X), m(x.Pattern)
		return &c
	case *parser.Subscript:
		c := *x
		c.X, c.Index = m(x.X), m(x.Index)
		return &c
	case *parser.Dereference:
		c := *x
		c.X = m(x.X)
		return &c
	case *parser.ArrayCtor:
		c := *x
		c.Elems = ms(x.Elems)
		return &c
	case *parser.MapCtor:
		c := *x
		c.Keys, c.Values = ms(x.Keys), ms(x.Values)
		return &c
	case *parser.StructCtor:
		c := *x
		c.Values = ms(x.Values)
		return &c
	case *parser.Lambda:
		c := *x
		c.Body = m(x.Body)
		return &c
	}
	return e
}

// walkExpr calls f on every node of e, parents first.
func walkExpr(e parser.Expr, f func(parser.Expr)) {
	mapExpr(e, func(x parser.Expr) parser.Expr {
		f(x)
		return nil
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
		mapExpr(e, func(x parser.Expr) parser.Expr {
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
				return x
			case *parser.FuncCall:
				for i, a := range n.Args {
					if !expr.IsTimeUnitArg(n.Name, i) {
						visit(a, bound)
					}
				}
				return x
			case *parser.ColumnRef:
				if n.Source == "" && bound[n.Name] {
					return x
				}
				f(n)
			}
			return nil
		})
	}
	visit(e, nil)
}

// WalkColumns calls f on each column reference of e (lambda parameters
// and unit words are not columns).
func WalkColumns(e parser.Expr, f func(*parser.ColumnRef)) { walkColumns(e, f) }
