package expr

import (
	"fmt"
	"math"
	"strconv"

	"github.com/cockroachdb/apd/v3"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/types"
)

// widen returns the numeric type both operands convert to: INT < BIGINT <
// DECIMAL < DOUBLE, as ksqlDB types arithmetic. (A DECIMAL result's
// precision and scale depend on the operator: see decimalResult.)
func widen(a, b types.Type) types.Type {
	rank := func(t types.Type) int {
		switch t.Kind {
		case types.Integer:
			return 1
		case types.BigInt:
			return 2
		case types.Decimal:
			return 3
		case types.Double:
			return 4
		}
		return 0
	}
	if a.Kind == types.Decimal || b.Kind == types.Decimal {
		if a.Kind != types.Double && b.Kind != types.Double && a.IsNumeric() && b.IsNumeric() {
			return widenDecimal(a, b)
		}
	}
	if rank(a) >= rank(b) {
		return a
	}
	return b
}

// widenDecimal is the smallest DECIMAL holding both types' values (an
// integer type first becomes DECIMAL(10, 0) or DECIMAL(19, 0)), as
// ksqlDB's DecimalUtil.widen: the larger scale, the larger integer part.
func widenDecimal(a, b types.Type) types.Type {
	a, _ = types.DecimalTypeOf(a)
	b, _ = types.DecimalTypeOf(b)
	s := max(a.Scale, b.Scale)
	p := min(max(a.Precision-a.Scale, b.Precision-b.Scale)+s, types.MaxDecimalPrecision)
	return types.DecimalOf(p, min(s, p))
}

// decimalResult types a DECIMAL operation as ksqlDB's SqlDecimal does
// (integers first widen to DECIMAL(10, 0) or DECIMAL(19, 0)):
//
//   - -  precision max(p1-s1, p2-s2) + max(s1, s2) + 1, scale max(s1, s2)
//   - precision p1 + p2 + 1,                       scale s1 + s2
//     /    precision p1 - s1 + s2 + max(6, s1 + p2 + 1), scale max(6, s1 + p2 + 1)
//     %    precision min(p1-s1, p2-s2) + max(s1, s2),    scale max(s1, s2)
//
// Precision is capped at 38, and the scale at the capped precision.
func decimalResult(op parser.BinaryOp, a, b types.Type) types.Type {
	a, _ = types.DecimalTypeOf(a)
	b, _ = types.DecimalTypeOf(b)
	p1, s1, p2, s2 := a.Precision, a.Scale, b.Precision, b.Scale
	var p, s int
	switch op {
	case parser.OpAdd, parser.OpSub:
		s = max(s1, s2)
		p = max(p1-s1, p2-s2) + s + 1
	case parser.OpMul:
		p, s = p1+p2+1, s1+s2
	case parser.OpDiv:
		s = max(6, s1+p2+1)
		p = p1 - s1 + s2 + s
	default: // OpMod
		s = max(s1, s2)
		p = min(p1-s1, p2-s2) + s
	}
	p = min(max(p, 1), types.MaxDecimalPrecision)
	s = min(s, p)
	return types.DecimalOf(p, s)
}

// decimalOp implements DECIMAL arithmetic into type t: the exact result
// (division to ample digits, HALF_UP) is rounded HALF_UP to t's scale; a
// result with too many integer digits, and division or modulo by zero,
// are NULL (ksqlDB logs an error and yields NULL).
func decimalOp(op parser.BinaryOp, t types.Type) func(a, b *apd.Decimal) any {
	var f func(ctx *apd.Context, d, x, y *apd.Decimal) (apd.Condition, error)
	switch op {
	case parser.OpAdd:
		f = (*apd.Context).Add
	case parser.OpSub:
		f = (*apd.Context).Sub
	case parser.OpMul:
		f = (*apd.Context).Mul
	case parser.OpDiv:
		f = (*apd.Context).Quo
	default:
		f = (*apd.Context).Rem
	}
	ctx := types.DecimalContext()
	return func(a, b *apd.Decimal) any {
		if (op == parser.OpDiv || op == parser.OpMod) && b.IsZero() {
			return nil
		}
		var d apd.Decimal
		if _, err := f(ctx, &d, a, b); err != nil {
			return nil
		}
		out, err := types.FitDecimal(&d, t.Precision, t.Scale)
		if err != nil {
			return nil
		}
		return out
	}
}

