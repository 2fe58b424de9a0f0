package expr

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/cockroachdb/apd/v3"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/types"
)

// scalar describes one scalar function: how it types its arguments and
// the implementation for those argument types.
type scalar struct {
	name string
	// bind checks argument types and returns the result type and the
	// implementation. Implementations receive evaluated arguments and
	// handle NULLs themselves.
	bind func(args []types.Type) (types.Type, func(args []any) any, error)
	// bindConsts, when set, is used instead of bind and also receives the
	// values of constant arguments (nil for the others), so that a
	// function can check or prepare a literal (a regular expression, an
	// encoding name) once at compile time.
	bindConsts func(args []types.Type, consts []any) (types.Type, func(args []any) any, error)
	// volatile marks functions whose result changes from call to call
	// (UUID()): they are never folded to a constant.
	volatile bool
	// decimalArgs marks functions whose implementation takes DECIMAL
	// arguments as they are (*apd.Decimal) although their result holds
	// none: ksqlDB's generic functions (TO_JSON_STRING, ARRAY_CONTAINS)
	// see the BigDecimal, where its DOUBLE-only functions see a double.
	decimalArgs bool
	doc         string
}

var scalars = map[string]*scalar{}

func register(s *scalar) { scalars[s.name] = s }

// Volatile reports whether the built-in scalar function name gives a new
// result at every call (RANDOM, UUID): a rewrite must not change how many
// times it is called.
func Volatile(name string) bool {
	s, ok := scalars[strings.ToUpper(name)]
	return ok && s.volatile
}

