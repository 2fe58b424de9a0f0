package expr_test

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/sluice-sql/sluice/expr"
	"github.com/sluice-sql/sluice/types"
)

// functionCases covers every registered scalar function, NULL inputs
// included; TestEveryScalarFunctionTested keeps it complete.
var functionCases = []evalCase{
	{"UCASE('aBc')", tString, "ABC"},
	{"INITCAP('hello wORLD  foo')", tString, "Hello World  Foo"},
	{"INITCAP(ns)", tString, nil},
	{"CONCAT_WS('-', 'a', ns, 'b')", tString, "a-b"},
	{"CONCAT_WS(ns, 'a', 'b')", tString, nil},
	{"CONCAT_WS(', ', ns)", tString, ""},
	{"UCASE(s)", tString, "ABC"},
	{"UCASE('héllo')", tString, "HÉLLO"},
	{"UCASE(ns)", tString, nil},
	{"LCASE('aBC')", tString, "abc"},
	{"LCASE(ns)", tString, nil},
	{"TRIM('  a b \t')", tString, "a b"},
	{"TRIM('')", tString, ""},
	{"TRIM(ns)", tString, nil},
	{"LTRIM('  a ')", tString, "a "},
	{"LTRIM(ns)", tString, nil},
	{"RTRIM('  a ')", tString, "  a"},
	{"RTRIM(ns)", tString, nil},
	{"LEN('héllo')", tInt, int32(5)}, // characters, not bytes
	{"LEN('')", tInt, int32(0)},
	{"LEN(s)", tInt, int32(3)},
	{"LEN(ns)", tInt, nil},
	{"CONCAT('a', 'b', 'c')", tString, "abc"},
	{"CONCAT(s)", tString, "abc"},
	{"CONCAT('a', ns, 'b')", tString, "ab"}, // NULLs are skipped
	{"CONCAT(ns, ns)", tString, ""},
	{"CONCAT(s, '-', i, '-', d)", tString, "abc-7-2.5"},
	{"SUBSTRING('hello', 1)", tString, "hello"},
	{"SUBSTRING('hello', 2)", tString, "ello"},
	{"SUBSTRING('hello', 2, 3)", tString, "ell"},
	{"SUBSTRING('hello', 4, 10)", tString, "lo"},
	{"SUBSTRING('hello', 5, 1)", tString, "o"},
	{"SUBSTRING('hello', 6)", tString, ""},
	{"SUBSTRING('hello', 10, 2)", tString, ""},
	{"SUBSTRING('hello', 2, 0)", tString, ""},
	{"SUBSTRING('hello', 2, -1)", tString, ""},
	{"SUBSTRING('hello', 0)", tString, "hello"},
	{"SUBSTRING('hello', -3)", tString, "llo"},
	{"SUBSTRING('hello', -3, 2)", tString, "ll"},
	{"SUBSTRING('hello', -1)", tString, "o"},
	{"SUBSTRING('hello', -10)", tString, "hello"},
	{"SUBSTRING('héllo', 2, 2)", tString, "él"},
	{"SUBSTRING(s, b - 8)", tString, "bc"}, // BIGINT positions work too
	{"SUBSTRING(ns, 1)", tString, nil},
	{"SUBSTRING('x', ni)", tString, nil},
	{"SUBSTRING('hello', 1, ni)", tString, nil},
	{"ABS(-3)", tInt, int32(3)},
	{"ABS(i)", tInt, int32(7)},
	{"ABS(-b)", tBig, int64(10)},
	{"ABS(-2.5)", types.DecimalOf(2, 1), dec("2.5")},
	{"ABS(-2.5E0)", tDouble, 2.5},
	{"ABS(ni)", tInt, nil},
	{"ABS(null)", tDouble, nil},
	{"CEIL(2.1E0)", tDouble, 3.0},
	{"CEIL(-2.1E0)", tDouble, -2.0},
	{"CEIL(i)", tInt, int32(7)},
	{"CEIL(b)", tBig, int64(10)},
	{"CEIL(nd)", tDouble, nil},
	{"FLOOR(2.9E0)", tDouble, 2.0},
	{"FLOOR(-2.1E0)", tDouble, -3.0},
	{"FLOOR(i)", tInt, int32(7)},
	{"FLOOR(nd)", tDouble, nil},
	{"ROUND(2.5E0)", tBig, int64(3)},
	{"ROUND(2.4E0)", tBig, int64(2)},
	{"ROUND(-2.5E0)", tBig, int64(-2)}, // halves toward +infinity, as Java's Math.round
	{"ROUND(-2.4E0)", tBig, int64(-2)},
	{"ROUND(d)", tBig, int64(3)},
	{"ROUND(i)", tBig, int64(7)},
	{"ROUND(b)", tBig, int64(10)},
	{"ROUND(nd)", tBig, nil},
	{"ROUND(2.345E0, 2)", tDouble, 2.35},
	{"ROUND(2.344E0, 2)", tDouble, 2.34},
	{"ROUND(-2.345E0, 2)", tDouble, -2.34},
	{"ROUND(d, 0)", tDouble, 3.0},
	{"ROUND(i, 1)", tDouble, 7.0},
	{"ROUND(1234.5E0, -2)", tDouble, 1200.0},
	{"ROUND(nd, 1)", tDouble, nil},
	{"ROUND(2.345E0, ni)", tDouble, nil},
	{"COALESCE(ni, 3)", tInt, int32(3)},
	{"COALESCE(i, 3)", tInt, int32(7)},
	{"COALESCE(ni, b)", tBig, int64(10)},
	{"COALESCE(i, b)", tBig, int64(7)}, // converted to the unified type
	{"COALESCE(ni, i, d)", tDouble, 7.0},
	{"AS_VALUE(id)", tString, "k1"},
	{"AS_VALUE(ni)", tInt, nil},
	{"COALESCE(ni, ni)", tInt, nil},
	{"COALESCE(null, 'x')", tString, "x"},
	{"COALESCE(ns, s, 'z')", tString, "abc"},
	{"COALESCE(null)", types.UnknownType, nil},
	{"IFNULL(ns, 'd')", tString, "d"},
	{"IFNULL(s, 'd')", tString, "abc"},
	{"IFNULL(ni, b)", tBig, int64(10)},
	{"IFNULL(ni, ni)", tInt, nil},
}