// converter returns a function converting a numeric value to t's Go type;
// other types pass through.
func converter(t types.Type) func(any) any {
	switch t.Kind {
	case types.BigInt:
		return func(v any) any {
			if x, ok := v.(int32); ok {
				return int64(x)
			}
			return v
		}
	case types.Double:
		return func(v any) any {
			switch x := v.(type) {
			case int32:
				return float64(x)
			case int64:
				return float64(x)
			case *apd.Decimal:
				return types.DecimalFloat(x)
			}
			return v
		}
	case types.Decimal:
		return func(v any) any {
			d, ok := types.AsDecimal(v)
			if !ok {
				return v
			}
			out, err := types.FitDecimal(d, t.Precision, t.Scale)
			if err != nil {
				return nil
			}
			return out
		}
	}
	return func(v any) any { return v }
}

func compileBinary(b *parser.Binary, scope Scope) (Compiled, error) {
	l, err := Compile(b.Left, scope)
	if err != nil {
		return Compiled{}, err
	}
	r, err := Compile(b.Right, scope)
	if err != nil {
		return Compiled{}, err
	}
	var c Compiled
	switch b.Op {
	case parser.OpAnd, parser.OpOr:
		c, err = logical(b.Op, l, r)
	case parser.OpAdd, parser.OpSub, parser.OpMul, parser.OpDiv, parser.OpMod:
		if inLambda(scope) {
			l.Eval, r.Eval = faultOnNull(l.Eval), faultOnNull(r.Eval)
		}
		if c, err = arithmetic(b.Op, l, r); err != nil {
			err = fmt.Errorf("%w: Error processing expression: %s. %w", ErrType, parser.KsqlText(b), err)
		}
	case parser.OpConcat:
		c, err = concatOp(l, r)
	default:
		c, err = comparison(b, l, r)
	}
	if err != nil {
		return Compiled{}, errAt(b, err)
	}
	c.Const = l.Const && r.Const
	return fold(c), nil
}

func logical(op parser.BinaryOp, l, r Compiled) (Compiled, error) {
	for _, t := range []types.Type{l.Type, r.Type} {
		if t.Kind != types.Boolean && t.Kind != types.Unknown {
			return Compiled{}, fmt.Errorf("%w: %s needs BOOLEAN operands, got %s", ErrType, op, t)
		}
	}
	lf, rf := l.Eval, r.Eval
	if op == parser.OpAnd {
		return Compiled{Type: types.BooleanType, Eval: func(row []any) any {
			a, aok := lf(row).(bool)
			if aok && !a {
				return false
			}
			b, bok := rf(row).(bool)
			if bok && !b {
				return false
			}
			if aok && bok {
				return true
			}
			return nil
		}}, nil
	}
	return Compiled{Type: types.BooleanType, Eval: func(row []any) any {
		a, aok := lf(row).(bool)
		if aok && a {
			return true
		}
		b, bok := rf(row).(bool)
		if bok && b {
			return true
		}
		if aok && bok {
			return false
		}
		return nil
	}}, nil
}

func concatOp(l, r Compiled) (Compiled, error) {
	lf, rf := l.Eval, r.Eval
	return Compiled{Type: types.StringType, Eval: func(row []any) any {
		a, b := lf(row), rf(row)
		if a == nil || b == nil {
			return nil
		}
		return types.FormatValue(a) + types.FormatValue(b)
	}}, nil
}

func arithmetic(op parser.BinaryOp, l, r Compiled) (Compiled, error) {
	if op == parser.OpAdd && l.Type.Kind == types.String && r.Type.Kind == types.String {
		return concatOp(l, r)
	}
	lt, rt := l.Type, r.Type
	if lt.Kind == types.Unknown || rt.Kind == types.Unknown {
		// A bare NULL has no type to compute in: ksqlDB refuses it
		// (CAST(NULL AS INT) + 1 is fine).
		return Compiled{}, fmt.Errorf("Arithmetic on types %s and %s are not supported.", arithmeticTypeText(l.Type), arithmeticTypeText(r.Type))
	}
	if !lt.IsNumeric() || !rt.IsNumeric() {
		return Compiled{}, fmt.Errorf("Unsupported arithmetic types. %s %s", l.Type.Kind, r.Type.Kind)
	}
	t := widen(lt, rt)
	lf, rf := l.Eval, r.Eval
	var eval Eval
	switch t.Kind {
	case types.Decimal:
		t = decimalResult(op, lt, rt)
		f := decimalOp(op, t)
		eval = func(row []any) any {
			a, ok1 := types.AsDecimal(lf(row))
			b, ok2 := types.AsDecimal(rf(row))
			if !ok1 || !ok2 {
				return nil
			}
			return f(a, b)
		}
	case types.Integer:
		f := intOp[int32](op)
		eval = func(row []any) any {
			a, ok1 := lf(row).(int32)
			b, ok2 := rf(row).(int32)
			if !ok1 || !ok2 {
				return nil
			}
			return f(a, b)
		}
	case types.BigInt:
		f := intOp[int64](op)
		eval = func(row []any) any {
			a, ok1 := types.AsInt64(lf(row))
			b, ok2 := types.AsInt64(rf(row))
			if !ok1 || !ok2 {
				return nil
			}
			return f(a, b)
		}
	default:
		f := floatOp(op)
		eval = func(row []any) any {
			a, ok1 := types.AsFloat(lf(row))
			b, ok2 := types.AsFloat(rf(row))
			if !ok1 || !ok2 {
				return nil
			}
			return f(a, b)
		}
	}
	return Compiled{Type: t, Eval: eval}, nil
}

