package planner

import (
	"strconv"
	"strings"

	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/types"
)

// implicitDecimalCasts gives INSERT INTO the implicit casts ksqlDB makes:
// a SELECT item that is a number literal, where the existing sink's
// column in the same place (key columns first, then values) is a
// DECIMAL, is cast to that DECIMAL when the literal fits it without
// losing digits (no more integer digits, no more fraction digits).
// INSERT INTO t SELECT 1 AS c … into c DECIMAL(5,2) then writes 1.00
// instead of refusing an INT where the sink has a DECIMAL.
func (p *planning) implicitDecimalCasts() {
	if p.target == nil || p.target.Existing == nil {
		return
	}
	ex := p.target.Existing.Schema
	cols := append(append([]types.Column{}, ex.Keys()...), ex.Values()...)
	for i := range p.items {
		if i >= len(cols) || p.items[i].star || cols[i].Type.Kind != types.Decimal {
			continue
		}
		to := cols[i].Type
		precision, scale, ok := literalDecimal(p.items[i].expr)
		if !ok || scale > to.Scale || precision-scale > to.Precision-to.Scale {
			continue
		}
		pos := p.items[i].expr.Position()
		p.items[i].expr = &parser.Cast{Pos: pos, X: p.items[i].expr,
			Type: &parser.TypeName{Pos: pos, Name: "DECIMAL", Params: []int{to.Precision, to.Scale}}}
	}
}

// literalDecimal is the precision and scale of the DECIMAL that holds a
// number literal (optionally negated) exactly, as ksqlDB types the
// literal's value: an integer has scale 0, 2.50 scale 2, a double its
// shortest decimal form with at least one fraction digit.
func literalDecimal(e parser.Expr) (precision, scale int, ok bool) {
	if u, neg := e.(*parser.Unary); neg && u.Op == parser.OpNeg {
		e = u.X
	}
	lit, isLit := e.(*parser.Literal)
	if !isLit {
		return 0, 0, false
	}
	text := lit.Text
	switch lit.Kind {
	case parser.LitInteger, parser.LitDecimal:
	case parser.LitDouble:
		f, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return 0, 0, false
		}
		text = strconv.FormatFloat(f, 'f', -1, 64)
		if !strings.Contains(text, ".") {
			text += ".0"
		}
	default:
		return 0, 0, false
	}
	whole, frac, _ := strings.Cut(strings.TrimLeft(text, "+-"), ".")
	digits := strings.TrimLeft(whole+frac, "0")
	precision, scale = max(len(digits), 1), len(frac)
	return max(precision, scale), scale, true
}
