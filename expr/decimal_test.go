package expr_test

import (
	"fmt"
	"testing"

	"github.com/cockroachdb/apd/v3"
	"github.com/google/go-cmp/cmp"
	"github.com/sluice-sql/sluice/expr"
	"github.com/sluice-sql/sluice/types"
)

func tDec(p, s int) types.Type { return types.DecimalOf(p, s) }

// TestDecimalLiterals: a number with a point is a DECIMAL whose precision
// is the digits written and whose scale is the digits after the point.
func TestDecimalLiterals(t *testing.T) {
	runEvalCases(t, []evalCase{
		{"1.50", tDec(3, 2), dec("1.50")},
		{"0.5", tDec(1, 1), dec("0.5")},
		{"0.05", tDec(2, 2), dec("0.05")},
		{"-12.345", tDec(5, 3), dec("-12.345")},
		{"1.5E0", tDouble, 1.5}, // an exponent makes a DOUBLE
	})
}

// TestDecimalArithmetic checks the result type of each operator (ksqlDB's
// precision and scale rules) and the exact value.
func TestDecimalArithmetic(t *testing.T) {
	a := "CAST(12.5 AS DECIMAL(4, 2))"  // 12.50
	b := "CAST(0.25 AS DECIMAL(3, 2))"  // 0.25
	c := "CAST(1.0 AS DECIMAL(10, 1))"  // 1.0
	n := "CAST(NULL AS DECIMAL(4, 2))"  // NULL
	m := "CAST(9999 AS DECIMAL(38, 0))" // 9999, the widest
	runEvalCases(t, []evalCase{
		// + and -: precision max(p1-s1, p2-s2) + max(s1, s2) + 1.
		{a + " + " + b, tDec(5, 2), dec("12.75")},
		{a + " - " + b, tDec(5, 2), dec("12.25")},
		{b + " - " + a, tDec(5, 2), dec("-12.25")},
		{a + " + " + c, tDec(12, 2), dec("13.50")},
		{"0.1 + 0.2", tDec(2, 1), dec("0.3")}, // exact, unlike doubles
		// *: precision p1 + p2 + 1, scale s1 + s2.
		{a + " * " + b, tDec(8, 4), dec("3.1250")},
		{"1.1 * 1.1", tDec(5, 2), dec("1.21")},
		// /: scale max(6, s1 + p2 + 1), precision p1 - s1 + s2 + scale.
		{a + " / " + b, tDec(10, 6), dec("50.000000")},
		{"1.0 / 3.0", tDec(8, 6), dec("0.333333")},
		{"2.0 / 3.0", tDec(8, 6), dec("0.666667")}, // HALF_UP
		{"-2.0 / 3.0", tDec(8, 6), dec("-0.666667")},
		{a + " / 0.00", tDec(10, 6), nil}, // division by zero is NULL
		// %: precision min(p1-s1, p2-s2) + max(s1, s2), scale max(s1, s2).
		{a + " % " + b, tDec(3, 2), dec("0.00")},
		{"7.5 % 2.0", tDec(2, 1), dec("1.5")},
		{"-7.5 % 2.0", tDec(2, 1), dec("-1.5")}, // sign of the dividend, as Java
		{"7.5 % 0.0", tDec(1, 1), nil},
		// Integers widen to DECIMAL(10, 0) and BIGINT to DECIMAL(19, 0).
		{"i + " + b, tDec(13, 2), dec("7.25")},
		{"b * 1.5", tDec(22, 1), dec("15.0")},
		{"2 * 3.5", tDec(13, 1), dec("7.0")},
		{"i / 2.0", tDec(17, 6), dec("3.500000")},
		// A DOUBLE operand makes the result a DOUBLE.
		{"d * " + b, tDouble, 0.625},
		{b + " + 1.5E0", tDouble, 1.75},
		// NULLs.
		{n + " + " + a, tDec(5, 2), nil},
		{a + " * " + n, tDec(9, 4), nil},
		{"ni + 1.5", tDec(12, 1), nil},
		// Precision is capped at 38; a result that does not fit is NULL.
		{m + " + " + m, tDec(38, 0), dec("19998")},
		{m + " * " + m, tDec(38, 0), dec("99980001")},
		{"CAST('99999999999999999999999999999999999999' AS DECIMAL(38, 0)) + 1", tDec(38, 0), nil},
		// Negation keeps the type.
		{"-" + a, tDec(4, 2), dec("-12.50")},
	})
}

