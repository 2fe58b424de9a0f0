package expr_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/cockroachdb/apd/v3"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/sluice-sql/sluice/expr"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/types"
)

// testSchema is the row every expression test runs against; testRow
// holds its values, with one NULL column per type.
var testSchema = types.Schema{Columns: []types.Column{
	{Name: "ID", Type: types.StringType, Key: true},
	{Name: "I", Type: types.IntegerType},
	{Name: "B", Type: types.BigIntType},
	{Name: "D", Type: types.DoubleType},
	{Name: "S", Type: types.StringType},
	{Name: "T", Type: types.BooleanType},
	{Name: "F", Type: types.BooleanType},
	{Name: "NI", Type: types.IntegerType},
	{Name: "NB", Type: types.BooleanType},
	{Name: "NS", Type: types.StringType},
	{Name: "ND", Type: types.DoubleType},
	{Name: "TS", Type: types.TimestampType},
}}

var testRow = []any{"k1", int32(7), int64(10), 2.5, "abc", true, false, nil, nil, nil, nil, int64(1704067200000)}

func compileExpr(t testing.TB, src string) (expr.Compiled, error) {
	t.Helper()
	e, err := parser.ParseExpr(src)
	if err != nil {
		t.Fatalf("ParseExpr(%q): %v", src, err)
	}
	return expr.Compile(e, expr.SchemaScope(testSchema))
}

type evalCase struct {
	src      string
	wantType types.Type
	want     any
}

// runEvalCases compiles each case, checks the result type, and the
// value on testRow (and that the value has the Go type of the SQL type).
func runEvalCases(t *testing.T, cases []evalCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.src, func(t *testing.T) {
			c, err := compileExpr(t, tc.src)
			if err != nil {
				t.Fatalf("Compile: %v", err)
			}
			if !c.Type.Equal(tc.wantType) {
				t.Errorf("type %s, want %s", c.Type, tc.wantType)
			}
			row := append([]any(nil), testRow...)
			got := c.Eval(row)
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateNaNs(), decimalComparer); diff != "" {
				t.Errorf("value (-want +got):\n%s", diff)
			}
			if f, ok := tc.want.(float64); ok && f == 0 && math.Signbit(f) != math.Signbit(got.(float64)) {
				t.Errorf("value %v has the wrong sign", got)
			}
		})
	}
}

// dec parses a decimal for a want value; its scale is compared too.
func dec(s string) *apd.Decimal {
	d, err := types.ParseDecimal(s)
	if err != nil {
		panic(err)
	}
	return d
}

// decimalComparer holds two decimals equal when they have the same value
// and the same scale (3.40 is not 3.4).
var decimalComparer = cmp.Comparer(func(a, b *apd.Decimal) bool {
	return a.Cmp(b) == 0 && a.Exponent == b.Exponent
})

var (
	tInt    = types.IntegerType
	tBig    = types.BigIntType
	tDouble = types.DoubleType
	tString = types.StringType
	tBool   = types.BooleanType
)