// intOp implements integer arithmetic; division and modulo by zero give
// NULL, as ksqlDB does.
func intOp[T int32 | int64](op parser.BinaryOp) func(a, b T) any {
	switch op {
	case parser.OpAdd:
		return func(a, b T) any { return a + b }
	case parser.OpSub:
		return func(a, b T) any { return a - b }
	case parser.OpMul:
		return func(a, b T) any { return a * b }
	case parser.OpDiv:
		return func(a, b T) any {
			if b == 0 {
				return nil
			}
			return a / b
		}
	}
	return func(a, b T) any {
		if b == 0 {
			return nil
		}
		return a % b
	}
}

func floatOp(op parser.BinaryOp) func(a, b float64) any {
	switch op {
	case parser.OpAdd:
		return func(a, b float64) any { return a + b }
	case parser.OpSub:
		return func(a, b float64) any { return a - b }
	case parser.OpMul:
		return func(a, b float64) any { return a * b }
	case parser.OpDiv:
		return func(a, b float64) any { return a / b }
	}
	return func(a, b float64) any { return math.Mod(a, b) }
}

func comparable(a, b types.Type) bool {
	switch {
	case a.Kind == types.Unknown || b.Kind == types.Unknown:
		return true
	case a.IsNumeric() && b.IsNumeric():
		return true
	case a.Kind == types.Timestamp && (b.Kind == types.String || b.Kind == types.BigInt):
		return true
	case b.Kind == types.Timestamp && (a.Kind == types.String || a.Kind == types.BigInt):
		return true
	}
	if a.Kind != b.Kind {
		return false
	}
	switch a.Kind {
	case types.Array:
		return comparable(*a.Elem, *b.Elem)
	case types.Map:
		return comparable(*a.Key, *b.Key) && comparable(*a.Elem, *b.Elem)
	case types.Struct:
		if len(a.Fields) != len(b.Fields) {
			return false
		}
		for i := range a.Fields {
			if a.Fields[i].Name != b.Fields[i].Name || !comparable(a.Fields[i].Type, b.Fields[i].Type) {
				return false
			}
		}
	}
	return true
}

// comparisonNames are ksqlDB's names for the comparison operators, as its
// errors print them.
var comparisonNames = map[parser.BinaryOp]string{
	parser.OpEq: "EQUAL", parser.OpNe: "NOT_EQUAL",
	parser.OpLt: "LESS_THAN", parser.OpLe: "LESS_THAN_OR_EQUAL",
	parser.OpGt: "GREATER_THAN", parser.OpGe: "GREATER_THAN_OR_EQUAL",
	parser.OpIsDistinct: "IS_DISTINCT_FROM", parser.OpIsNotDistinct: "IS_NOT_DISTINCT_FROM",
}

func isEquality(op parser.BinaryOp) bool {
	return op == parser.OpEq || op == parser.OpNe || op == parser.OpIsDistinct || op == parser.OpIsNotDistinct
}

func isCollection(t types.Type) bool {
	return t.Kind == types.Array || t.Kind == types.Map || t.Kind == types.Struct
}

// temporalLiteral reads a STRING literal compared with a TIME or DATE
// value as that type, as ksqlDB does ('00:00:00.010', '2021-01-01'):
// c is the literal's compiled form, t the other side's type.
func temporalLiteral(e parser.Expr, c Compiled, t types.Type) (Compiled, bool) {
	if (t.Kind != types.Time && t.Kind != types.Date) || c.Type.Kind != types.String || !isLiteral(e) {
		return c, false
	}
	conv, err := CastFunc(types.StringType, t)
	if err != nil {
		return c, false
	}
	v := conv(c.Eval(nil))
	if v == nil {
		return c, false
	}
	return Compiled{Type: t, Eval: func([]any) any { return v }}, true
}