func TestDecimalComparisons(t *testing.T) {
	runEvalCases(t, []evalCase{
		{"1.50 = 1.5", tBool, true},
		{"CAST(3.4 AS DECIMAL(3, 2)) = 3.40", tBool, true},
		{"0.1 + 0.2 = 0.3", tBool, true},
		{"1.5 > i", tBool, false},
		{"7.0 = i", tBool, true},
		{"2.5 = d", tBool, true},
		{"2.49 < d", tBool, true},
		{"b >= 10.00", tBool, true},
		{"ni = 1.5", tBool, false},
		{"1.5 BETWEEN 1 AND 2", tBool, true},
		{"1.5 IS DISTINCT FROM 1.50", tBool, false},
	})
}

func TestDecimalCasts(t *testing.T) {
	runEvalCases(t, []evalCase{
		// To DECIMAL: HALF_UP to the scale; too many integer digits is NULL.
		{"CAST(10.12 AS DECIMAL(5, 3))", tDec(5, 3), dec("10.120")},
		{"CAST(1 AS DECIMAL(2, 1))", tDec(2, 1), dec("1.0")},
		{"CAST(-1 AS DECIMAL(2, 1))", tDec(2, 1), dec("-1.0")},
		{"CAST(10 AS DECIMAL(2, 1))", tDec(2, 1), nil},
		{"CAST(b AS DECIMAL(19, 0))", tDec(19, 0), dec("10")},
		{"CAST(0.99E0 AS DECIMAL(2, 1))", tDec(2, 1), dec("1.0")},
		{"CAST(0.01E0 AS DECIMAL(2, 1))", tDec(2, 1), dec("0.0")},
		{"CAST(0.1E0 AS DECIMAL(2, 1))", tDec(2, 1), dec("0.1")}, // BigDecimal.valueOf, not the binary value
		{"CAST(1.005E0 AS DECIMAL(3, 2))", tDec(3, 2), dec("1.01")},
		{"CAST(-2.5E0 AS DECIMAL(1, 0))", tDec(1, 0), dec("-3")}, // half away from zero
		{"CAST(d AS DECIMAL(3, 1))", tDec(3, 1), dec("2.5")},
		{"CAST(0E0/0 AS DECIMAL(3, 1))", tDec(3, 1), nil}, // NaN has no decimal
		{"CAST('0.99' AS DECIMAL(2, 1))", tDec(2, 1), dec("1.0")},
		{"CAST(' 12.345 ' AS DECIMAL(5, 2))", tDec(5, 2), dec("12.35")},
		{"CAST('abc' AS DECIMAL(5, 2))", tDec(5, 2), nil},
		{"CAST(ns AS DECIMAL(5, 2))", tDec(5, 2), nil},
		{"CAST(CAST(12.345 AS DECIMAL(5, 3)) AS DECIMAL(4, 2))", tDec(4, 2), dec("12.35")},
		{"CAST(CAST(12.345 AS DECIMAL(5, 3)) AS DECIMAL(3, 2))", tDec(3, 2), nil},
		// From DECIMAL.
		{"CAST(10.99 AS INT)", tInt, int32(10)}, // truncates, as intValue()
		{"CAST(-10.99 AS BIGINT)", tBig, int64(-10)},
		{"CAST(10.01 AS DOUBLE)", tDouble, 10.01},
		{"CAST(CAST(0 AS DECIMAL(4, 2)) AS STRING)", tString, "0.00"}, // toPlainString
		{"CAST(10.010 AS STRING)", tString, "10.010"},
		{"CAST(-0.5 AS VARCHAR)", tString, "-0.5"},
	})
	for _, bad := range []string{"CAST(1 AS DECIMAL(0, 0))", "CAST(1 AS DECIMAL(2, 3))", "CAST(TRUE AS DECIMAL(2, 1))"} {
		if _, err := compileExpr(t, bad); err == nil {
			t.Errorf("%s should not compile", bad)
		}
	}
}

