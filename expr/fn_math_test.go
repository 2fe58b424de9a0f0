package expr_test

import (
	"math"
	"strings"
	"testing"

	"github.com/sluice-sql/sluice/types"
)

var (
	tIntArray  = types.ArrayOf(types.IntegerType)
	tBigArray  = types.ArrayOf(types.BigIntType)
	tTimestamp = types.TimestampType
	nan        = math.NaN()
	inf        = math.Inf(1)
)

// mathFunctionCases: testRow has i=7 INT, b=10 BIGINT, d=2.5 DOUBLE, and
// ni, nd NULL.
var mathFunctionCases = []evalCase{
	{"SQRT(4)", tDouble, 2.0},
	{"SQRT(b)", tDouble, math.Sqrt(10)},
	{"SQRT(d)", tDouble, math.Sqrt(2.5)},
	{"SQRT(-1)", tDouble, nan},
	{"SQRT(ni)", tDouble, nil},
	{"SQRT(null)", tDouble, nil},
	{"CBRT(-8)", tDouble, -2.0},
	{"CBRT(27.0)", tDouble, 3.0},
	{"CBRT(nd)", tDouble, nil},
	{"EXP(0)", tDouble, 1.0},
	{"EXP(1)", tDouble, math.E},
	{"EXP(1000)", tDouble, inf},
	{"EXP(-19)", tDouble, 5.602796437537268e-09}, // correctly rounded, as Java's Math.exp; Go's math.Exp says ...267e-09
	{"EXP(3.0)", tDouble, 20.085536923187668},
	{"EXP(709.782712893384)", tDouble, 1.7976931348622732e+308},
	{"EXP(-1000)", tDouble, 0.0},
	{"EXP(0E0/0)", tDouble, nan},
	{"EXP(ni)", tDouble, nil},
	{"LN(1)", tDouble, 0.0},
	{"LN(0)", tDouble, math.Inf(-1)},
	{"LN(-1)", tDouble, nan},
	{"LN(b)", tDouble, 2.302585092994046},
	{"LN(3.0)", tDouble, 1.0986122886681098}, // Java's Math.log; Go's math.Log says ...096
	{"LN(5e-324)", tDouble, -744.4400719213812},
	{"LN(nd)", tDouble, nil},
	{"LOG(1)", tDouble, 0.0}, // one argument: the natural logarithm, as ksqlDB computes it
	{"LOG(b)", tDouble, 2.302585092994046},
	{"LOG(2, 8)", tDouble, 3.0},
	{"LOG(3, 9.0)", tDouble, 2.0},
	{"LOG(10, 100.0)", tDouble, 2.0},
	{"LOG(1, 5)", tDouble, nan},
	{"LOG(0, 5)", tDouble, nan},
	{"LOG(-2, 5)", tDouble, nan},
	{"LOG(2, 0)", tDouble, math.Inf(-1)},
	{"LOG(ni)", tDouble, nil},
	{"LOG(ni, 5)", tDouble, nil},
	{"LOG(2, ni)", tDouble, nil},
	{"POWER(2, 10)", tDouble, 1024.0},
	{"POWER(i, 2)", tDouble, 49.0},
	{"POWER(b, -1)", tDouble, 0.1},
	{"POWER(d, 2)", tDouble, 6.25},
	{"POWER(-8, 1.0/3)", tDouble, nan},
	{"POWER(0, -1)", tDouble, inf},
	{"POWER(0E0/0, 0)", tDouble, 1.0},
	{"POWER(1, 0E0/0)", tDouble, nan}, // Java's Math.pow; Go's math.Pow says 1
	{"POWER(-1, 1E0/0)", tDouble, nan},
	{"POWER(1.1, 10)", tDouble, 2.5937424601000023}, // correctly rounded, as Java's Math.pow
	{"POWER(0.1, 2)", tDouble, 0.010000000000000002},
	{"POWER(-2, 3)", tDouble, -8.0},
	{"POWER(-2, 0.5)", tDouble, nan},
	{"POWER(10, 308)", tDouble, 1e308},
	{"POWER(10, 309)", tDouble, inf},
	{"POWER(2, -1074)", tDouble, 5e-324},
	{"POWER(ni, 2)", tDouble, nil},
	{"POWER(2, ni)", tDouble, nil},
	{"SIGN(-5)", tInt, int32(-1)},
	{"SIGN(0)", tInt, int32(0)},
	{"SIGN(i)", tInt, int32(1)},
	{"SIGN(-b)", tInt, int32(-1)},
	{"SIGN(9223372036854775807)", tInt, int32(1)},
	{"SIGN(-2.5)", tInt, int32(-1)},
	{"SIGN(-0E0)", tInt, int32(0)},
	{"SIGN(0E0/0)", tInt, int32(0)},
	{"SIGN(1E0/0)", tInt, int32(1)},
	{"SIGN(ni)", tInt, nil},
	{"SIGN(nd)", tInt, nil},
	{"RANDOM() >= 0", tBool, true}, // TestRandom checks more
	{"RANDOM() < 1", tBool, true},
	{"PI()", tDouble, math.Pi},
	{"PI() * 2", tDouble, 2 * math.Pi},
	{"DEGREES(PI())", tDouble, 180.0},
	{"DEGREES(0)", tDouble, 0.0},
	{"DEGREES(1)", tDouble, 57.29577951308232},
	{"DEGREES(nd)", tDouble, nil},
	{"RADIANS(180)", tDouble, math.Pi},
	{"RADIANS(90.0)", tDouble, math.Pi / 2},
	{"RADIANS(ni)", tDouble, nil},
	{"SIN(0)", tDouble, 0.0},
	{"SIN(PI() / 2)", tDouble, 1.0},
	{"SIN(nd)", tDouble, nil},
	{"COS(0)", tDouble, 1.0},
	{"COS(b)", tDouble, math.Cos(10)},
	{"COS(ni)", tDouble, nil},
	{"TAN(0)", tDouble, 0.0},
	{"TAN(d)", tDouble, math.Tan(2.5)},
	{"TAN(nd)", tDouble, nil},
	{"ASIN(1)", tDouble, math.Pi / 2},
	{"ASIN(2)", tDouble, nan},
	{"ASIN(ni)", tDouble, nil},
	{"ACOS(1)", tDouble, 0.0},
	{"ACOS(-1.0)", tDouble, math.Pi},
	{"ACOS(2)", tDouble, nan},
	{"ACOS(nd)", tDouble, nil},
	{"ATAN(1)", tDouble, math.Pi / 4},
	{"ATAN(1E0/0)", tDouble, math.Pi / 2},
	{"ATAN(ni)", tDouble, nil},
	{"ATAN2(1, 1)", tDouble, math.Pi / 4},
	{"ATAN2(0, -1)", tDouble, math.Pi},
	{"ATAN2(i, b)", tDouble, math.Atan2(7, 10)},
	{"ATAN2(d, 0)", tDouble, math.Pi / 2},
	{"ATAN2(ni, 1)", tDouble, nil},
	{"ATAN2(1, nd)", tDouble, nil},
	{"COT(1)", tDouble, math.Cos(1) / math.Sin(1)},
	{"COT(0)", tDouble, inf},
	{"COT(nd)", tDouble, nil},
	{"SINH(0)", tDouble, 0.0},
	{"SINH(1)", tDouble, math.Sinh(1)},
	{"SINH(ni)", tDouble, nil},
	{"COSH(0)", tDouble, 1.0},
	{"COSH(b)", tDouble, math.Cosh(10)},
	{"COSH(nd)", tDouble, nil},
	{"TANH(0)", tDouble, 0.0},
	{"TANH(1E0/0)", tDouble, 1.0},
	{"TANH(ni)", tDouble, nil},

	{"TRUNC(i)", tBig, int64(7)}, // BIGINT for every argument type, as ksqlDB
	{"TRUNC(b)", tBig, int64(10)},
	{"TRUNC(d)", tBig, int64(2)},
	{"TRUNC(-2.9E0)", tBig, int64(-2)},
	{"TRUNC(1e300)", tBig, int64(math.MaxInt64)},
	{"TRUNC(-1E0/0)", tBig, int64(math.MinInt64)},
	{"TRUNC(0E0/0)", tBig, int64(0)},
	{"TRUNC(ni)", tBig, nil},
	{"TRUNC(nd)", tBig, nil},
	{"TRUNC(1.259E0, 2)", tDouble, 1.25},
	{"TRUNC(-1.259E0, 2)", tDouble, -1.25},
	{"TRUNC(1234.5E0, -2)", tDouble, 1200.0},
	{"TRUNC(-0.5E0, 0)", tDouble, 0.0}, // BigDecimal has no -0
	{"TRUNC(i, 1)", tDouble, 7.0},
	{"TRUNC(0.3E0, 20)", tDouble, 0.3},
	{"TRUNC(1e300, -500)", tDouble, 0.0},
	{"TRUNC(0E0/0, 1)", tDouble, nil}, // ksqlDB fails: BigDecimal has no NaN
	{"TRUNC(nd, 1)", tDouble, nil},
	{"TRUNC(d, ni)", tDouble, nil},

	{"ROUND(-2.6E0)", tBig, int64(-3)},
	{"ROUND(0.49999999999999994E0)", tBig, int64(0)},
	{"ROUND(1e300)", tBig, int64(math.MaxInt64)},
	{"ROUND(0E0/0)", tBig, int64(0)},
	{"ROUND(ni)", tBig, nil},
	{"ROUND(-2.5E0, 0)", tDouble, -2.0},
	{"ROUND(1.005E0, 2)", tDouble, 1.01},
	{"ROUND(-1.005E0, 2)", tDouble, -1.0},
	{"ROUND(-1250, -2)", tDouble, -1200.0},
	{"ROUND(1250, -2)", tDouble, 1300.0},
	{"ABS(-2147483648)", tInt, int32(math.MinInt32)}, // an INT literal: Java's Math.abs overflows
	{"ABS(-(2147483648))", tBig, int64(2147483648)},
	{"ABS(-9223372036854775807 - 1)", tBig, int64(math.MinInt64)}, // Java's Math.abs overflows
	{"ABS(-1E0/0)", tDouble, inf},
	{"ABS(nd)", tDouble, nil},
	{"CEIL(-0.5E0)", tDouble, math.Copysign(0, -1)},
	{"CEIL(ni)", tInt, nil},
	{"FLOOR(b)", tBig, int64(10)},
	{"FLOOR(-0E0)", tDouble, math.Copysign(0, -1)},

	{"GREATEST(1, 3, 2)", tInt, int32(3)},
	{"GREATEST(i, ni, 2)", tInt, int32(7)},
	{"GREATEST(i, d)", tDouble, 7.0},
	{"GREATEST(d, 1, b)", tDouble, 10.0}, // with a DOUBLE, numbers widen
	{"GREATEST(ts, '2024-06-01T00:00:00')", tTimestamp, int64(1717200000000)},
	{"GREATEST(-0E0, 0E0)", tDouble, 0.0},
	{"GREATEST(1E0, 0E0/0)", tDouble, nan}, // NaN above all, as Double.compareTo
	{"GREATEST('a', s, 'abd')", tString, "abd"},
	{"GREATEST(ns, 'x')", tString, "x"},
	{"GREATEST(ni, ni)", tInt, nil},
	{"GREATEST(null, 1)", tInt, int32(1)},
	{"GREATEST(ni)", tInt, nil},
	{"LEAST(1, 3, 2)", tInt, int32(1)},
	{"LEAST(ni, b, d)", tDouble, 2.5},
	{"LEAST(b, b - 20)", tBig, int64(-10)},
	{"LEAST(ts, '2023-06-01')", tTimestamp, int64(1685577600000)},
	{"LEAST(ts, 'x', null)", tTimestamp, int64(1704067200000)},
	{"LEAST(i, d)", tDouble, 2.5},
	{"LEAST(0E0, -0E0)", tDouble, math.Copysign(0, -1)},
	{"LEAST(1E0, 0E0/0)", tDouble, 1.0},
	{"LEAST('b', s)", tString, "abc"},
	{"LEAST(ns, ns)", tString, nil},
	{"LEAST(nd)", tDouble, nil},

	{"GENERATE_SERIES(1, 5)", tIntArray, []any{int32(1), int32(2), int32(3), int32(4), int32(5)}},
	{"GENERATE_SERIES(3, 1)", tIntArray, []any{int32(3), int32(2), int32(1)}},
	{"GENERATE_SERIES(4, 4)", tIntArray, []any{int32(4)}},
	{"GENERATE_SERIES(0, 9, 3)", tIntArray, []any{int32(0), int32(3), int32(6), int32(9)}},
	{"GENERATE_SERIES(0, 10, 3)", tIntArray, []any{int32(0), int32(3), int32(6), int32(9)}},
	{"GENERATE_SERIES(10, 0, -4)", tIntArray, []any{int32(10), int32(6), int32(2)}},
	{"GENERATE_SERIES(4, 4, -1)", tIntArray, []any{int32(4)}},
	{"GENERATE_SERIES(2147483646, 2147483647)", tIntArray, []any{int32(2147483646), int32(2147483647)}},
	{"GENERATE_SERIES(b, 12)", tBigArray, []any{int64(10), int64(11), int64(12)}},
	{"GENERATE_SERIES(i, b, 2)", tBigArray, []any{int64(7), int64(9)}},
	{"GENERATE_SERIES(1, 5, 0)", tIntArray, nil},                                   // ksqlDB: step cannot be zero
	{"GENERATE_SERIES(1, 5, -1)", tIntArray, nil},                                  // ksqlDB: step has wrong sign
	{"GENERATE_SERIES(-9223372036854775807, 9223372036854775807)", tBigArray, nil}, // too long
	{"GENERATE_SERIES(ni, 5)", tIntArray, nil},
	{"GENERATE_SERIES(1, ni)", tIntArray, nil},
	{"GENERATE_SERIES(1, 5, ni)", tIntArray, nil},

	{"NULLIF(i, 7)", tInt, nil},
	{"NULLIF(i, 8)", tInt, int32(7)},
	{"NULLIF(i, ni)", tInt, int32(7)},
	{"NULLIF(ni, 1)", tInt, nil},
	{"NULLIF(b, i + 3)", tBig, nil},
	{"NULLIF(i, d)", tDouble, 7.0},
	{"NULLIF(s, 'abc')", tString, nil},
	{"NULLIF(s, 'x')", tString, "abc"},
	{"NULLIF(0E0/0, 0E0/0)", tDouble, nil}, // Double.equals: NaN equals NaN
	{"NULLIF(-0E0, 0E0)", tDouble, math.Copysign(0, -1)},
	{"NULLIF(null, s)", tString, nil},
}