func TestArithmetic(t *testing.T) {
	runEvalCases(t, []evalCase{
		{"i + i", tInt, int32(14)},
		{"i + b", tBig, int64(17)},
		{"b + i", tBig, int64(17)},
		{"i * d", tDouble, 17.5},
		{"b * d", tDouble, 25.0},
		{"b - i", tBig, int64(3)},
		{"i - b", tBig, int64(-3)},
		{"i / 2", tInt, int32(3)},
		{"-7 / 2", tInt, int32(-3)}, // truncates toward zero, as Java
		{"i % 3", tInt, int32(1)},
		{"-7 % 3", tInt, int32(-1)},
		{"b % 4", tBig, int64(2)},
		{"d % 2", tDouble, 0.5},
		{"i / 0", tInt, nil},
		{"i % 0", tInt, nil},
		{"b / 0", tBig, nil},
		{"b % 0", tBig, nil},
		{"b / (i - 7)", tBig, nil},
		{"d / 0", tDouble, math.Inf(1)},
		{"-d / 0", tDouble, math.Inf(-1)},
		{"d / 0.0", tDouble, math.Inf(1)},
		{"i / 0E0", tDouble, math.Inf(1)},
		{"0E0 / 0", tDouble, math.NaN()},
		{"i / 0.0", types.DecimalOf(17, 6), nil}, // DECIMAL division by zero
		{"0.0 / 0", types.DecimalOf(12, 12), nil},
		{"d % 0", tDouble, math.NaN()},
		{"i / 2.0", types.DecimalOf(17, 6), dec("3.500000")},
		{"i / 2E0", tDouble, 3.5},
		{"2147483647 + 1", tInt, int32(math.MinInt32)}, // INT wraps like Java's int
		{"2147483648", tBig, int64(2147483648)},
		{"-2147483648", tInt, int32(math.MinInt32)},   // the minus is part of the literal, as in ksqlDB
		{"-(2147483648)", tBig, int64(math.MinInt32)}, // negation of the BIGINT literal 2147483648
		{"9223372036854775807 + 1", tBig, int64(math.MinInt64)},
		{"1.5", types.DecimalOf(2, 1), dec("1.5")},
		{"1.5E0", tDouble, 1.5},
		{"1e3", tDouble, 1000.0},
		{"-i", tInt, int32(-7)},
		{"-b", tBig, int64(-10)},
		{"+i", tInt, int32(7)},
		{"-ni", tInt, nil},
		{"i + ni", tInt, nil},
		{"ni * d", tDouble, nil},
		{"nd - 1", tDouble, nil},
		{"i + CAST(NULL AS INTEGER)", tInt, nil},
		{"CAST(NULL AS DOUBLE) * d", tDouble, nil},
		{"(i + 1) * 2 - b / 5", tBig, int64(14)},
		{"i + 2 * 3", tInt, int32(13)},
	})
}

func TestStringConcat(t *testing.T) {
	runEvalCases(t, []evalCase{
		{"s + 'x'", tString, "abcx"},
		{"'x' + s + 'y'", tString, "xabcy"},
		{"s || 'x'", tString, "abcx"},
		{"s || ''", tString, "abc"},
		{"s || ns", tString, nil},
		{"ns + s", tString, nil},
		{"'n=' || i", tString, "n=7"},
		{"'d=' || d", tString, "d=2.5"},
	})
}

func TestComparison(t *testing.T) {
	runEvalCases(t, []evalCase{
		{"i = 7", tBool, true},
		{"i = 7.0", tBool, true},
		{"i = 7.5", tBool, false},
		{"i < b", tBool, true},
		{"b >= 10", tBool, true},
		{"b > 10", tBool, false},
		{"d > i", tBool, false},
		{"d <= 2.5", tBool, true},
		{"i <> 7", tBool, false},
		{"i != 8", tBool, true},
		{"b = 10.0", tBool, true},
		{"s = 'abc'", tBool, true},
		{"s < 'abd'", tBool, true},
		{"s > 'ABC'", tBool, true}, // bytewise: lower case sorts after upper
		{"t = true", tBool, true},
		{"f < t", tBool, true},
		{"ni = 1", tBool, false},
		{"ni <> 1", tBool, false},
		{"ns = ns", tBool, false},
		{"ni IS NULL", tBool, true},
		{"ni IS NOT NULL", tBool, false},
		{"i IS NULL", tBool, false},
		{"i IS NOT NULL", tBool, true},
		{"null IS NULL", tBool, true},
		{"(i / 0) IS NULL", tBool, true},
		{"ni IS DISTINCT FROM null", tBool, false},
		{"ni IS NOT DISTINCT FROM null", tBool, true},
		{"i IS DISTINCT FROM null", tBool, true},
		{"i IS DISTINCT FROM 7.0", tBool, false},
		{"i IS NOT DISTINCT FROM b", tBool, false},
		{"ts = '2024-01-01T00:00:00'", tBool, true},
		{"ts > '2023-12-31'", tBool, true},
		{"'2024-01-02' > ts", tBool, true},
		{"ts = 1704067200000", tBool, true},
	})
}

