package expr_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/sluice-sql/sluice/expr"
	"github.com/sluice-sql/sluice/types"
)

func TestJavaNumericEdges(t *testing.T) {
	cases := []struct {
		src  string
		want any
	}{
		// Java's (int)/(long) casts saturate and map NaN to 0; Go's conversion of
		// an out-of-range float is implementation-defined (MinInt on amd64).
		{"CAST(1e10 AS INT)", int32(2147483647)},
		{"CAST(-1e10 AS INT)", int32(-2147483648)},
		{"CAST(0E0/0 AS INT)", int32(0)},
		{"CAST(1e19 AS BIGINT)", int64(9223372036854775807)},
		{"ROUND(1e19)", int64(9223372036854775807)},
		// CAST(DOUBLE AS STRING) inherits FormatDouble's E notation.
		{"CAST(1e7 AS STRING)", "1.0E7"},
		// ROUND(x, d) multiplies in binary floating point: 1.005*100 = 100.49999…
		// ksqlDB rounds BigDecimal.valueOf(1.005) HALF_UP → 1.01.
		{"ROUND(1.005E0, 2)", 1.01},
		// start+length overflows int, the result is empty.
		{"SUBSTRING('hello', 2, 9223372036854775807)", "ello"},
	}
	for _, tc := range cases {
		c, err := compileExpr(t, tc.src)
		if err != nil {
			t.Fatalf("%s: %v", tc.src, err)
		}
		if got := c.Eval(testRow); !cmp.Equal(got, tc.want) {
			t.Errorf("%s = %#v, want %#v", tc.src, got, tc.want)
		}
	}
}

// With ignoreNulls = false, EARLIEST_BY_OFFSET must keep a first NULL;
// the accumulator cannot tell "nothing yet" from "NULL seen", so a later
// value replaces it.
func TestEarliestByOffsetKeepsFirstNull(t *testing.T) {
	agg, err := expr.BindAggregate("EARLIEST_BY_OFFSET", []types.Type{types.IntegerType, types.BooleanType}, false)
	if err != nil {
		t.Fatal(err)
	}
	acc := agg.Add(agg.Init(), []any{nil, false})
	acc = agg.Add(acc, []any{int32(2), false})
	if got := agg.Result(acc); got != nil {
		t.Errorf("EARLIEST_BY_OFFSET(NULL, 2; ignoreNulls=false) = %v, want NULL", got)
	}
}

// BETWEEN and IN type-check their operands as "s = 1" does. (A number
// literal in an IN list against a STRING is its text, as in ksqlDB, so
// the IN case compares with a column.)
func TestBetweenInTypeCheck(t *testing.T) {
	for _, src := range []string{"s BETWEEN 1 AND 2", "s IN (d, 2)"} {
		if _, err := compileExpr(t, src); err == nil {
			t.Errorf("%s compiled; want a type error like s = 1", src)
		}
	}
}
