package expr

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cockroachdb/apd/v3"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/types"
)

// ResolveType turns a parsed type name into a Type, knowing only the
// built-in types; ResolveTypeWith also knows custom ones.
func ResolveType(tn *parser.TypeName) (types.Type, error) {
	return ResolveTypeWith(tn, nil)
}

// resolveBuiltin resolves a scalar or DECIMAL type name.
func resolveBuiltin(tn *parser.TypeName) (types.Type, error) {
	if strings.EqualFold(tn.Name, "DECIMAL") {
		t := types.Type{Kind: types.Decimal, Precision: 10}
		if len(tn.Params) > 0 {
			t.Precision = tn.Params[0]
		}
		if len(tn.Params) > 1 {
			t.Scale = tn.Params[1]
		}
		// ksqlDB's SqlDecimal.validateParameters, in its words: precision
		// at least 1, scale within it, and no upper bound, so that
		// DECIMAL(50, 30) is a type a column may have (results of
		// arithmetic are capped at types.MaxDecimalPrecision, as ksqlDB
		// caps them).
		switch {
		case t.Precision < 1:
			return types.Type{}, fmt.Errorf("%w: DECIMAL precision must be >= 1: DECIMAL(%d,%d)", ErrType, t.Precision, t.Scale)
		case t.Scale < 0:
			return types.Type{}, fmt.Errorf("%w: DECIMAL scale must be >= 0: DECIMAL(%d,%d)", ErrType, t.Precision, t.Scale)
		case t.Scale > t.Precision:
			return types.Type{}, fmt.Errorf("%w: DECIMAL precision must be >= scale: DECIMAL(%d,%d)", ErrType, t.Precision, t.Scale)
		}
		return t, nil
	}
	if t, ok := types.ParseScalar(tn.Name); ok {
		return t, nil
	}
	return types.Type{}, fmt.Errorf("%w: unknown type %s", ErrType, tn.Name)
}

func compileCast(c *parser.Cast, scope Scope) (Compiled, error) {
	x, err := Compile(c.X, scope)
	if err != nil {
		return Compiled{}, err
	}
	to, err := ResolveType(c.Type)
	if err != nil {
		return Compiled{}, errAt(c, err)
	}
	conv, err := CastFunc(x.Type, to)
	if err != nil {
		return Compiled{}, errAt(c, err)
	}
	f := x.Eval
	return fold(Compiled{Type: to, Const: x.Const, Eval: func(row []any) any {
		v := f(row)
		if v == nil {
			return nil
		}
		return conv(v)
	}}), nil
}

// CastFunc returns the conversion of a non-nil value from one type to
// another, or an error when SQL does not allow that cast. A value that
// cannot be converted (e.g. 'abc' to INT) becomes NULL.
func CastFunc(from, to types.Type) (func(any) any, error) {
	if f := tmCastFunc(from.Kind, to.Kind); f != nil {
		return f, nil
	}
	switch to.Kind {
	case types.String:
		switch from.Kind {
		case types.Array, types.Map, types.Struct:
			return func(v any) any { return javaString(v, from) }, nil
		case types.Timestamp, types.Date, types.Time:
			return tmCastToString(from.Kind), nil
		}
		return func(v any) any { return types.FormatValue(v) }, nil
	case types.Integer:
		return func(v any) any {
			switch x := v.(type) {
			case int32:
				return x
			case int64:
				return int32(x)
			case float64:
				return int32(SaturateInt(x, math.MinInt32, math.MaxInt32))
			case *apd.Decimal:
				n, _ := types.DecimalToInt(x)
				return int32(n) // BigDecimal.intValue keeps the low bits
			case string:
				n, err := strconv.ParseInt(strings.TrimSpace(x), 10, 32)
				if err != nil {
					return nil
				}
				return int32(n)
			case bool:
				if x {
					return int32(1)
				}
				return int32(0)
			}
			return nil
		}, nil
	case types.BigInt:
		return func(v any) any {
			switch x := v.(type) {
			case int32:
				return int64(x)
			case int64:
				return x
			case float64:
				return SaturateInt(x, math.MinInt64, math.MaxInt64)
			case *apd.Decimal:
				n, _ := types.DecimalToInt(x)
				return n
			case string:
				n, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64)
				if err != nil {
					return nil
				}
				return n
			}
			return nil
		}, nil
	case types.Decimal:
		switch from.Kind {
		case types.Integer, types.BigInt, types.Double, types.Decimal, types.String, types.Unknown:
			return decimalCast(to), nil
		}
	case types.Double:
		return func(v any) any {
			switch x := v.(type) {
			case int32:
				return float64(x)
			case int64:
				return float64(x)
			case float64:
				return x
			case *apd.Decimal:
				return types.DecimalFloat(x)
			case string:
				f, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
				if err != nil {
					return nil
				}
				return f
			}
			return nil
		}, nil
	case types.Boolean:
		return func(v any) any {
			switch x := v.(type) {
			case bool:
				return x
			case string:
				switch strings.ToLower(strings.TrimSpace(x)) {
				case "true", "t", "yes", "y":
					return true
				case "false", "f", "no", "n":
					return false
				}
			}
			return nil
		}, nil
	case types.Timestamp:
		return func(v any) any {
			switch x := v.(type) {
			case int64:
				return x
			case string:
				ms, err := ParseTimestampText(x)
				if err != nil {
					return nil
				}
				return ms
			}
			return nil
		}, nil
	}
	if from.Equal(to) || from.Kind == types.Unknown { // a bare NULL casts to anything
		return func(v any) any { return v }, nil
	}
	if from.Kind == to.Kind {
		switch to.Kind {
		case types.Array, types.Map, types.Struct:
			return castNested(from, to)
		}
	}
	// ksqlDB's words, so that its users recognise the error.
	return nil, fmt.Errorf("%w: Invalid Select: Cast of %s to %s is not supported", ErrType, from, to)
}