// functionCaseSets holds every file's function cases: a file adding
// functions adds its own set in an init, so that TestScalarFunctions runs
// them and TestEveryScalarFunctionTested sees them.
var functionCaseSets = [][]evalCase{functionCases}

func allFunctionCases() []evalCase {
	var out []evalCase
	for _, set := range functionCaseSets {
		out = append(out, set...)
	}
	return out
}

func TestScalarFunctions(t *testing.T) {
	runEvalCases(t, allFunctionCases())
}

func TestEveryScalarFunctionTested(t *testing.T) {
	names := expr.ScalarNames()
	if !slices.IsSorted(names) {
		t.Errorf("ScalarNames() not sorted: %v", names)
	}
	for _, name := range names {
		n := 0
		for _, tc := range allFunctionCases() {
			if strings.HasPrefix(tc.src, name+"(") {
				n++
			}
		}
		if n < 2 {
			t.Errorf("function %s has %d test cases; want a value and a NULL case at least", name, n)
		}
	}
}

func TestFunctionNamesFoldCase(t *testing.T) {
	for _, src := range []string{"ucase(s)", "UCase(s)", "Ucase(s)"} {
		c, err := compileExpr(t, src)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		if got := c.Eval(testRow); got != "ABC" {
			t.Errorf("%s = %#v", src, got)
		}
	}
}

func TestRoundKeepsNaNAndInfinity(t *testing.T) {
	for src, want := range map[string]float64{"ROUND(0E0/0, 1)": math.NaN(), "ROUND(d/0, 2)": math.Inf(1)} {
		c, err := compileExpr(t, src)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := c.Eval(testRow).(float64)
		if !(math.IsNaN(want) && math.IsNaN(got)) && got != want {
			t.Errorf("%s = %v, want %v", src, got, want)
		}
	}
}
