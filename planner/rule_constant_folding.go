package planner

import (
	"fmt"
	"math"
	"strconv"

	"github.com/cockroachdb/apd/v3"
	"github.com/sluice-sql/sluice/expr"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/planner/logical"
	"github.com/sluice-sql/sluice/types"
)

// constantFoldingRule computes, once at planning, the sub-expressions
// made only of literals (arithmetic, comparisons, boolean logic, string
// concatenation, a CAST of a literal) of the WHERE filter and of the
// projection, and puts a literal of the same SQL type in their place
// (`ms > 60 * 1000` runs as `MS > 60000`). It folds only what evaluates
// without error to a value (1/0 stays, to run as today), and no
// function call at all, so nothing that reads time, randomness or the
// record. The output columns keep the names bind gave them.
//
// It leaves alone the expressions the builder matches by their text:
// HAVING and a projection over an aggregate (against GROUP BY), over a
// PARTITION BY (against its expressions), over table functions (the
// flat-map's calls) and over joins (expanded once the join is built).
func (p *planning) constantFoldingRule() (bool, error) {
	changed := false
	p.q.Logical = logical.Transform(p.q.Logical, func(n logical.Node) logical.Node {
		switch x := n.(type) {
		case *logical.Filter:
			if hasAggregate(x.Input) {
				return n
			}
			pred := foldConstants(x.Pred, siteAny)
			if pred.String() == x.Pred.String() {
				return n
			}
			c := *x
			c.Pred, changed = pred, true
			return &c
		case *logical.Project:
			if x.Columns == nil || len(x.PartitionBy) > 0 || hasAggregate(x.Input) || hasFlatMap(x.Input) {
				return n
			}
			cols := make([]logical.Column, len(x.Columns))
			did := false
			for i, col := range x.Columns {
				cols[i] = col
				if e := foldConstants(col.Expr, siteAny); e.String() != col.Expr.String() {
					cols[i].Expr, did = e, true
				}
			}
			if !did {
				return n
			}
			c := *x
			c.Columns, changed = cols, true
			return &c
		}
		return n
	})
	return changed, nil
}

// hasFlatMap reports whether the plan runs table functions.
func hasFlatMap(root logical.Node) bool {
	if _, ok := root.(*logical.FlatMap); ok {
		return true
	}
	for _, in := range root.Inputs() {
		if hasFlatMap(in) {
			return true
		}
	}
	return false
}

// foldSite says where an expression stands, which decides whether a
// literal may take its place: a literal converts where another
// expression of its type would not (a number or boolean to STRING in an
// IN list, an ARRAY, a CASE; a STRING compared with a DATE or TIME).
type foldSite int

const (
	// siteAny: the whole predicate or column, or an operand of
	// arithmetic, concatenation, boolean logic or a CAST.
	siteAny foldSite = iota
	// siteCompared: an operand of a comparison, where only a STRING
	// literal is read otherwise.
	siteCompared
	// siteNone: anywhere else (function arguments, IN, BETWEEN, CASE,
	// constructors).
	siteNone
)

// foldConstants returns e with its constant sub-expressions folded
// (e itself is left unchanged).
func foldConstants(e parser.Expr, site foldSite) parser.Expr {
	if site != siteNone && constant(e) {
		if lit, ok := foldedLiteral(e, site); ok {
			return lit
		}
	}
	switch x := e.(type) {
	case *parser.Binary:
		c := *x
		in := siteAny
		if comparison(x.Op) {
			in = siteCompared
		}
		c.Left, c.Right = foldConstants(x.Left, in), foldConstants(x.Right, in)
		return &c
	case *parser.Unary:
		c := *x
		c.X = foldConstants(x.X, siteAny)
		return &c
	case *parser.Cast:
		c := *x
		c.X = foldConstants(x.X, siteAny)
		return &c
	}
	return parser.Rewrite(e, func(x parser.Expr) parser.Expr {
		if x == e {
			return nil
		}
		return foldConstants(x, siteNone)
	})
}