// GEO_DISTANCE: Palo Alto to London, in km and in miles; NULLs.
var geoFunctionCases = []evalCase{
	{"GEO_DISTANCE(37.4439, -122.1663, 51.5257, -0.1122) > 8634.6", tBool, true},
	{"GEO_DISTANCE(37.4439, -122.1663, 51.5257, -0.1122, 'MI') < 5365.7", tBool, true},
	{"GEO_DISTANCE(37.4439, -122.1663, 51.5257, -0.1122, 'KM') > 8634.6", tBool, true},
	{"GEO_DISTANCE(1.0, 2.0, 1.0, 2.0)", types.DoubleType, float64(0)},
	{"GEO_DISTANCE(CAST(NULL AS DOUBLE), 2.0, 1.0, 2.0)", types.DoubleType, nil},
	{"GEO_DISTANCE(1.0, 2.0, 1.0, 2.0, 'parsecs')", types.DoubleType, nil},
}

func init() {
	functionCaseSets = append(functionCaseSets, mathFunctionCases, geoFunctionCases)
}

func TestRandom(t *testing.T) {
	c, err := compileExpr(t, "RANDOM()")
	if err != nil {
		t.Fatal(err)
	}
	if !c.Type.Equal(tDouble) || c.Const {
		t.Fatalf("RANDOM(): type %s, const %v; want a DOUBLE that is not folded", c.Type, c.Const)
	}
	seen := map[float64]bool{}
	for range 100 {
		f, ok := c.Eval(testRow).(float64)
		if !ok || f < 0 || f >= 1 {
			t.Fatalf("RANDOM() = %v, want a DOUBLE in [0, 1)", f)
		}
		seen[f] = true
	}
	if len(seen) < 90 {
		t.Errorf("RANDOM() gave %d distinct values in 100 calls", len(seen))
	}
	if c, err := compileExpr(t, "RANDOM() < 2"); err != nil || c.Const {
		t.Errorf("RANDOM() < 2: err %v, const %v; want no folding", err, c.Const)
	}
	if _, err := compileExpr(t, "RANDOM(1)"); err == nil {
		t.Error("RANDOM(1) compiled")
	}
}

