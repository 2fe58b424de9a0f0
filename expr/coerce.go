package expr

import (
	"errors"
	"fmt"
	"math/big"
	"strings"

	"github.com/cockroachdb/apd/v3"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/types"
)

// User lists — the operands of IN — are coerced to one common type before
// they are compared, as ksqlDB's CoercionUtil does:
//
//   - the common type starts as the first typed expression's type; a bare
//     NULL has no type and is skipped;
//   - numbers widen (INT < BIGINT < DECIMAL < DOUBLE, decimals to hold
//     both), in either direction;
//   - a literal (but not a column or call) converts more freely: a number
//     or boolean literal becomes STRING text, and a string literal parses
//     as the common numeric or boolean type (an unparsable one is an
//     "invalid input syntax" error); a numeric string widens the common
//     type by the number it holds ('2147483648' makes INT a BIGINT);
//   - ARRAY, MAP and STRUCT constructors are coerced element by element,
//     so ARRAY['1', NULL] fits ARRAY<BIGINT>; a STRUCT constructor adds
//     the fields it names to the common struct (names are case-sensitive);
//   - other ARRAY, MAP and STRUCT expressions must coerce element-wise one
//     way or the other;
//   - anything else is "operator does not exist: T = S (expr)".
//
// Every expression is then converted to the common type.

// errNoOperator marks a list member whose type no coercion reconciles
// with the common type; constructors re-raise it for their whole text.
var errNoOperator = errors.New("operator does not exist")

// errInvalidSyntax marks a string literal that does not parse as the
// common type.
var errInvalidSyntax = errors.New("invalid input syntax")

func noOperator(e parser.Expr, source, target types.Type) error {
	return fmt.Errorf("%w: %s = %s (%s)\nHint: You might need to add explicit type casts.",
		errNoOperator, target, source, parser.KsqlText(e))
}

func invalidSyntax(value string, target types.Type) error {
	return fmt.Errorf("%w for type %s: \"%s\".", errInvalidSyntax, target.Kind, value)
}

// typedExpr is one list member with its compiled form; a bare NULL has
// the Unknown type.
type typedExpr struct {
	e parser.Expr
	c Compiled
}

func (t typedExpr) untyped() bool { return t.c.Type.Kind == types.Unknown }

// userListCoercer resolves the common type of a user list.
type userListCoercer struct{ scope Scope }

func (u userListCoercer) typed(es []parser.Expr) ([]typedExpr, error) {
	out := make([]typedExpr, len(es))
	for i, e := range es {
		c, err := Compile(e, u.scope)
		if err != nil {
			return nil, err
		}
		out[i] = typedExpr{e, c}
	}
	return out, nil
}

// common folds the list into its common type; ok is false when every
// member is a bare NULL.
func (u userListCoercer) common(items []typedExpr) (t types.Type, ok bool, err error) {
	for _, it := range items {
		if t, ok, err = u.resolve(it, t, ok); err != nil {
			return types.Type{}, false, err
		}
	}
	return t, ok, nil
}

func (u userListCoercer) resolve(it typedExpr, target types.Type, have bool) (types.Type, bool, error) {
	if !have {
		return it.c.Type, !it.untyped(), nil
	}
	if it.untyped() {
		return target, true, nil
	}
	switch x := it.e.(type) {
	case *parser.ArrayCtor:
		if target.Kind != types.Array {
			return types.Type{}, false, noOperator(it.e, it.c.Type, target)
		}
		elem, err := u.structured(*target.Elem, x.Elems)
		if err != nil {
			return types.Type{}, false, u.rewrap(err, it, target)
		}
		return types.ArrayOf(elem), true, nil
	case *parser.MapCtor:
		if target.Kind != types.Map {
			return types.Type{}, false, noOperator(it.e, it.c.Type, target)
		}
		k, err := u.structured(*target.Key, x.Keys)
		if err != nil {
			return types.Type{}, false, u.rewrap(err, it, target)
		}
		v, err := u.structured(*target.Elem, x.Values)
		if err != nil {
			return types.Type{}, false, u.rewrap(err, it, target)
		}
		return types.MapOf(k, v), true, nil
	case *parser.StructCtor:
		if target.Kind != types.Struct {
			return types.Type{}, false, noOperator(it.e, it.c.Type, target)
		}
		st, err := u.structCommon(x, target)
		if err != nil {
			return types.Type{}, false, u.rewrap(err, it, target)
		}
		return st, true, nil
	case *parser.Literal:
		if x.Kind == parser.LitString {
			switch {
			case target.IsNumeric():
				t, err := numericFromString(x.Str, target)
				return t, err == nil, err
			case target.Kind == types.Boolean:
				if _, ok := parseLaxBool(x.Str); !ok {
					return types.Type{}, false, invalidSyntax(x.Str, types.BooleanType)
				}
				return target, true, nil
			}
		}
	}
	return simpleCommon(it, target)
}