func comparison(op parser.BinaryOp) bool {
	switch op {
	case parser.OpEq, parser.OpNe, parser.OpLt, parser.OpLe, parser.OpGt, parser.OpGe, parser.OpIsDistinct, parser.OpIsNotDistinct:
		return true
	}
	return false
}

// constant reports whether e is made only of non-NULL literals,
// operators and CASTs.
func constant(e parser.Expr) bool {
	switch x := e.(type) {
	case *parser.Literal:
		return x.Kind != parser.LitNull
	case *parser.Binary:
		return constant(x.Left) && constant(x.Right)
	case *parser.Unary:
		return constant(x.X)
	case *parser.Cast:
		return constant(x.X)
	}
	return false
}

// noColumns is the scope of a constant: it names no column.
type noColumns struct{}

func (noColumns) Resolve(ref *parser.ColumnRef) (int, types.Type, error) {
	return 0, types.Type{}, fmt.Errorf("%w %s", expr.ErrUnknownColumn, ref.Name)
}

// foldedLiteral evaluates the constant e and states its value as a
// literal of e's type (a CAST of a literal where the literal alone would
// be typed otherwise, such as a BIGINT 5 or a DECIMAL(4, 2) 2.75). It
// says no when e does not compile, evaluates to NULL (which is what an
// error gives), has a type no literal states, when a STRING would stand
// compared (where ksqlDB reads a STRING literal as a date or time), or
// when the result is e as written.
func foldedLiteral(e parser.Expr, site foldSite) (parser.Expr, bool) {
	c, err := expr.Compile(e, noColumns{})
	if err != nil {
		return nil, false
	}
	v := c.Eval(nil)
	if v == nil || (site == siteCompared && c.Type.Kind == types.String) {
		return nil, false
	}
	lit, ok := literalOf(v, e.Position())
	if !ok {
		return nil, false
	}
	lc, err := expr.Compile(lit, noColumns{})
	if err != nil {
		return nil, false
	}
	if !lc.Type.Equal(c.Type) {
		lit = &parser.Cast{Pos: e.Position(), X: lit, Type: expr.TypeNameOf(c.Type)}
		if lc, err = expr.Compile(lit, noColumns{}); err != nil || !lc.Type.Equal(c.Type) {
			return nil, false
		}
	}
	if got := lc.Eval(nil); got == nil || fmt.Sprintf("%T %v", got, got) != fmt.Sprintf("%T %v", v, v) || lit.String() == e.String() {
		return nil, false
	}
	return lit, true
}

// literalOf writes a value as a literal (a negative number is one
// literal, as the parser reads -5).
func literalOf(v any, pos parser.Pos) (parser.Expr, bool) {
	number := func(kind parser.LiteralKind, text string) (parser.Expr, bool) {
		return &parser.Literal{Pos: pos, Kind: kind, Text: text}, true
	}
	switch x := v.(type) {
	case bool:
		return &parser.Literal{Pos: pos, Kind: parser.LitBool, Bool: x}, true
	case string:
		return &parser.Literal{Pos: pos, Kind: parser.LitString, Str: x}, true
	case int32:
		return number(parser.LitInteger, strconv.FormatInt(int64(x), 10))
	case int64:
		return number(parser.LitInteger, strconv.FormatInt(x, 10))
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) || (x == 0 && math.Signbit(x)) {
			return nil, false
		}
		return number(parser.LitDouble, strconv.FormatFloat(x, 'E', -1, 64))
	case *apd.Decimal:
		if x.Form != apd.Finite || x.Exponent > 0 || (x.IsZero() && x.Negative) {
			return nil, false
		}
		if x.Exponent == 0 {
			// Written without a point it reads as an integer, which
			// the CAST around it makes the DECIMAL it is.
			return number(parser.LitInteger, x.Text('f'))
		}
		return number(parser.LitDecimal, x.Text('f'))
	}
	return nil, false
}