func TestMathFunctionTypeErrors(t *testing.T) {
	for _, src := range []string{
		"SQRT(s)", "SQRT()", "SQRT(1, 2)", "LOG(1, 2, 3)", "POWER(2)", "PI(1)", "SIGN(t)",
		"TRUNC(s)", "TRUNC(d, 1.5)", "GREATEST()", "GREATEST(i, s)", "LEAST(t, f)", "GREATEST(i, b)", "LEAST(null, null)", "LEAST(ts, i)",
		"GENERATE_SERIES(1)", "GENERATE_SERIES(1.0, 2)", "GENERATE_SERIES(1, 5, b)",
		"NULLIF(i)", "NULLIF(i, s)", "ATAN2(s, 1)",
	} {
		if _, err := compileExpr(t, src); err == nil {
			t.Errorf("%s compiled; want a type error", src)
		}
	}
}

// GREATEST and LEAST reject arguments with ksqlDB's error texts.
func TestGreatestLeastErrorText(t *testing.T) {
	for src, want := range map[string]string{
		"GREATEST(i, b)":          "Function 'greatest' cannot be resolved due to ambiguous method parameters (INTEGER, BIGINT).",
		"LEAST(null, null)":       "Function 'least' cannot be resolved due to ambiguous method parameters (null, null).",
		"GREATEST()":              "Function 'greatest' does not accept parameters ().",
		"LEAST(s, i)":             "Function 'least' does not accept parameters (STRING, INTEGER).",
		"GREATEST(ts, 'x', true)": "Function 'greatest' does not accept parameters (TIMESTAMP, STRING, BOOLEAN).",
	} {
		_, err := compileExpr(t, src)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", src, err, want)
		}
	}
}