// decimalCast converts a number or numeric text to DECIMAL(p, s) as
// ksqlDB's DecimalUtil.cast: doubles through their shortest text
// (BigDecimal.valueOf), rounded HALF_UP to the scale; a value with more
// integer digits than p-s allows is NULL (ksqlDB logs "Numeric field
// overflow" and yields NULL), as is text that is not a number.
func decimalCast(to types.Type) func(any) any {
	p, sc := to.Precision, to.Scale
	return func(v any) any {
		var d *apd.Decimal
		var err error
		switch x := v.(type) {
		case *apd.Decimal:
			d = x
		case int32:
			d = types.DecimalFromInt(int64(x))
		case int64:
			d = types.DecimalFromInt(x)
		case float64:
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return nil
			}
			d, err = types.DecimalFromFloat(x)
		case string:
			d, err = types.ParseDecimal(strings.TrimSpace(x))
		default:
			return nil
		}
		if err != nil {
			return nil
		}
		out, err := types.FitDecimal(d, p, sc)
		if err != nil {
			return nil
		}
		return out
	}
}

// castNested casts ARRAY, MAP and STRUCT values element by element: an
// element that cannot be converted becomes NULL, as a scalar would; a
// STRUCT takes the target's fields by name (a field the source lacks is
// NULL).
func castNested(from, to types.Type) (func(any) any, error) {
	elem := func(f func(any) any, v any) any {
		if v == nil {
			return nil
		}
		return f(v)
	}
	switch to.Kind {
	case types.Array:
		f, err := CastFunc(*from.Elem, *to.Elem)
		if err != nil {
			return nil, err
		}
		return func(v any) any {
			list, ok := v.([]any)
			if !ok {
				return nil
			}
			out := make([]any, len(list))
			for i, x := range list {
				out[i] = elem(f, x)
			}
			return out
		}, nil
	case types.Map:
		f, err := CastFunc(*from.Elem, *to.Elem)
		if err != nil {
			return nil, err
		}
		return func(v any) any {
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			out := make(map[string]any, len(m))
			for k, x := range m {
				out[k] = elem(f, x)
			}
			return out
		}, nil
	}
	// STRUCT: for each target field, its source position and cast.
	src := make([]int, len(to.Fields))
	casts := make([]func(any) any, len(to.Fields))
	for i, tf := range to.Fields {
		src[i] = -1
		for j, ff := range from.Fields {
			if strings.EqualFold(ff.Name, tf.Name) {
				f, err := CastFunc(ff.Type, tf.Type)
				if err != nil {
					return nil, err
				}
				src[i], casts[i] = j, f
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
				out[i] = elem(casts[i], fields[j])
			}
		}
		return out
	}, nil
}

// ParseTimestampText reads an ISO-8601 timestamp such as
// 2024-01-02T03:04:05.678 (UTC unless a zone is given) as epoch millis.
func ParseTimestampText(s string) (int64, error) {
	layouts := []string{
		"2006-01-02T15:04:05.999999999Z07:00",
		"2006-01-02T15:04:05.999999999",
		"2006-01-02T15:04:05",
		"2006-01-02T15:04",
		"2006-01-02",
	}
	for _, l := range layouts {
		if t, err := time.ParseInLocation(l, s, time.UTC); err == nil {
			return t.UnixMilli(), nil
		}
	}
	return 0, fmt.Errorf("%w: cannot parse timestamp %q", ErrType, s)
}

// SaturateInt converts a double to an integer the way Java's casts do:
// out-of-range values clamp to the bounds and NaN becomes 0. (Go leaves
// such conversions to the machine.)
func SaturateInt(f float64, lo, hi int64) int64 {
	switch {
	case math.IsNaN(f):
		return 0
	case f <= float64(lo):
		return lo
	case f >= float64(hi):
		return hi
	}
	return int64(f)
}

// javaString renders a nested value as ksqlDB does when it casts one to
// STRING (Java's toString): [1, 3], {k=1}, Struct{F0=1,f1=3}.
func javaString(v any, t types.Type) string {
	if v == nil {
		return "null"
	}
	switch t.Kind {
	case types.Array:
		list, _ := v.([]any)
		parts := make([]string, len(list))
		for i, x := range list {
			parts[i] = javaString(x, *t.Elem)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case types.Map:
		m, _ := v.(map[string]any)
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = k + "=" + javaString(m[k], *t.Elem)
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case types.Struct:
		fields, _ := v.([]any)
		parts := make([]string, 0, len(t.Fields))
		for i, f := range t.Fields {
			var x any
			if i < len(fields) {
				x = fields[i]
			}
			parts = append(parts, f.Name+"="+javaString(x, f.Type))
		}
		return "Struct{" + strings.Join(parts, ",") + "}"
	}
	return types.FormatValue(v)
}