// rewrap reports an element that does not fit as a failure of the whole
// constructor; a string that does not parse keeps its own message.
func (u userListCoercer) rewrap(err error, it typedExpr, target types.Type) error {
	if errors.Is(err, errNoOperator) {
		return fmt.Errorf("%w (element: %w)", noOperator(it.e, it.c.Type, target), err)
	}
	return err
}

// structured is the common type of a constructor's elements with the
// target's element type.
func (u userListCoercer) structured(target types.Type, es []parser.Expr) (types.Type, error) {
	items, err := u.typed(es)
	if err != nil {
		return types.Type{}, err
	}
	t, _, err := u.common(append([]typedExpr{{c: Compiled{Type: target}}}, items...))
	return t, err
}

// structCommon unions a STRUCT constructor's fields (first) with the
// target's; a field in both takes their common type.
func (u userListCoercer) structCommon(x *parser.StructCtor, target types.Type) (types.Type, error) {
	out := types.Type{Kind: types.Struct}
	seen := map[string]bool{}
	add := func(name string) error {
		if seen[name] {
			return nil
		}
		seen[name] = true
		var tf *types.Field
		for i := range target.Fields {
			if target.Fields[i].Name == name {
				tf = &target.Fields[i]
				break
			}
		}
		src := -1
		for i, n := range x.Names {
			if n == name {
				src = i
				break
			}
		}
		var ft types.Type
		switch {
		case src < 0:
			ft = tf.Type
		default:
			c, err := Compile(x.Values[src], u.scope)
			if err != nil {
				return err
			}
			ft = c.Type
			if tf != nil {
				t, ok, err := u.resolve(typedExpr{x.Values[src], c}, tf.Type, true)
				if err != nil {
					return err
				}
				if ok {
					ft = t
				}
			}
		}
		out.Fields = append(out.Fields, types.Field{Name: name, Type: ft})
		return nil
	}
	for _, n := range x.Names {
		if err := add(n); err != nil {
			return types.Type{}, err
		}
	}
	for _, f := range target.Fields {
		if err := add(f.Name); err != nil {
			return types.Type{}, err
		}
	}
	return out, nil
}

// simpleCommon reconciles a non-constructor with the common type: the
// member coerces to the target, or the target to the member.
func simpleCommon(it typedExpr, target types.Type) (types.Type, bool, error) {
	lax := isLiteral(it.e)
	if t, ok := canCoerce(it.c.Type, target, lax); ok {
		return t, true, nil
	}
	if t, ok := canCoerce(target, it.c.Type, lax); ok {
		return t, true, nil
	}
	return types.Type{}, false, noOperator(it.e, it.c.Type, target)
}

func isLiteral(e parser.Expr) bool {
	switch x := e.(type) {
	case *parser.Literal:
		return true
	case *parser.Unary:
		l, ok := x.X.(*parser.Literal)
		return ok && x.Op == parser.OpNeg && (l.Kind == parser.LitInteger || l.Kind == parser.LitDecimal || l.Kind == parser.LitDouble)
	}
	return false
}