func TestLogic(t *testing.T) {
	// The full three-valued truth tables, over columns so nothing folds.
	vals := map[string]any{"t": true, "f": false, "nb": nil}
	and := func(a, b any) any {
		if a == false || b == false {
			return false
		}
		if a == nil || b == nil {
			return nil
		}
		return true
	}
	or := func(a, b any) any {
		if a == true || b == true {
			return true
		}
		if a == nil || b == nil {
			return nil
		}
		return false
	}
	var cases []evalCase
	for an, a := range vals {
		for bn, b := range vals {
			cases = append(cases,
				evalCase{an + " AND " + bn, tBool, and(a, b)},
				evalCase{an + " OR " + bn, tBool, or(a, b)})
		}
	}
	cases = append(cases,
		evalCase{"NOT t", tBool, false},
		evalCase{"NOT f", tBool, true},
		evalCase{"NOT nb", tBool, nil},
		evalCase{"NOT (nb AND f)", tBool, true},
		evalCase{"NOT (nb OR t) OR f", tBool, false},
		evalCase{"null AND f", tBool, false},
		evalCase{"null OR t", tBool, true},
		evalCase{"t AND i > 5 AND NOT (s = 'x')", tBool, true},
	)
	runEvalCases(t, cases)
	// With the definitive operand first, the other side is not needed.
	c, err := compileExpr(t, "f AND (i / 0 = 1)")
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Eval(testRow); got != false {
		t.Errorf("f AND NULL-valued = %v, want false", got)
	}
}

// TestIn: IN is two-valued in ksqlDB (a NULL never matches, so NULL NOT
// IN (…) is true); the list coerces to one common type (coerce_test.go).
func TestIn(t *testing.T) {
	runEvalCases(t, []evalCase{
		{"i IN (1, 7)", tBool, true},
		{"i IN (1, 2)", tBool, false},
		{"i IN (7)", tBool, true},
		{"i IN (7.0, 8.5)", tBool, true},
		{"i IN (b, 7)", tBool, true},
		{"i IN (1, null)", tBool, false},
		{"i IN (null, 7)", tBool, true},
		{"i IN (ni)", tBool, false},
		{"i NOT IN (1, 2)", tBool, true},
		{"i NOT IN (1, 7)", tBool, false},
		{"i NOT IN (1, null)", tBool, true},
		{"i NOT IN (7, null)", tBool, false},
		{"ni IN (1, 2)", tBool, false},
		{"ni NOT IN (1, 2)", tBool, true},
		{"s IN ('x', 'abc')", tBool, true},
		{"s IN ('ABC')", tBool, false},
	})
}

func TestBetween(t *testing.T) {
	runEvalCases(t, []evalCase{
		{"i BETWEEN 1 AND 7", tBool, true},
		{"i BETWEEN 7 AND 7", tBool, true},
		{"i BETWEEN 8 AND 10", tBool, false},
		{"i BETWEEN 10 AND 1", tBool, false},
		{"i NOT BETWEEN 8 AND 10", tBool, true},
		{"i NOT BETWEEN 1 AND 7", tBool, false},
		{"d BETWEEN 2 AND 3", tBool, true},
		{"d BETWEEN i AND b", tBool, false},
		{"b BETWEEN 9.5 AND 10.0", tBool, true},
		{"s BETWEEN 'a' AND 'b'", tBool, true},
		{"ni BETWEEN 1 AND 2", tBool, nil},
		{"i BETWEEN null AND 10", tBool, nil},
		{"i BETWEEN 1 AND ni", tBool, nil},
		{"ni NOT BETWEEN 1 AND 2", tBool, nil},
	})
}