// TestDecimalMixed: CASE and COALESCE widen integers and decimals to a
// common DECIMAL; functions of doubles read decimals as doubles.
func TestDecimalMixed(t *testing.T) {
	runEvalCases(t, []evalCase{
		{"CASE WHEN t THEN 1.5 ELSE 10.25 END", tDec(4, 2), dec("1.50")},
		{"COALESCE(ni, 2.5)", tDec(11, 1), dec("2.5")},
		{"COALESCE(CAST(NULL AS DECIMAL(3, 1)), 1.25)", tDec(4, 2), dec("1.25")},
		{"ABS(-1.5)", tDec(2, 1), dec("1.5")},
		{"SQRT(6.25)", tDouble, 2.5},
		{"'x' + CAST(2.50 AS STRING)", tString, "x2.50"},
	})
}

// Decimal aggregates join the shared table, so that they also go through
// encoding of their accumulators.
func init() {
	d62 := types.DecimalOf(6, 2)
	aggCases = append(aggCases,
		aggCase{"SUM DECIMAL keeps the type", "SUM", []types.Type{d62}, false,
			one(dec("5.40"), dec("100.10"), nil), d62, dec("105.50")},
		aggCase{"SUM DECIMAL exact", "SUM", []types.Type{types.DecimalOf(2, 1)}, false,
			one(dec("0.1"), dec("0.2")), types.DecimalOf(2, 1), dec("0.3")},
		aggCase{"SUM DECIMAL no rows", "SUM", []types.Type{d62}, false, nil, d62, dec("0.00")},
		aggCase{"MIN DECIMAL", "MIN", []types.Type{d62}, false,
			one(dec("5.40"), nil, dec("-1.00"), dec("3.00")), d62, dec("-1.00")},
		aggCase{"MAX DECIMAL", "MAX", []types.Type{d62}, false,
			one(dec("5.40"), dec("5.41"), dec("-1.00")), d62, dec("5.41")},
		aggCase{"AVG DECIMAL is a DOUBLE", "AVG", []types.Type{d62}, false,
			one(dec("1.00"), dec("2.00"), nil), tDouble, 1.5},
		aggCase{"LATEST_BY_OFFSET DECIMAL", "LATEST_BY_OFFSET", []types.Type{types.DecimalOf(3, 2)}, false,
			one(dec("3.40"), dec("8.90")), types.DecimalOf(3, 2), dec("8.90")},
	)
}

func TestDecimalSumUndoAndMerge(t *testing.T) {
	agg, err := expr.BindAggregate("SUM", []types.Type{types.DecimalOf(6, 2)}, false)
	if err != nil {
		t.Fatal(err)
	}
	acc := agg.Init()
	for _, v := range []string{"1.10", "2.20", "3.30"} {
		acc = agg.Add(acc, []any{dec(v)})
	}
	acc = agg.Undo(acc, []any{dec("2.20")})
	acc = agg.Undo(acc, []any{nil})
	if got := agg.Result(acc); !cmp.Equal(got, dec("4.40"), decimalComparer) {
		t.Errorf("after undo: %v, want 4.40", got)
	}
	other := agg.Add(agg.Init(), []any{dec("0.05")})
	if got := agg.Result(agg.Merge(acc, other)); !cmp.Equal(got, dec("4.45"), decimalComparer) {
		t.Errorf("merged: %v, want 4.45", got)
	}
	if _, ok := agg.Result(acc).(*apd.Decimal); !ok {
		t.Errorf("result is %T", agg.Result(acc))
	}
}