// canCoerce reports whether values of from convert implicitly to to, and
// the type they then share (numbers widen to hold both). lax adds the
// conversions literals allow: number or boolean to STRING.
func canCoerce(from, to types.Type, lax bool) (types.Type, bool) {
	switch {
	case from.Equal(to):
		return to, true
	case from.IsNumeric() && to.IsNumeric():
		if numRank(from) > numRank(to) {
			return types.Type{}, false
		}
		return widen(from, to), true
	case lax && to.Kind == types.String && (from.IsNumeric() || from.Kind == types.Boolean):
		return to, true
	case lax && from.Kind == types.String && (to.Kind == types.Timestamp || to.Kind == types.Date || to.Kind == types.Time):
		return to, true
	}
	if from.Kind != to.Kind {
		return types.Type{}, false
	}
	switch to.Kind {
	case types.Array:
		e, ok := canCoerce(*from.Elem, *to.Elem, false)
		return types.ArrayOf(e), ok
	case types.Map:
		k, ok := canCoerce(*from.Key, *to.Key, false)
		v, ok2 := canCoerce(*from.Elem, *to.Elem, false)
		return types.MapOf(k, v), ok && ok2
	case types.Struct:
		out := types.Type{Kind: types.Struct}
		for _, tf := range to.Fields {
			ft := tf.Type
			for _, ff := range from.Fields {
				if ff.Name == tf.Name {
					t, ok := canCoerce(ff.Type, tf.Type, false)
					if !ok {
						return types.Type{}, false
					}
					ft = t
				}
			}
			out.Fields = append(out.Fields, types.Field{Name: tf.Name, Type: ft})
		}
		for _, ff := range from.Fields {
			found := false
			for _, tf := range to.Fields {
				found = found || ff.Name == tf.Name
			}
			if !found {
				return types.Type{}, false
			}
		}
		return out, true
	}
	return types.Type{}, false
}

func numRank(t types.Type) int {
	switch t.Kind {
	case types.Integer:
		return 1
	case types.BigInt:
		return 2
	case types.Decimal:
		return 3
	}
	return 4
}

// numericFromString widens a numeric common type by the number a string
// literal holds: an integer that fits INT is INT, one that fits BIGINT is
// BIGINT, anything else (a point, an exponent, more digits) a DECIMAL of
// its digits.
func numericFromString(s string, target types.Type) (types.Type, error) {
	src, ok := stringNumericType(s)
	if !ok {
		return types.Type{}, invalidSyntax(s, target)
	}
	switch {
	case target.Kind == types.Double:
		return types.DoubleType, nil
	case src.Kind == types.Decimal || target.Kind == types.Decimal:
		return widenDecimal(src, target), nil
	case numRank(src) <= numRank(target):
		return target, nil
	}
	return src, nil
}

// stringNumericType types numeric text as a literal of it would be typed;
// ok is false when the text is not a number (Java's BigDecimal syntax:
// no NaN or Infinity).
func stringNumericType(s string) (types.Type, bool) {
	t := strings.TrimSpace(s)
	if t == "" || strings.ContainsAny(strings.ToLower(t), "abcdfghijklmnopqrstuvwxyz") {
		return types.Type{}, false
	}
	d, err := types.ParseDecimal(t)
	if err != nil {
		return types.Type{}, false
	}
	if !strings.ContainsAny(t, ".eE") {
		var n big.Int
		if _, ok := n.SetString(strings.TrimPrefix(t, "+"), 10); ok {
			// The bounds are exclusive, as ksqlDB checks them.
			switch {
			case n.IsInt64() && n.Int64() > -1<<31 && n.Int64() < 1<<31-1:
				return types.IntegerType, true
			case n.IsInt64() && n.Int64() > -1<<63 && n.Int64() < 1<<63-1:
				return types.BigIntType, true
			}
		}
	}
	return decimalTypeOfValue(d), true
}

// decimalTypeOfValue is the DECIMAL type of a value's own digits.
func decimalTypeOfValue(d *apd.Decimal) types.Type {
	scale := int(-d.Exponent)
	prec := int(d.NumDigits())
	if scale < 0 {
		prec, scale = prec-scale, 0
	}
	prec = min(max(prec, scale, 1), types.MaxDecimalPrecision)
	return types.DecimalOf(prec, min(scale, prec))
}