func TestLike(t *testing.T) {
	runEvalCases(t, []evalCase{
		{"s LIKE 'abc'", tBool, true},
		{"s LIKE 'ab'", tBool, false},
		{"s LIKE 'a%'", tBool, true},
		{"s LIKE '%c'", tBool, true},
		{"s LIKE '%b%'", tBool, true},
		{"s LIKE '%x%'", tBool, false},
		{"s LIKE '_b_'", tBool, true},
		{"s LIKE 'a_'", tBool, false},
		{"s LIKE '____'", tBool, false},
		{"s LIKE '%'", tBool, true},
		{"s LIKE '%%%'", tBool, true},
		{"s LIKE 'A%'", tBool, false}, // case-sensitive
		{"s LIKE 'a%c%'", tBool, true},
		{"'' LIKE '%'", tBool, true},
		{"'' LIKE '_'", tBool, false},
		{"'' LIKE ''", tBool, true},
		{"'héllo' LIKE 'h_llo'", tBool, true}, // _ is one character, not one byte
		{"'aXbXc' LIKE 'a%b%c'", tBool, true},
		{"'mississippi' LIKE '%iss%ppi'", tBool, true},
		{"s NOT LIKE 'x%'", tBool, true},
		{"s NOT LIKE 'a%'", tBool, false},
		{"ns LIKE '%'", tBool, nil},
		{"s LIKE ns", tBool, nil},
		{"ns NOT LIKE 'a'", tBool, nil},
		{"'50%' LIKE '50!%' ESCAPE '!'", tBool, true},
		{"'500' LIKE '50!%' ESCAPE '!'", tBool, false},
		{"'a_b' LIKE 'a\\_b' ESCAPE '\\'", tBool, true},
		{"'axb' LIKE 'a\\_b' ESCAPE '\\'", tBool, false},
		{"'a!b' LIKE 'a!!b' ESCAPE '!'", tBool, true},
		{"'x%y' LIKE '%!%%' ESCAPE '!'", tBool, true},
		{"'xy' LIKE '%!%%' ESCAPE '!'", tBool, false},
		{"'a%' LIKE 'a%'", tBool, true}, // without ESCAPE, % is a wildcard
	})
}

func TestCase(t *testing.T) {
	runEvalCases(t, []evalCase{
		{"CASE WHEN i > 5 THEN 'big' ELSE 'small' END", tString, "big"},
		{"CASE WHEN i > 10 THEN 'big' ELSE 'small' END", tString, "small"},
		{"CASE WHEN i > 10 THEN 'big' END", tString, nil},
		{"CASE WHEN i > 10 THEN 'a' WHEN i > 5 THEN 'b' WHEN i > 0 THEN 'c' END", tString, "b"},
		{"CASE WHEN nb THEN 1 ELSE 2 END", tInt, int32(2)},
		{"CASE WHEN ni > 1 THEN 1 ELSE 2 END", tInt, int32(2)},
		{"CASE i WHEN 1 THEN 'one' WHEN 7 THEN 'seven' END", tString, "seven"},
		{"CASE i WHEN 7.0 THEN 'seven' END", tString, "seven"},
		{"CASE i WHEN 1 THEN 'one' END", tString, nil},
		{"CASE ni WHEN 1 THEN 'one' ELSE 'other' END", tString, "other"},
		{"CASE i WHEN ni THEN 'null' ELSE 'other' END", tString, "other"},
		{"CASE s WHEN 'abc' THEN i END", tInt, int32(7)},
		// Numeric results unify to the widest type, and values convert.
		{"CASE WHEN i > 5 THEN 1 ELSE 2.5 END", types.DecimalOf(11, 1), dec("1.0")},
		{"CASE WHEN i > 5 THEN 1 ELSE 2.5E0 END", tDouble, 1.0},
		{"CASE WHEN i > 5 THEN 1 ELSE b END", tBig, int64(1)},
		{"CASE WHEN i > 50 THEN b ELSE i END", tBig, int64(7)},
		{"CASE WHEN i > 5 THEN null ELSE 1 END", tInt, nil},
		{"CASE WHEN i > 5 THEN ni ELSE 1.5 END", types.DecimalOf(11, 1), nil},
		{"CASE WHEN i > 50 THEN null ELSE b END", tBig, int64(10)},
	})
}