// ScalarNames lists the registered scalar functions, sorted.
func ScalarNames() []string {
	out := make([]string, 0, len(scalars))
	for n := range scalars {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func argCount(name string, args []types.Type, min, max int) error {
	if len(args) < min || (max >= 0 && len(args) > max) {
		return fmt.Errorf("%w: function %s does not accept %d arguments", errArgs, name, len(args))
	}
	return nil
}

func strFunc(name string, f func(string) string) *scalar {
	return &scalar{name: name, bind: func(args []types.Type) (types.Type, func([]any) any, error) {
		if err := argCount(name, args, 1, 1); err != nil {
			return types.Type{}, nil, err
		}
		return types.StringType, func(a []any) any {
			s, ok := a[0].(string)
			if !ok {
				return nil
			}
			return f(s)
		}, nil
	}}
}

func init() {
	register(strFunc("UCASE", strings.ToUpper))
	register(strFunc("LCASE", strings.ToLower))
	register(strFunc("TRIM", strings.TrimSpace))
	register(strFunc("LTRIM", func(s string) string { return strings.TrimLeft(s, " \t\r\n") }))
	register(strFunc("RTRIM", func(s string) string { return strings.TrimRight(s, " \t\r\n") }))
	register(&scalar{name: "LEN", bind: func(args []types.Type) (types.Type, func([]any) any, error) {
		if err := argCount("LEN", args, 1, 1); err != nil {
			return types.Type{}, nil, err
		}
		return types.IntegerType, func(a []any) any {
			switch x := a[0].(type) {
			case string:
				return int32(utf8.RuneCountInString(x))
			case []byte: // LEN(BYTES) counts bytes, as ksqlDB
				return int32(len(x))
			}
			return nil
		}, nil
	}})
	register(&scalar{name: "CONCAT", bind: func(args []types.Type) (types.Type, func([]any) any, error) {
		if len(args) == 0 {
			return types.Type{}, nil, fmt.Errorf("%w: CONCAT needs at least one argument", ErrType)
		}
		// ksqlDB's CONCAT skips NULL arguments rather than returning NULL.
		// All BYTES arguments (NULLs aside) concatenate to BYTES.
		isBytes := false
		for _, t := range args {
			if t.Kind == types.Bytes {
				isBytes = true
			}
		}
		if isBytes {
			for _, t := range args {
				if t.Kind != types.Bytes && t.Kind != types.Unknown {
					return types.Type{}, nil, fmt.Errorf("%w: CONCAT takes all STRING or all BYTES arguments, not %s", ErrType, t)
				}
			}
			return types.BytesType, func(a []any) any {
				out := []byte{}
				for _, v := range a {
					if b, ok := v.([]byte); ok {
						out = append(out, b...)
					}
				}
				return out
			}, nil
		}
		return types.StringType, func(a []any) any {
			var b strings.Builder
			for _, v := range a {
				if v != nil {
					b.WriteString(types.FormatValue(v))
				}
			}
			return b.String()
		}, nil
	}})
	// CONCAT_WS(separator, v, …) joins the non-NULL values with the
	// separator; a NULL separator gives NULL. STRING or BYTES throughout.
	register(&scalar{name: "CONCAT_WS", bind: func(args []types.Type) (types.Type, func([]any) any, error) {
		if len(args) < 2 {
			return types.Type{}, nil, fmt.Errorf("%w: CONCAT_WS needs a separator and at least one value", ErrType)
		}
		out := types.StringType
		if args[0].Kind == types.Bytes {
			out = types.BytesType
		}
		for _, t := range args {
			if t.Kind != out.Kind && t.Kind != types.Unknown {
				return types.Type{}, nil, fmt.Errorf("%w: CONCAT_WS takes all STRING or all BYTES arguments, not %s", ErrType, t)
			}
		}
		return out, func(a []any) any {
			if a[0] == nil {
				return nil
			}
			var parts [][]byte
			for _, v := range a[1:] {
				switch x := v.(type) {
				case string:
					parts = append(parts, []byte(x))
				case []byte:
					parts = append(parts, x)
				}
			}
			var sep []byte
			switch x := a[0].(type) {
			case string:
				sep = []byte(x)
			case []byte:
				sep = x
			}
			joined := bytes.Join(parts, sep)
			if out.Kind == types.Bytes {
				return joined
			}
			return string(joined)
		}, nil
	}})
	// INITCAP upper-cases the first letter of each word (words split by
	// white space) and lower-cases the rest.
	register(strFunc("INITCAP", func(s string) string {
		var b strings.Builder
		start := true
		for _, r := range s {
			switch {
			case unicode.IsSpace(r):
				start = true
				b.WriteRune(r)
			case start:
				b.WriteRune(unicode.ToUpper(r))
				start = false
			default:
				b.WriteRune(unicode.ToLower(r))
			}
		}
		return b.String()
	}))
	register(&scalar{name: "SUBSTRING", bind: func(args []types.Type) (types.Type, func([]any) any, error) {
		if err := argCount("SUBSTRING", args, 2, 3); err != nil {
			return types.Type{}, nil, err
		}
		// STRING counts characters; BYTES (as ksqlDB) counts bytes.
		out := types.StringType
		if args[0].Kind == types.Bytes {
			out = types.BytesType
		}
		return out, func(a []any) any {
			var n int
			switch x := a[0].(type) {
			case string:
				n = utf8.RuneCountInString(x)
			case []byte:
				n = len(x)
			default:
				return nil
			}
			pos, ok := types.AsInt64(a[1])
			if !ok {
				return nil
			}
			start := int(pos) - 1
			if pos < 0 {
				start = n + int(pos)
			}
			start = max(0, min(start, n))
			end := n
			if len(a) == 3 {
				l, ok := types.AsInt64(a[2])
				if !ok {
					return nil
				}
				end = start + int(max(0, min(l, int64(n-start))))
			}
			if b, ok := a[0].([]byte); ok {
				return bytes.Clone(b[start:end])
			}
			return string([]rune(a[0].(string))[start:end])
		}, nil
	}})
	absOther := numericUnary("ABS", func(i int64) int64 {
		if i < 0 {
			return -i
		}
		return i
	}, math.Abs)
	// ABS of a DECIMAL is a DECIMAL of the same type (BigDecimal.abs).
	register(&scalar{name: "ABS", bind: func(args []types.Type) (types.Type, func([]any) any, error) {
		if len(args) == 1 && args[0].Kind == types.Decimal {
			return args[0], func(a []any) any {
				if d, ok := a[0].(*apd.Decimal); ok {
					if d.Negative {
						return new(apd.Decimal).Abs(d)
					}
					return d
				}
				return nil
			}, nil
		}
		return absOther(args)
	}})
	register(&scalar{name: "CEIL", bind: decimalOr(apd.RoundCeiling, numericUnary("CEIL", nil, math.Ceil))})
	register(&scalar{name: "FLOOR", bind: decimalOr(apd.RoundFloor, numericUnary("FLOOR", nil, math.Floor))})
	register(&scalar{name: "ROUND", bind: bindRound})
	register(&scalar{name: "COALESCE", bind: bindCoalesce})
	register(&scalar{name: "IFNULL", bind: func(args []types.Type) (types.Type, func([]any) any, error) {
		if err := argCount("IFNULL", args, 2, 2); err != nil {
			return types.Type{}, nil, err
		}
		return bindCoalesce(args)
	}})
	// AS_VALUE copies a key column into the value: the planner makes any
	// item that is not exactly a key expression a value column, so the
	// function itself only passes its argument through.
	register(&scalar{name: "AS_VALUE", bind: func(args []types.Type) (types.Type, func([]any) any, error) {
		if err := argCount("AS_VALUE", args, 1, 1); err != nil {
			return types.Type{}, nil, err
		}
		return args[0], func(a []any) any { return a[0] }, nil
	}})
}

// numericUnary builds a function that keeps integer types (applying fi,
// or passing them through when fi is nil) and applies ff to doubles.
func numericUnary(name string, fi func(int64) int64, ff func(float64) float64) func([]types.Type) (types.Type, func([]any) any, error) {
	return func(args []types.Type) (types.Type, func([]any) any, error) {
		if err := argCount(name, args, 1, 1); err != nil {
			return types.Type{}, nil, err
		}
		t := args[0]
		if !t.IsNumeric() && t.Kind != types.Unknown {
			return types.Type{}, nil, fmt.Errorf("%w: function %s does not accept %s", errArgs, name, t)
		}
		if t.Kind == types.Decimal || t.Kind == types.Unknown {
			t = types.DoubleType
		}
		return t, func(a []any) any {
			switch x := a[0].(type) {
			case int32:
				if fi == nil {
					return x
				}
				return int32(fi(int64(x)))
			case int64:
				if fi == nil {
					return x
				}
				return fi(x)
			case float64:
				return ff(x)
			}
			return nil
		}, nil
	}
}

// decimalOr is FLOOR or CEIL: of a DECIMAL, exact and of the same type
// (rounded to an integer by rounding, scale kept, as ksqlDB); of anything
// else, other's.
func decimalOr(rounding apd.Rounder, other func([]types.Type) (types.Type, func([]any) any, error)) func([]types.Type) (types.Type, func([]any) any, error) {
	return func(args []types.Type) (types.Type, func([]any) any, error) {
		if len(args) == 1 && args[0].Kind == types.Decimal {
			t, impl := decimalRounding(args[0], false, false, roundFixed(rounding))
			return t, impl, nil
		}
		return other(args)
	}
}

// bindRound follows ksqlDB: ROUND(x) returns BIGINT for INT, BIGINT and
// DOUBLE, rounding doubles as Java's Math.round (halves toward positive
// infinity, so ROUND(-2.5) is -2); ROUND(x, d) returns a DOUBLE rounded to
// d decimal places, halves again toward positive infinity. Of a
// DECIMAL(p, s) both are exact: ROUND(x) is a DECIMAL(p - s, 0) and
// ROUND(x, d) a DECIMAL(p, s) (decimalRounding).
func bindRound(args []types.Type) (types.Type, func([]any) any, error) {
	if err := argCount("ROUND", args, 1, 2); err != nil {
		return types.Type{}, nil, err
	}
	if !args[0].IsNumeric() && args[0].Kind != types.Unknown {
		return types.Type{}, nil, fmt.Errorf("%w: function ROUND does not accept %s", errArgs, args[0])
	}
	if args[0].Kind == types.Decimal {
		t, impl := decimalRounding(args[0], len(args) == 2, true, roundHalfPositive)
		return t, impl, nil
	}
	if len(args) == 2 {
		return types.DoubleType, func(a []any) any {
			f, ok := types.AsFloat(a[0])
			d, ok2 := types.AsInt64(a[1])
			if !ok || !ok2 {
				return nil
			}
			if math.IsNaN(f) || math.IsInf(f, 0) {
				return f
			}
			return numScaleRound(f, d, true)
		}, nil
	}
	return types.BigIntType, func(a []any) any {
		switch x := a[0].(type) {
		case int32:
			return int64(x)
		case int64:
			return x
		case float64:
			return numJavaRound(x)
		}
		return nil
	}, nil
}

func bindCoalesce(args []types.Type) (types.Type, func([]any) any, error) {
	if len(args) == 0 {
		return types.Type{}, nil, fmt.Errorf("%w: Function 'COALESCE' does not accept parameters (): it needs at least one", ErrType)
	}
	t := types.UnknownType
	for _, a := range args {
		switch {
		case a.Kind == types.Unknown:
		case t.Kind == types.Unknown:
			t = a
		case t.IsNumeric() && a.IsNumeric():
			t = widen(t, a)
		case !t.Equal(a):
			return types.Type{}, nil, fmt.Errorf("%w: COALESCE arguments must share a type, got %s and %s", ErrType, t, a)
		}
	}
	conv := converter(t)
	return t, func(a []any) any {
		for _, v := range a {
			if v != nil {
				return conv(v)
			}
		}
		return nil
	}, nil
}

// IsFunction reports whether name (as the parser spells it, upper-case)
// is a scalar or aggregate function.
func IsFunction(name string) bool {
	_, ok := scalars[strings.ToUpper(name)]
	_, lambda := lambdaFunctions[strings.ToUpper(name)]
	return ok || lambda || IsAggregate(name) || IsTableFunction(name)
}

func compileCall(call *parser.FuncCall, scope Scope) (Compiled, error) {
	if IsAggregate(call.Name) {
		return Compiled{}, fmt.Errorf("%w: aggregate function %s is not allowed here", ErrType, call.Name)
	}
	if IsTableFunction(call.Name) {
		return Compiled{}, fmt.Errorf("%w: table function %s is only allowed in the SELECT list of a stream query", ErrType, call.Name)
	}
	s, ok := scalars[call.Name]
	if !ok {
		if fns := userFunctionsOf(scope); fns != nil {
			if c, found, err := compileUserCall(call, scope, fns); found {
				return c, err
			}
		}
		msg := fmt.Sprintf("Can't find any functions with the name '%s'", call.Name)
		var names []string
		for _, f := range Functions() {
			names = append(names, f.Name)
		}
		if near := parser.Closest(call.Name, names); near != "" {
			msg += fmt.Sprintf(". Did you mean %s?", near)
		}
		return Compiled{}, fmt.Errorf("%w: %s", ErrUnknownFunction, msg)
	}
	argTypes := make([]types.Type, len(call.Args))
	evals := make([]Eval, len(call.Args))
	consts := make([]any, len(call.Args))
	allConst := !s.volatile
	for i, a := range call.Args {
		c, err := Compile(a, scope)
		if err != nil {
			return Compiled{}, err
		}
		argTypes[i], evals[i] = c.Type, c.Eval
		allConst = allConst && c.Const
		if c.Const {
			consts[i] = c.Eval(nil)
		}
	}
	bind := s.bind
	if s.bindConsts != nil {
		bind = func(t []types.Type) (types.Type, func([]any) any, error) { return s.bindConsts(t, consts) }
	}
	rt, impl, err := bind(argTypes)
	if errors.Is(err, errArgs) {
		return Compiled{}, notAccepted(call.Name, argTypes, err)
	}
	if err != nil {
		return Compiled{}, err
	}
	// Functions that do not return a DECIMAL read DECIMAL arguments as
	// doubles (ksqlDB's implicit DECIMAL → DOUBLE for its math UDFs);
	// those that return one (AS_VALUE, COALESCE, …) pass them through.
	if !rt.ContainsDecimal() && !s.decimalArgs {
		for i, t := range argTypes {
			if t.Kind == types.Decimal {
				e := evals[i]
				evals[i] = func(row []any) any {
					if d, ok := e(row).(*apd.Decimal); ok {
						return types.DecimalFloat(d)
					}
					return nil
				}
			}
		}
	}
	return fold(Compiled{Type: rt, Const: allConst, Eval: func(row []any) any {
		args := make([]any, len(evals))
		for i, e := range evals {
			args[i] = e(row)
		}
		return impl(args)
	}}), nil
}

// errArgs is the kind of a scalar binder's refusal of its argument
// types (a type error); compileCall words it as ksqlDB does.
var errArgs = fmt.Errorf("%w", ErrType)

// notAccepted words a refusal of argument types as ksqlDB's function
// resolution does ("Function 'geo_distance' does not accept parameters
// (DOUBLE, DOUBLE, STRING, INTEGER)."), the function's name in lower
// case as ksqlDB's built-ins declare it, followed by what the binder said
// was wrong.
func notAccepted(name string, args []types.Type, err error) error {
	params := make([]string, len(args))
	for i, a := range args {
		params[i] = a.String()
		if a.Kind == types.Unknown {
			params[i] = "null"
		}
	}
	detail := strings.TrimPrefix(err.Error(), ErrType.Error()+": ")
	return fmt.Errorf("%w: Function '%s' does not accept parameters (%s). (%s)", ErrType, strings.ToLower(name), strings.Join(params, ", "), detail)
}
