package expr

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/cockroachdb/apd/v3"
	"github.com/sluice-sql/sluice/types"
)

// ksqlDB's mathematical functions (its udf/math package), GENERATE_SERIES
// and NULLIF. Like ksqlDB, the transcendental functions take INT, BIGINT
// or DOUBLE and always return DOUBLE; a NULL argument gives NULL. Where a
// ksqlDB function throws at run time (GENERATE_SERIES with a zero step,
// TRUNC of NaN), the value is NULL, as ksqlDB logs the error and writes a
// NULL column.

// numMaxSeries bounds the arrays GENERATE_SERIES builds; a longer series
// gives NULL instead of exhausting memory.
const numMaxSeries = 10_000_000

func init() {
	for name, f := range map[string]func(float64) float64{
		"SQRT":    math.Sqrt,
		"CBRT":    math.Cbrt,
		"EXP":     numExp,
		"LN":      numLog,
		"SIN":     math.Sin,
		"COS":     math.Cos,
		"TAN":     math.Tan,
		"ASIN":    math.Asin,
		"ACOS":    math.Acos,
		"ATAN":    math.Atan,
		"SINH":    math.Sinh,
		"COSH":    math.Cosh,
		"TANH":    math.Tanh,
		"COT":     func(x float64) float64 { return math.Cos(x) / math.Sin(x) },
		"DEGREES": func(x float64) float64 { return x * (180 / math.Pi) },
		"RADIANS": func(x float64) float64 { return x * (math.Pi / 180) },
	} {
		register(&scalar{name: name, bind: numDoubleBind(name, 1, 1, func(a []float64) float64 { return f(a[0]) })})
	}
	// LOG(x) is the natural logarithm, as ksqlDB's implementation (not its
	// description) has it; LOG(base, x) is NaN for a base <= 0 or 1.
	register(&scalar{name: "LOG", bind: numDoubleBind("LOG", 1, 2, func(a []float64) float64 {
		if len(a) == 1 {
			return numLog(a[0])
		}
		if a[0] <= 0 || a[0] == 1 {
			return math.NaN()
		}
		return numLog(a[1]) / numLog(a[0])
	})})
	register(&scalar{name: "POWER", bind: numDoubleBind("POWER", 2, 2, func(a []float64) float64 { return numPow(a[0], a[1]) })})
	register(&scalar{name: "ATAN2", bind: numDoubleBind("ATAN2", 2, 2, func(a []float64) float64 { return math.Atan2(a[0], a[1]) })})
	register(&scalar{name: "PI", bind: func(args []types.Type) (types.Type, func([]any) any, error) {
		if err := argCount("PI", args, 0, 0); err != nil {
			return types.Type{}, nil, err
		}
		return types.DoubleType, func([]any) any { return math.Pi }, nil
	}})
	register(&scalar{name: "RANDOM", volatile: true, bind: func(args []types.Type) (types.Type, func([]any) any, error) {
		if err := argCount("RANDOM", args, 0, 0); err != nil {
			return types.Type{}, nil, err
		}
		return types.DoubleType, func([]any) any { return rand.Float64() }, nil
	}})
	register(&scalar{name: "SIGN", bind: numSignBind})
	register(&scalar{name: "TRUNC", bind: numTruncBind})
	register(&scalar{name: "GREATEST", bind: numExtremeBind("GREATEST", 1)})
	register(&scalar{name: "LEAST", bind: numExtremeBind("LEAST", -1)})
	register(&scalar{name: "GENERATE_SERIES", bind: numSeriesBind})
	register(&scalar{name: "NULLIF", bind: numNullIfBind})
}

// numCheck reports an error unless every argument is numeric (or the
// untyped NULL).
func numCheck(name string, args []types.Type) error {
	for _, t := range args {
		if !t.IsNumeric() && t.Kind != types.Unknown {
			return fmt.Errorf("%w: function %s does not accept %s", errArgs, name, t)
		}
	}
	return nil
}