func TestCast(t *testing.T) {
	runEvalCases(t, []evalCase{
		{"CAST(i AS STRING)", tString, "7"},
		{"CAST(i AS VARCHAR)", tString, "7"},
		{"CAST(b AS STRING)", tString, "10"},
		{"CAST(d AS STRING)", tString, "2.5"},
		{"CAST(125.0 AS STRING)", tString, "125.0"},
		{"CAST(t AS STRING)", tString, "true"},
		{"CAST(s AS STRING)", tString, "abc"},
		{"CAST(ni AS STRING)", tString, nil},
		{"CAST(b AS INT)", tInt, int32(10)},
		{"CAST(d AS INT)", tInt, int32(2)},
		{"CAST(-2.7 AS INT)", tInt, int32(-2)},
		{"CAST('42' AS INT)", tInt, int32(42)},
		{"CAST(' 42 ' AS INTEGER)", tInt, int32(42)},
		{"CAST('-5' AS INT)", tInt, int32(-5)},
		{"CAST('abc' AS INT)", tInt, nil},
		{"CAST('' AS INT)", tInt, nil},
		{"CAST('1.5' AS INT)", tInt, nil},
		{"CAST('2147483648' AS INT)", tInt, nil},
		{"CAST(ni AS INT)", tInt, nil},
		{"CAST(i AS BIGINT)", tBig, int64(7)},
		{"CAST('9223372036854775807' AS BIGINT)", tBig, int64(math.MaxInt64)},
		{"CAST('9223372036854775808' AS BIGINT)", tBig, nil},
		{"CAST('x' AS BIGINT)", tBig, nil},
		{"CAST(2.9 AS BIGINT)", tBig, int64(2)},
		{"CAST(i AS DOUBLE)", tDouble, 7.0},
		{"CAST(b AS DOUBLE)", tDouble, 10.0},
		{"CAST('2.5' AS DOUBLE)", tDouble, 2.5},
		{"CAST(' 1e3 ' AS DOUBLE)", tDouble, 1000.0},
		{"CAST('x' AS DOUBLE)", tDouble, nil},
		{"CAST(nd AS DOUBLE)", tDouble, nil},
		{"CAST('true' AS BOOLEAN)", tBool, true},
		{"CAST('TRUE' AS BOOLEAN)", tBool, true},
		{"CAST('yes' AS BOOLEAN)", tBool, true},
		{"CAST(' False ' AS BOOLEAN)", tBool, false},
		{"CAST('n' AS BOOLEAN)", tBool, false},
		{"CAST('maybe' AS BOOLEAN)", tBool, nil},
		{"CAST(t AS BOOLEAN)", tBool, true},
		{"CAST(nb AS BOOLEAN)", tBool, nil},
		{"CAST(null AS INT)", tInt, nil},
		{"CAST('2024-01-01T00:00:00' AS TIMESTAMP)", types.TimestampType, int64(1704067200000)},
		{"CAST('2024-01-01T00:00:00.5Z' AS TIMESTAMP)", types.TimestampType, int64(1704067200500)},
		{"CAST('not a time' AS TIMESTAMP)", types.TimestampType, nil},
		{"CAST(b AS TIMESTAMP)", types.TimestampType, int64(10)},
	})
}