// The *_FROM_BYTES readers and MD5.
var bytesFunctionCases = []evalCase{
	{"INT_FROM_BYTES(TO_BYTES('AAAH5Q==', 'base64'))", types.IntegerType, int32(2021)},
	{"INT_FROM_BYTES(TO_BYTES('5QcAAA==', 'base64'), 'LITTLE_ENDIAN')", types.IntegerType, int32(2021)},
	{"INT_FROM_BYTES(TO_BYTES('AAA=', 'base64'))", types.IntegerType, nil},
	{"BIGINT_FROM_BYTES(TO_BYTES('AAAAASoF8gA=', 'base64'))", types.BigIntType, int64(5000000000)},
	{"BIGINT_FROM_BYTES(CAST(NULL AS BYTES))", types.BigIntType, nil},
	{"DOUBLE_FROM_BYTES(TO_BYTES('QICm/ZvJ9YI=', 'base64'))", types.DoubleType, 532.8738323},
	{"DOUBLE_FROM_BYTES(TO_BYTES('QICm/ZvJ9YI=', 'base64'), 'MIDDLE_ENDIAN')", types.DoubleType, nil},
	{"MD5('r1')", types.StringType, "7c92cf1eee8d99cc85f8355a3d6e4b86"},
	{"MD5(ns)", types.StringType, nil},
}

func init() { functionCaseSets = append(functionCaseSets, bytesFunctionCases) }