// numDoubleBind binds a function of min..max numeric arguments that
// returns DOUBLE, NULL when any argument is NULL.
func numDoubleBind(name string, min, max int, f func([]float64) float64) func([]types.Type) (types.Type, func([]any) any, error) {
	return func(args []types.Type) (types.Type, func([]any) any, error) {
		if err := argCount(name, args, min, max); err != nil {
			return types.Type{}, nil, err
		}
		if err := numCheck(name, args); err != nil {
			return types.Type{}, nil, err
		}
		return types.DoubleType, func(a []any) any {
			fs := make([]float64, len(a))
			for i, v := range a {
				f, ok := types.AsFloat(v)
				if !ok {
					return nil
				}
				fs[i] = f
			}
			return f(fs)
		}, nil
	}
}

// numSignBind: SIGN of an INT, BIGINT or DOUBLE is an INT -1, 0 or 1
// (0 for NaN, as Java's (int) Math.signum).
func numSignBind(args []types.Type) (types.Type, func([]any) any, error) {
	if err := argCount("SIGN", args, 1, 1); err != nil {
		return types.Type{}, nil, err
	}
	if err := numCheck("SIGN", args); err != nil {
		return types.Type{}, nil, err
	}
	return types.IntegerType, func(a []any) any {
		switch x := a[0].(type) {
		case int32:
			return int32(numSign(x))
		case int64:
			return int32(numSign(x))
		case float64:
			switch {
			case x > 0:
				return int32(1)
			case x < 0:
				return int32(-1)
			}
			return int32(0)
		}
		return nil
	}, nil
}

func numSign[T int32 | int64](x T) int {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return 0
}

// numTruncBind: TRUNC(x) truncates toward zero and returns BIGINT for
// INT, BIGINT and DOUBLE (DOUBLE saturates, NaN gives 0, as Java's
// longValue); TRUNC(x, d) returns a DOUBLE truncated to d decimal places
// of its decimal text, NULL for NaN and infinities, which ksqlDB's
// BigDecimal cannot hold. TRUNC of a DECIMAL is a DECIMAL (decimalRounding).
func numTruncBind(args []types.Type) (types.Type, func([]any) any, error) {
	if err := argCount("TRUNC", args, 1, 2); err != nil {
		return types.Type{}, nil, err
	}
	if err := numCheck("TRUNC", args); err != nil {
		return types.Type{}, nil, err
	}
	if len(args) == 2 {
		if k := args[1].Kind; k != types.Integer && k != types.BigInt && k != types.Unknown {
			return types.Type{}, nil, fmt.Errorf("%w: TRUNC takes an INT number of decimal places, not %s", ErrType, args[1])
		}
	}
	if args[0].Kind == types.Decimal {
		t, impl := decimalRounding(args[0], len(args) == 2, true, roundFixed(apd.RoundDown))
		return t, impl, nil
	}
	if len(args) == 2 {
		return types.DoubleType, func(a []any) any {
			f, ok := types.AsFloat(a[0])
			d, ok2 := types.AsInt64(a[1])
			if !ok || !ok2 || math.IsNaN(f) || math.IsInf(f, 0) {
				return nil
			}
			return numScaleRound(f, d, false)
		}, nil
	}
	return types.BigIntType, func(a []any) any {
		switch x := a[0].(type) {
		case int32:
			return int64(x)
		case int64:
			return x
		case float64:
			return SaturateInt(math.Trunc(x), math.MinInt64, math.MaxInt64)
		}
		return nil
	}, nil
}