func TestConstantFolding(t *testing.T) {
	cases := []struct {
		src     string
		isConst bool
		want    any
	}{
		{"1 + 2", true, int32(3)},
		{"2 * 3.5E0", true, 7.0},
		{"'a' || 'b'", true, "ab"},
		{"NOT true", true, false},
		{"-(3)", true, int32(-3)},
		{"true AND null", true, nil},
		{"1 / 0", true, nil},
		{"UCASE('a')", true, "A"},
		{"CONCAT('a', null, 'b')", true, "ab"},
		{"CAST('12' AS INT) + 1", true, int32(13)},
		{"ABS(-2) * (1 + 1)", true, int32(4)},
		{"null", true, nil},
		{"1 < 2", true, true},
		{"i", false, nil},
		{"i + 1", false, nil},
		{"1 + i", false, nil},
		{"UCASE(s)", false, nil},
		{"CAST(s AS INT)", false, nil},
		{"NOT t", false, nil},
		{"-i", false, nil},
	}
	for _, tc := range cases {
		t.Run(tc.src, func(t *testing.T) {
			c, err := compileExpr(t, tc.src)
			if err != nil {
				t.Fatal(err)
			}
			if c.Const != tc.isConst {
				t.Fatalf("Const = %v, want %v", c.Const, tc.isConst)
			}
			if !c.Const {
				return
			}
			// A folded constant does not read the row at all.
			if got := c.Eval(nil); !cmp.Equal(got, tc.want) {
				t.Errorf("Eval(nil) = %#v, want %#v", got, tc.want)
			}
		})
	}
}

func TestCompileErrors(t *testing.T) {
	cases := []struct {
		src      string
		kind     error
		line     int
		column   int
		contains string
	}{
		{"nosuch + 1", expr.ErrUnknownColumn, 1, 1, "NOSUCH: columns are ID, I, B, D, S, T, F, NI, NB, NS, ND, TS"},
		{"i + nosuch", expr.ErrUnknownColumn, 1, 5, "NOSUCH"},
		{"i +\n  nosuch", expr.ErrUnknownColumn, 2, 3, "columns are ID, I"},
		{"UCASE(missing)", expr.ErrUnknownColumn, 1, 7, "MISSING"},
		{"CASE WHEN i > 1 THEN zz END", expr.ErrUnknownColumn, 1, 22, "ZZ"},
		{"'a' * 2", expr.ErrType, 1, 1, "Error processing expression: ('a' * 2). Unsupported arithmetic types. STRING INTEGER"},
		{"s - 1", expr.ErrType, 1, 1, "arithmetic"},
		{"t + 1", expr.ErrType, 1, 1, "BOOLEAN"},
		{"i + (s * 2)", expr.ErrType, 1, 6, "STRING"},
		{"s = 1", expr.ErrType, 1, 1, "Cannot compare S (STRING) to 1 (INTEGER) with EQUAL."},
		{"t < 1", expr.ErrType, 1, 1, "Cannot compare T (BOOLEAN) to 1 (INTEGER) with LESS_THAN."},
		{"i LIKE '1%'", expr.ErrType, 1, 1, "The column type for Like condition must be VARCHAR. The column type is INTEGER"},
		{"s LIKE 12", expr.ErrType, 1, 8, "The pattern type for Like condition must be VARCHAR. The pattern type is INTEGER"},
		{"s BETWEEN 1 AND 'z'", expr.ErrType, 1, 11, "Invalid expression: Cannot compare S (STRING) to 1 (INTEGER) with GREATER_THAN_OR_EQUAL."},
		{"i = NULL", expr.ErrType, 1, 1, "Comparison with NULL not supported: INTEGER = NULL\nUse 'IS NULL' or 'IS NOT NULL' instead."},
		{"NULL * NULL", expr.ErrType, 1, 1, "Arithmetic on types null and null are not supported."},
		{"i + NULL", expr.ErrType, 1, 1, "Error processing expression: (I + null). Arithmetic on types INTEGER and null are not supported."},
		{"NOT i", expr.ErrType, 1, 1, "NOT needs a BOOLEAN"},
		{"i AND t", expr.ErrType, 1, 1, "BOOLEAN"},
		{"t OR s", expr.ErrType, 1, 1, "BOOLEAN"},
		{"-s", expr.ErrType, 1, 1, "negate"},
		{"CASE WHEN i > 5 THEN 'x' ELSE 1 END", expr.ErrType, 1, 31, "same type"},
		{"CASE WHEN i THEN 1 END", expr.ErrType, 1, 11, "BOOLEAN"},
		{"CAST(s AS ARRAY<INT>)", expr.ErrType, 1, 1, "Invalid Select: Cast of STRING to ARRAY<INTEGER> is not supported"},
		{"UCASE(s, s)", expr.ErrType, 1, 1, "UCASE does not accept 2 arguments"},
		{"ABS(s)", expr.ErrType, 1, 1, "ABS does not accept STRING"},
		{"ROUND(s)", expr.ErrType, 1, 1, "ROUND"},
		{"COALESCE(i, s)", expr.ErrType, 1, 1, "COALESCE"},
		{"IFNULL(i)", expr.ErrType, 1, 1, "IFNULL"},
		{"SUM(i)", expr.ErrType, 1, 1, "aggregate function SUM is not allowed here"},
		{"foo(i)", expr.ErrUnknownFunction, 1, 1, "Can't find any functions with the name 'FOO'"},
		{"substrng(s, 1)", expr.ErrUnknownFunction, 1, 1, "Can't find any functions with the name 'SUBSTRNG'. Did you mean SUBSTRING?"},
		{"  i + lower(s)", expr.ErrUnknownFunction, 1, 7, "'LOWER'"},
	}
	for _, tc := range cases {
		t.Run(tc.src, func(t *testing.T) {
			_, err := compileExpr(t, tc.src)
			if err == nil {
				t.Fatal("compiled; want an error")
			}
			if !errors.Is(err, tc.kind) {
				t.Errorf("error %q is not %v", err, tc.kind)
			}
			for _, other := range []error{expr.ErrUnknownColumn, expr.ErrType, expr.ErrUnknownFunction} {
				if other != tc.kind && errors.Is(err, other) {
					t.Errorf("error %q is also %v", err, other)
				}
			}
			var pe *expr.PosError
			if !errors.As(err, &pe) {
				t.Fatalf("error %q (%T) carries no position", err, err)
			}
			if pe.Pos.Line != tc.line || pe.Pos.Column != tc.column {
				t.Errorf("position %d:%d, want %d:%d", pe.Pos.Line, pe.Pos.Column, tc.line, tc.column)
			}
			if !strings.Contains(err.Error(), tc.contains) {
				t.Errorf("error %q does not contain %q", err, tc.contains)
			}
		})
	}
}

