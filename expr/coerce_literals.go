package expr

import (
	"fmt"
	"strings"

	"github.com/cockroachdb/apd/v3"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/types"
)

// ksqlDB's implicit coercion of literals among expressions that must
// share a type (the elements of ARRAY[…], the keys or values of MAP(…)):
// the type comes from the other expressions, numbers widening; then a
// number or boolean literal that does not fit it becomes text when that
// type is STRING, and a STRING literal is read as a value of that type,
// which is an error when its text is not one ('not a number' as an INT).
// With nothing but STRING literals the type is STRING.

// unifyLiterals returns the type the expressions share and replaces each
// literal in cs that needs it by its coerced constant. mismatch builds the
// error for two expressions whose types do not unify.
func unifyLiterals(nodes []parser.Expr, cs []Compiled, mismatch func(i int, a, b types.Type) error) (types.Type, error) {
	target := types.UnknownType
	lit := func(i int) *parser.Literal {
		l, _ := nodes[i].(*parser.Literal)
		return l
	}
	// Pass 1: non-literals, then number and boolean literals, by widening.
	for pass := 0; pass < 2; pass++ {
		for i, c := range cs {
			l := lit(i)
			if (pass == 0) != (l == nil) || (l != nil && l.Kind == parser.LitString) {
				continue
			}
			t, ok := unifyTypes(target, c.Type, true)
			if !ok {
				if l != nil && target.Kind == types.String {
					continue // made text below
				}
				return types.Type{}, mismatch(i, target, c.Type)
			}
			target = t
		}
	}
	if target.Kind == types.Unknown {
		for i := range cs {
			if l := lit(i); l != nil && l.Kind == parser.LitString {
				target = types.StringType
			}
		}
	}
	for i, c := range cs {
		l := lit(i)
		switch {
		case l == nil || l.Kind == parser.LitNull:
		case l.Kind == parser.LitString && target.Kind != types.String:
			v, err := coerceStringLiteral(l.Str, target)
			if err != nil {
				return types.Type{}, errAt(nodes[i], err)
			}
			cs[i] = constant(target, v)
		case l.Kind != parser.LitString && target.Kind == types.String && c.Type.Kind != types.String:
			cs[i] = constant(types.StringType, literalText(l))
		}
	}
	return target, nil
}

// literalText is a number or boolean literal as text: its spelling for
// numbers, true or false for booleans.
func literalText(l *parser.Literal) string {
	if l.Kind == parser.LitBool {
		if l.Bool {
			return "true"
		}
		return "false"
	}
	return l.Text
}

// coerceStringLiteral reads the text of a STRING literal as a value of
// type t, or says, as ksqlDB does, that it is not one.
func coerceStringLiteral(s string, t types.Type) (any, error) {
	bad := fmt.Errorf("%w: invalid input syntax for type %s: \"%s\".", ErrType, t, s)
	text := strings.TrimSpace(s)
	switch t.Kind {
	case types.Integer, types.BigInt:
		d, err := types.ParseDecimal(text)
		if err != nil {
			return nil, bad
		}
		n, ok := types.DecimalToInt(d)
		if !ok || apd.New(n, 0).Cmp(d) != 0 {
			return nil, bad // out of range, or not a whole number
		}
		if t.Kind == types.BigInt {
			return n, nil
		}
		if n != int64(int32(n)) {
			return nil, bad
		}
		return int32(n), nil
	case types.Double, types.Decimal, types.Boolean:
		conv, err := CastFunc(types.StringType, t)
		if err != nil {
			return nil, bad
		}
		if v := conv(text); v != nil {
			return v, nil
		}
	}
	return nil, bad
}