// numScaleRound rounds f to d decimal places on its shortest decimal text
// (BigDecimal.valueOf). With half set it rounds halves toward positive
// infinity (ksqlDB's ROUND: HALF_UP above zero, HALF_DOWN below);
// otherwise it truncates toward zero (TRUNC).
func numScaleRound(f float64, d int64, half bool) float64 {
	r, ok := new(big.Rat).SetString(strconv.FormatFloat(f, 'g', -1, 64))
	if !ok {
		return f
	}
	neg := d < 0
	if neg {
		d = -d
	}
	if d > 400 { // beyond any double's digits
		if neg {
			return 0
		}
		return f
	}
	scale := new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(d), nil))
	if neg {
		r.Quo(r, scale)
	} else {
		r.Mul(r, scale)
	}
	var q *big.Int
	if half {
		r.Add(r, big.NewRat(1, 2))
		// Floor of num/denom (denominators are positive).
		q, _ = new(big.Int).DivMod(r.Num(), r.Denom(), new(big.Int))
	} else {
		q = new(big.Int).Quo(r.Num(), r.Denom())
	}
	r.SetInt(q)
	if neg {
		r.Mul(r, scale)
	} else {
		r.Quo(r, scale)
	}
	out, _ := r.Float64() // BigDecimal has no -0: zero is 0.0
	return out
}

// numJavaRound is Java's Math.round: the nearest integer, halves toward
// positive infinity, saturating; NaN gives 0.
func numJavaRound(f float64) int64 {
	if math.IsNaN(f) {
		return 0
	}
	r := math.Floor(f)
	if f-r >= 0.5 {
		r++
	}
	return SaturateInt(r, math.MinInt64, math.MaxInt64)
}

// numExtremeBind builds GREATEST (sign 1) and LEAST (sign -1): the
// largest or smallest non-NULL argument, NULL when all are NULL. The
// arguments resolve as ksqlDB's overloads (INT, BIGINT, DOUBLE, DECIMAL,
// STRING, BYTES, DATE, TIME, TIMESTAMP) do: all of one type, or numbers
// with a DOUBLE among them (all widen to DOUBLE); INT with BIGINT alone is
// ambiguous in ksqlDB and so an error here. Strings among DATE, TIME or
// TIMESTAMP arguments are read as such, as ksqlDB reads string literals.
// Doubles order as Java's Double.compareTo: NaN above all, -0.0 below 0.0.
func numExtremeBind(name string, sign int) func([]types.Type) (types.Type, func([]any) any, error) {
	return func(args []types.Type) (types.Type, func([]any) any, error) {
		t, err := numExtremeType(name, args)
		if err != nil {
			return types.Type{}, nil, err
		}
		conv := converter(t)
		switch t.Kind {
		case types.Timestamp, types.Date, types.Time:
			conv = numTemporalConv(t.Kind)
		}
		return t, func(a []any) any {
			var best any
			for _, v := range a {
				if v == nil {
					continue
				}
				if v = conv(v); v == nil {
					continue
				}
				if best == nil || numCompare(v, best)*sign > 0 {
					best = v
				}
			}
			return best
		}, nil
	}
}

func numExtremeType(name string, args []types.Type) (types.Type, error) {
	params := func() string {
		s := ""
		for i, a := range args {
			if i > 0 {
				s += ", "
			}
			if a.Kind == types.Unknown {
				s += "null"
			} else {
				s += a.String()
			}
		}
		return s
	}
	lower := strings.ToLower(name)
	rejected := fmt.Errorf("%w: Function '%s' does not accept parameters (%s).", ErrType, lower, params())
	if len(args) == 0 {
		return types.Type{}, rejected
	}
	var temporal, numeric, double, other bool
	t := types.UnknownType
	for _, a := range args {
		switch a.Kind {
		case types.Unknown:
			continue
		case types.Timestamp, types.Date, types.Time:
			if temporal && a.Kind != t.Kind {
				return types.Type{}, rejected
			}
			temporal, t = true, a
		case types.Integer, types.BigInt, types.Decimal:
			numeric = true
		case types.Double:
			numeric, double = true, true
		case types.String, types.Bytes:
			other = true
		default:
			return types.Type{}, rejected
		}
	}
	same, mixed := types.UnknownType, false
	hasDecimal := false
	for _, a := range args {
		hasDecimal = hasDecimal || a.Kind == types.Decimal
	}
	for _, a := range args {
		switch {
		case a.Kind == types.Unknown:
		case same.Kind == types.Unknown:
			same = a
		case same.Kind == types.Decimal && a.Kind == types.Decimal:
		case !same.Equal(a):
			mixed = true
		}
	}
	switch {
	case temporal:
		for _, a := range args {
			if a.Kind != types.Unknown && a.Kind != t.Kind && a.Kind != types.String {
				return types.Type{}, rejected
			}
		}
		return t, nil
	case same.Kind == types.Unknown:
		return types.Type{}, fmt.Errorf("%w: Function '%s' cannot be resolved due to ambiguous method parameters (%s).", ErrType, lower, params())
	case hasDecimal && !mixed:
		// DECIMALs only: the smallest DECIMAL holding every argument.
		// Integers mixed with DECIMALs fall to the ambiguity below: the
		// BIGINT, DOUBLE and DECIMAL overloads would all take them.
		t := types.DecimalOf(1, 0)
		for _, a := range args {
			if a.Kind != types.Unknown {
				t = widenDecimal(t, a)
			}
		}
		return t, nil
	case !mixed:
		return same, nil
	case numeric && !other && double:
		return types.DoubleType, nil
	case numeric && !other:
		return types.Type{}, fmt.Errorf("%w: Function '%s' cannot be resolved due to ambiguous method parameters (%s).", ErrType, lower, params())
	}
	return types.Type{}, rejected
}