func comparison(b *parser.Binary, l, r Compiled) (Compiled, error) {
	op := b.Op
	if c, ok := temporalLiteral(b.Right, r, l.Type); ok {
		r = c
	} else if c, ok := temporalLiteral(b.Left, l, r.Type); ok {
		l = c
	}
	// ARRAY, MAP and STRUCT values have equality (deep, two NULL elements
	// equal) but no order.
	if !comparable(l.Type, r.Type) || (isCollection(l.Type) || isCollection(r.Type)) && !isEquality(op) {
		return Compiled{}, fmt.Errorf("%w: Cannot compare %s (%s) to %s (%s) with %s.", ErrType,
			parser.KsqlText(b.Left), l.Type, parser.KsqlText(b.Right), r.Type, comparisonNames[op])
	}
	if (l.Type.Kind == types.Unknown || r.Type.Kind == types.Unknown) && op != parser.OpIsDistinct && op != parser.OpIsNotDistinct {
		return Compiled{}, fmt.Errorf("%w: Comparison with NULL not supported: %s %s %s\nUse 'IS NULL' or 'IS NOT NULL' instead.", ErrType,
			nullTypeText(l.Type), op, nullTypeText(r.Type))
	}
	if isCollection(l.Type) || isCollection(r.Type) {
		return collectionEquality(op, l, r), nil
	}
	lf, rf := l.Eval, r.Eval
	var test func(c int) bool
	switch op {
	case parser.OpEq, parser.OpIsNotDistinct:
		test = func(c int) bool { return c == 0 }
	case parser.OpNe, parser.OpIsDistinct:
		test = func(c int) bool { return c != 0 }
	case parser.OpLt:
		test = func(c int) bool { return c < 0 }
	case parser.OpLe:
		test = func(c int) bool { return c <= 0 }
	case parser.OpGt:
		test = func(c int) bool { return c > 0 }
	case parser.OpGe:
		test = func(c int) bool { return c >= 0 }
	default:
		return Compiled{}, fmt.Errorf("%w: unknown operator %s", ErrType, op)
	}
	if op == parser.OpIsDistinct || op == parser.OpIsNotDistinct {
		distinct := op == parser.OpIsDistinct
		return Compiled{Type: types.BooleanType, Eval: func(row []any) any {
			a, b := lf(row), rf(row)
			if a == nil || b == nil {
				return (a == nil) != (b == nil) == distinct
			}
			c, ok := types.Compare(a, b)
			return ok && test(c)
		}}, nil
	}
	// Timestamps compared with strings parse the string once per row;
	// with a constant string that cost is tiny next to decoding.
	tsL, tsR := l.Type.Kind == types.Timestamp, r.Type.Kind == types.Timestamp
	// ksqlDB's comparisons are two-valued: a NULL operand makes them
	// false, not NULL (so NOT (a = b) is true when b is NULL).
	return Compiled{Type: types.BooleanType, Eval: func(row []any) any {
		a, b := lf(row), rf(row)
		if a == nil || b == nil {
			return false
		}
		if tsL {
			b = timestampOperand(b)
		} else if tsR {
			a = timestampOperand(a)
		}
		c, ok := types.Compare(a, b)
		return ok && test(c)
	}}, nil
}

func timestampOperand(v any) any {
	if s, ok := v.(string); ok {
		if ms, err := ParseTimestampText(s); err == nil {
			return ms
		}
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return n
		}
	}
	return v
}

// collectionEquality compares ARRAY, MAP and STRUCT values deeply: = and
// <> are false when either side is NULL; IS [NOT] DISTINCT FROM compare
// NULLs too.
func collectionEquality(op parser.BinaryOp, l, r Compiled) Compiled {
	lf, rf := l.Eval, r.Eval
	negate := op == parser.OpNe || op == parser.OpIsDistinct
	nullSafe := op == parser.OpIsDistinct || op == parser.OpIsNotDistinct
	return Compiled{Type: types.BooleanType, Eval: func(row []any) any {
		a, b := lf(row), rf(row)
		if (a == nil || b == nil) && !nullSafe {
			return false
		}
		return structuredEqual(a, b) != negate
	}}
}

// nullTypeText names a comparison operand's type as ksqlDB's error does:
// a bare NULL's type is NULL.
func nullTypeText(t types.Type) string {
	if t.Kind == types.Unknown {
		return "NULL"
	}
	return t.String()
}

func arithmeticTypeText(t types.Type) string {
	if t.Kind == types.Unknown {
		return "null"
	}
	return t.String()
}