// parseLaxBool reads a string literal as a BOOLEAN the way ksqlDB coerces
// literals: any non-empty prefix of TRUE or YES is true, of FALSE or NO
// false, ignoring case.
func parseLaxBool(s string) (bool, bool) {
	l := strings.ToLower(strings.TrimSpace(s))
	if l == "" {
		return false, false
	}
	for _, w := range []string{"true", "yes"} {
		if strings.HasPrefix(w, l) {
			return true, true
		}
	}
	for _, w := range []string{"false", "no"} {
		if strings.HasPrefix(w, l) {
			return false, true
		}
	}
	return false, false
}

// coerceTo converts a compiled member to the common type: a literal by
// converting its constant (string literals parse), anything else as a
// CAST would, with STRUCT fields matched by exact name.
func coerceTo(it typedExpr, to types.Type) (Eval, error) {
	if it.untyped() || it.c.Type.Equal(to) {
		return it.c.Eval, nil
	}
	if l, ok := it.e.(*parser.Literal); ok && l.Kind == parser.LitString && to.Kind == types.Boolean {
		b, ok := parseLaxBool(l.Str)
		if !ok {
			return nil, invalidSyntax(l.Str, to)
		}
		return func([]any) any { return b }, nil
	}
	f, err := coerceValue(it.c.Type, to)
	if err != nil {
		return nil, err
	}
	inner := it.c.Eval
	return func(row []any) any {
		v := inner(row)
		if v == nil {
			return nil
		}
		return f(v)
	}, nil
}

// coerceValue converts a non-nil value of from to to.
func coerceValue(from, to types.Type) (func(any) any, error) {
	if from.Equal(to) || from.Kind == types.Unknown {
		return func(v any) any { return v }, nil
	}
	nilSafe := func(f func(any) any) func(any) any {
		return func(v any) any {
			if v == nil {
				return nil
			}
			return f(v)
		}
	}
	switch {
	case to.Kind == types.Array && from.Kind == types.Array:
		f, err := coerceValue(*from.Elem, *to.Elem)
		if err != nil {
			return nil, err
		}
		f = nilSafe(f)
		return func(v any) any {
			list, ok := v.([]any)
			if !ok {
				return nil
			}
			out := make([]any, len(list))
			for i, x := range list {
				out[i] = f(x)
			}
			return out
		}, nil
	case to.Kind == types.Map && from.Kind == types.Map:
		f, err := coerceValue(*from.Elem, *to.Elem)
		if err != nil {
			return nil, err
		}
		f = nilSafe(f)
		return func(v any) any {
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			out := make(map[string]any, len(m))
			for k, x := range m {
				out[k] = f(x)
			}
			return out
		}, nil
	case to.Kind == types.Struct && from.Kind == types.Struct:
		src := make([]int, len(to.Fields))
		convs := make([]func(any) any, len(to.Fields))
		for i, tf := range to.Fields {
			src[i] = -1
			for j, ff := range from.Fields {
				if ff.Name == tf.Name {
					f, err := coerceValue(ff.Type, tf.Type)
					if err != nil {
						return nil, err
					}
					src[i], convs[i] = j, nilSafe(f)
					break
				}
			}
		}
		return func(v any) any {
			fields, ok := v.([]any)
			if !ok {
				return nil
			}
			out := make([]any, len(src))
			for i, j := range src {
				if j >= 0 && j < len(fields) {
					out[i] = convs[i](fields[j])
				}
			}
			return out
		}, nil
	}
	return CastFunc(from, to)
}

// structuredEqual is IN's equality: numbers by value, and inside arrays,
// maps and structs two NULLs are equal (a top-level NULL never matches).
func structuredEqual(a, b any) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	switch x := a.(type) {
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !structuredEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, found := y[k]
			if !found || !structuredEqual(v, w) {
				return false
			}
		}
		return true
	}
	return types.Equal(a, b)
}