// numTemporalConv passes DATE, TIME and TIMESTAMP values and reads
// strings as the kind: NULL when a string does not parse.
func numTemporalConv(k types.Kind) func(any) any {
	return func(v any) any {
		s, ok := v.(string)
		if !ok {
			return v
		}
		switch k {
		case types.Timestamp:
			if ms, err := ParseTimestampText(s); err == nil {
				return ms
			}
		case types.Date:
			if d, err := time.Parse(time.DateOnly, s); err == nil {
				return int32(d.Unix() / 86400)
			}
		case types.Time:
			for _, l := range []string{"15:04:05.999999999", "15:04"} {
				if d, err := time.Parse(l, s); err == nil {
					return int32(d.Hour()*3_600_000 + d.Minute()*60_000 + d.Second()*1000 + d.Nanosecond()/1_000_000)
				}
			}
		}
		return nil
	}
}

// numCompare orders two values of one type as Java's compareTo does.
func numCompare(a, b any) int {
	if x, ok := a.(float64); ok {
		if y, ok := b.(float64); ok && x == y && math.Signbit(x) != math.Signbit(y) {
			if math.Signbit(x) {
				return -1
			}
			return 1
		}
	}
	c, _ := types.Compare(a, b)
	return c
}

// numSeriesBind: GENERATE_SERIES(start, end [, step]) is the ARRAY of
// start, start+step, … up to end inclusive; INT bounds give ARRAY<INT>,
// BIGINT bounds ARRAY<BIGINT>, and the step is an INT defaulting to 1 or
// -1 toward end. A zero step, a step pointing away from end or a NULL
// argument gives NULL (ksqlDB throws), as does a series of more than
// numMaxSeries elements.
func numSeriesBind(args []types.Type) (types.Type, func([]any) any, error) {
	if err := argCount("GENERATE_SERIES", args, 2, 3); err != nil {
		return types.Type{}, nil, err
	}
	t := types.IntegerType
	for i, a := range args {
		switch a.Kind {
		case types.Unknown, types.Integer:
		case types.BigInt:
			if i < 2 {
				t = types.BigIntType
				continue
			}
			fallthrough
		default:
			return types.Type{}, nil, fmt.Errorf("%w: function GENERATE_SERIES does not accept %s as argument %d", errArgs, a, i+1)
		}
	}
	return types.ArrayOf(t), func(a []any) any {
		start, ok1 := types.AsInt64(a[0])
		end, ok2 := types.AsInt64(a[1])
		if !ok1 || !ok2 {
			return nil
		}
		step := int64(1)
		if end < start {
			step = -1
		}
		if len(a) == 3 {
			s, ok := types.AsInt64(a[2])
			if !ok || s == 0 {
				return nil
			}
			step = s
		}
		if (end > start && step < 0) || (end < start && step > 0) {
			return nil
		}
		// The element count, computed without overflow.
		diff := new(big.Int).Sub(big.NewInt(end), big.NewInt(start))
		n := new(big.Int).Quo(diff, big.NewInt(step))
		if !n.IsInt64() || n.Int64() >= numMaxSeries {
			return nil
		}
		size := int(n.Int64()) + 1
		out := make([]any, size)
		v := start
		for i := range out {
			if t.Kind == types.Integer {
				out[i] = int32(v)
			} else {
				out[i] = v
			}
			v += step
		}
		return out
	}, nil
}