func TestDecimalFunctions(t *testing.T) {
	runEvalCases(t, []evalCase{
		{"ABS(-1.50)", tDec(3, 2), dec("1.50")},
		{"ABS(CAST(2 AS DECIMAL(3, 1)))", tDec(3, 1), dec("2.0")},
		{"ABS(CAST(NULL AS DECIMAL(3, 1)))", tDec(3, 1), nil},
		{"GREATEST(1.5, 10.25, CAST(NULL AS DECIMAL(2, 1)))", tDec(4, 2), dec("10.25")},
		{"LEAST(1.5, 10.25)", tDec(4, 2), dec("1.50")},
		{"GREATEST(1.5, 2.5E0)", tDouble, 2.5},
	})
}

// TestDecimalExactAtEveryPrecision runs the functions and operators that
// take a DECIMAL over values with more significant digits than a double
// holds, at several precisions: every digit must survive, with ksqlDB's
// result types (ROUND(x) and TRUNC(x) are DECIMAL(p - s, 0); ROUND(x, d),
// TRUNC(x, d), FLOOR and CEIL keep x's type and scale).
func TestDecimalExactAtEveryPrecision(t *testing.T) {
	of := func(v string, p, s int) string { return fmt.Sprintf("CAST('%s' AS DECIMAL(%d, %d))", v, p, s) }
	big := of("1234567898765432123.4567898765432150", 38, 16)
	neg := of("-1234567898765432123.4567898765432150", 38, 16)
	issue := of("12345678987654321", 33, 16) // issue 33's value
	tiny := of("1.2345678901234567890123456789012345678", 38, 37)
	wide := of("99999999999999999999999999999999999999", 38, 0)
	small := of("-12.35", 4, 2)
	d3816 := tDec(38, 16)
	runEvalCases(t, []evalCase{
		// DECIMAL(38, 16)
		{big, d3816, dec("1234567898765432123.4567898765432150")},
		{"ROUND(" + big + ")", tDec(22, 0), dec("1234567898765432123")},
		{"ROUND(" + big + ", 2)", d3816, dec("1234567898765432123.4600000000000000")},
		{"ROUND(" + big + ", 14)", d3816, dec("1234567898765432123.4567898765432200")},
		{"ROUND(" + big + ", 20)", d3816, dec("1234567898765432123.4567898765432150")},
		{"ROUND(" + big + ", -2)", d3816, dec("1234567898765432100.0000000000000000")},
		{"ROUND(" + big + ", -100)", d3816, dec("0.0000000000000000")},
		{"ROUND(" + big + ", CAST(NULL AS INT))", d3816, nil},
		{"FLOOR(" + big + ")", d3816, dec("1234567898765432123.0000000000000000")},
		{"CEIL(" + big + ")", d3816, dec("1234567898765432124.0000000000000000")},
		{"TRUNC(" + big + ")", tDec(22, 0), dec("1234567898765432123")},
		{"TRUNC(" + big + ", 3)", d3816, dec("1234567898765432123.4560000000000000")},
		{"ABS(" + neg + ")", d3816, dec("1234567898765432123.4567898765432150")},
		{"-" + big, d3816, dec("-1234567898765432123.4567898765432150")},
		{big + " + " + neg, tDec(38, 16), dec("0.0000000000000000")},
		{big + " - 0.0000000000000001", tDec(38, 16), dec("1234567898765432123.4567898765432149")},
		{"CAST(" + big + " AS STRING)", tString, "1234567898765432123.4567898765432150"},
		{"TO_JSON_STRING(" + big + ")", tString, "1234567898765432123.4567898765432150"},
		{"TO_JSON_STRING(ARRAY[" + big + "])", tString, "[1234567898765432123.4567898765432150]"},
		{"ARRAY_CONTAINS(ARRAY[" + big + "], " + big + ")", tBool, true},
		{"ARRAY_CONTAINS(ARRAY[" + big + "], " + of("1234567898765432123.4567898765432151", 38, 16) + ")", tBool, false},
		{big + " = " + of("1234567898765432123.4567898765432151", 38, 16), tBool, false},
		{big + " < " + of("1234567898765432123.4567898765432151", 38, 16), tBool, true},
		{"GREATEST(" + big + ", " + neg + ")", d3816, dec("1234567898765432123.4567898765432150")},
		{"COALESCE(CAST(NULL AS DECIMAL(38, 16)), " + big + ")", d3816, dec("1234567898765432123.4567898765432150")},
		// Below zero ROUND's halves go toward positive infinity (HALF_DOWN),
		// FLOOR and CEIL swap.
		{"ROUND(" + neg + ")", tDec(22, 0), dec("-1234567898765432123")},
		{"ROUND(" + neg + ", 15)", d3816, dec("-1234567898765432123.4567898765432150")},
		{"ROUND(" + neg + ", 14)", d3816, dec("-1234567898765432123.4567898765432100")},
		{"FLOOR(" + neg + ")", d3816, dec("-1234567898765432124.0000000000000000")},
		{"CEIL(" + neg + ")", d3816, dec("-1234567898765432123.0000000000000000")},
		{"TRUNC(" + neg + ", 3)", d3816, dec("-1234567898765432123.4560000000000000")},
		{"ROUND(" + of("-2.5", 38, 16) + ")", tDec(22, 0), dec("-2")},
		{"ROUND(" + of("2.5", 38, 16) + ")", tDec(22, 0), dec("3")},
		{"ROUND(" + of("-0.05", 38, 16) + ", 1)", d3816, dec("0.0000000000000000")}, // no -0
		{"CEIL(" + of("0.0000000000000001", 38, 16) + ")", d3816, dec("1.0000000000000000")},
		{"FLOOR(" + of("-0.0000000000000001", 38, 16) + ")", d3816, dec("-1.0000000000000000")},
		// DECIMAL(33, 16): the value of the issue.
		{"ROUND(" + issue + ")", tDec(17, 0), dec("12345678987654321")},
		{"ROUND(" + issue + ", 2)", tDec(33, 16), dec("12345678987654321.0000000000000000")},
		// DECIMAL(38, 37) and DECIMAL(38, 0): the extremes.
		{"ROUND(" + tiny + ")", tDec(1, 0), dec("1")},
		{"ROUND(" + tiny + ", 36)", tDec(38, 37), dec("1.2345678901234567890123456789012345680")},
		{"FLOOR(" + tiny + ")", tDec(38, 37), dec("1.0000000000000000000000000000000000000")},
		{"ROUND(" + wide + ")", tDec(38, 0), dec("99999999999999999999999999999999999999")},
		{"FLOOR(" + wide + ")", tDec(38, 0), dec("99999999999999999999999999999999999999")},
		{"TO_JSON_STRING(" + wide + ")", tString, "99999999999999999999999999999999999999"},
		// DECIMAL(4, 2)
		{"ROUND(" + small + ")", tDec(2, 0), dec("-12")},
		{"ROUND(" + small + ", 1)", tDec(4, 2), dec("-12.30")},
		{"CEIL(" + small + ")", tDec(4, 2), dec("-12.00")},
		{"FLOOR(" + small + ")", tDec(4, 2), dec("-13.00")},
		{"TRUNC(" + small + ", 1)", tDec(4, 2), dec("-12.30")},
		// Decimal literals are DECIMALs (ksqlDB): ROUND(1.005, 2) is exact.
		{"ROUND(1.005, 2)", tDec(4, 3), dec("1.010")},
		{"ROUND(0.99)", tDec(1, 0), dec("1")},
		{"TRUNC(-2.9)", tDec(1, 0), dec("-2")},
		// A DOUBLE-only function still reads a DECIMAL as a double.
		{"SIGN(" + neg + ")", tInt, int32(-1)},
	})
}