func TestSchemaScopeIgnoresCaseAndQualifier(t *testing.T) {
	for _, src := range []string{"i", "I", "src.i", "X.I"} {
		c, err := compileExpr(t, src)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		if got := c.Eval(testRow); got != int32(7) {
			t.Errorf("%s = %#v", src, got)
		}
	}
}

func TestParseTimestampText(t *testing.T) {
	cases := []struct {
		in   string
		want int64
	}{
		{"1970-01-01", 0},
		{"2024-01-02T03:04", 1704164640000},
		{"2024-01-02T03:04:05", 1704164645000},
		{"2024-01-02T03:04:05.678", 1704164645678},
		{"2024-01-02T03:04:05.678Z", 1704164645678},
		{"2024-01-02T04:04:05.678+01:00", 1704164645678},
	}
	for _, tc := range cases {
		got, err := expr.ParseTimestampText(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseTimestampText(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "yesterday", "2024-13-01", "2024-01-02 03:04:05"} {
		if _, err := expr.ParseTimestampText(bad); !errors.Is(err, expr.ErrType) {
			t.Errorf("ParseTimestampText(%q): err %v, want ErrType", bad, err)
		}
	}
}

func BenchmarkEvalArithmetic(b *testing.B) {
	c, err := compileExpr(b, "(i + b) * d - i / 2")
	if err != nil {
		b.Fatal(err)
	}
	row := append([]any(nil), testRow...)
	b.ReportAllocs()
	for b.Loop() {
		if c.Eval(row) == nil {
			b.Fatal("nil")
		}
	}
}