// numNullIfBind: NULLIF(a, b) is NULL when a equals b, else a. Both
// arguments share a type; numbers of mixed types widen, and doubles are
// equal as Java's Double.equals has it (NaN equals NaN, -0.0 differs from
// 0.0).
func numNullIfBind(args []types.Type) (types.Type, func([]any) any, error) {
	if err := argCount("NULLIF", args, 2, 2); err != nil {
		return types.Type{}, nil, err
	}
	t := args[0]
	switch {
	case args[1].Kind == types.Unknown:
	case t.Kind == types.Unknown:
		t = args[1]
	case t.IsNumeric() && args[1].IsNumeric():
		t = widen(t, args[1])
	case !t.Equal(args[1]):
		return types.Type{}, nil, fmt.Errorf("%w: NULLIF arguments must share a type, got %s and %s", ErrType, t, args[1])
	}
	conv := converter(t)
	return t, func(a []any) any {
		if a[0] == nil {
			return nil
		}
		x, y := conv(a[0]), conv(a[1])
		if numJavaEquals(x, y) {
			return nil
		}
		return x
	}, nil
}

func numJavaEquals(a, b any) bool {
	if x, ok := a.(float64); ok {
		y, ok := b.(float64)
		return ok && (math.Float64bits(x) == math.Float64bits(y) || math.IsNaN(x) && math.IsNaN(y))
	}
	return reflect.DeepEqual(a, b)
}

// decimalRounding is ROUND, TRUNC, FLOOR and CEIL of a DECIMAL(p, s), exact
// as ksqlDB's BigDecimal forms of them: the value is rounded to the places
// of the second argument (0 without one) by the rounder rounding picks for
// it, and keeps the argument's type and scale, except that ROUND(x) and
// TRUNC(x) (toInteger) return DECIMAL(p - s, 0). A result that cannot be
// computed (an absent places argument) is NULL.
func decimalRounding(t types.Type, withPlaces, toInteger bool, rounding func(*apd.Decimal) apd.Rounder) (types.Type, func([]any) any) {
	out := t
	if toInteger && !withPlaces {
		// ksqlDB refuses DECIMAL(0, 0); one digit holds what rounding 0.x gives.
		out = types.DecimalOf(max(1, t.Precision-t.Scale), 0)
	}
	return out, func(a []any) any {
		d, ok := a[0].(*apd.Decimal)
		if !ok {
			return nil
		}
		places := int64(0)
		if withPlaces {
			if places, ok = types.AsInt64(a[1]); !ok {
				return nil
			}
		}
		r, err := types.RoundDecimal(d, int(max(math.MinInt32, min(places, math.MaxInt32))), rounding(d), out.Scale)
		if err != nil {
			return nil
		}
		return r
	}
}

// roundHalfPositive is ksqlDB's ROUND: halves toward positive infinity,
// which is HALF_UP above zero and HALF_DOWN at and below it.
func roundHalfPositive(d *apd.Decimal) apd.Rounder {
	if d.Sign() > 0 {
		return apd.RoundHalfUp
	}
	return apd.RoundHalfDown
}

func roundFixed(r apd.Rounder) func(*apd.Decimal) apd.Rounder {
	return func(*apd.Decimal) apd.Rounder { return r }
}
