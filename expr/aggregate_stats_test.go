package expr_test

import (
	"errors"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/sluice-sql/sluice/expr"
	"github.com/sluice-sql/sluice/types"
)

func init() {
	tMapBig := types.Type{Kind: types.Map, Key: &types.StringType, Elem: &types.BigIntType}
	aggCases = append(aggCases,
		aggCase{"HISTOGRAM", "HISTOGRAM", []types.Type{tString}, false, one("a", "b", "a", nil, "a"), tMapBig, map[string]any{"a": int64(3), "b": int64(1)}},
		aggCase{"HISTOGRAM no rows", "HISTOGRAM", []types.Type{tString}, false, nil, tMapBig, map[string]any{}},
		// STDDEV_SAMPLE is the sample standard deviation; STDDEV_SAMP is
		// ksqlDB's function of that name, which gives the sample variance.
		aggCase{"STDDEV_SAMPLE", "STDDEV_SAMPLE", []types.Type{tInt}, false, one(int32(0), int32(10)), tDouble, math.Sqrt(50)},
		aggCase{"STDDEV_SAMPLE one value", "STDDEV_SAMPLE", []types.Type{tDouble}, false, one(3.5), tDouble, float64(0)},
		aggCase{"STDDEV_SAMPLE no rows", "STDDEV_SAMPLE", []types.Type{tDouble}, false, nil, tDouble, float64(0)},
		aggCase{"STDDEV_SAMPLE skips NULLs", "STDDEV_SAMPLE", []types.Type{tBig}, false, one(int64(1), nil, int64(3)), tDouble, math.Sqrt2},
		aggCase{"STDDEV_SAMPLE double", "STDDEV_SAMPLE", []types.Type{tDouble}, false, one(1.5, 2.5, 3.5), tDouble, 1.0},
		// The running sum of an INT column is an INT, as in ksqlDB: it wraps.
		aggCase{"STDDEV_SAMPLE INT sum wraps", "STDDEV_SAMPLE", []types.Type{tInt}, false, one(int32(math.MaxInt32), int32(math.MaxInt32)), tDouble, math.Sqrt(4294967296.0 * 4294967296 / 2)},
		aggCase{"STDDEV_SAMP", "STDDEV_SAMP", []types.Type{tInt}, false, one(int32(0), int32(10)), tDouble, 50.0},
		aggCase{"STDDEV_SAMP one value", "STDDEV_SAMP", []types.Type{tDouble}, false, one(3.5), tDouble, float64(0)},
		aggCase{"STDDEV_SAMP skips NULLs", "STDDEV_SAMP", []types.Type{tBig}, false, one(int64(1), nil, int64(3)), tDouble, 2.0},
		aggCase{"STDDEV_SAMP double", "STDDEV_SAMP", []types.Type{tDouble}, false, one(1.5, 2.5, 3.5), tDouble, 1.0},
		// STDDEV_SAMP computes an INT column's deviations in 32 bits.
		aggCase{"STDDEV_SAMP INT arithmetic wraps", "STDDEV_SAMP", []types.Type{tInt}, false, one(int32(math.MaxInt32), int32(math.MaxInt32)), tDouble, 0.0},
		aggCase{"STDDEV_SAMP BIGINT", "STDDEV_SAMP", []types.Type{tBig}, false, one(int64(2147483648), int64(100)), tDouble, 2147483548.0 * 2147483548 / 2},
		aggCase{"CORRELATION perfect", "CORRELATION", []types.Type{tDouble, tDouble}, false, [][]any{{1.0, 2.0}, {2.0, 4.0}, {3.0, 6.0}}, tDouble, 1.0},
		aggCase{"CORRELATION inverse, NULL pairs skipped", "CORRELATION", []types.Type{tInt, tBig}, false, [][]any{{int32(1), int64(3)}, {nil, int64(9)}, {int32(2), int64(2)}, {int32(3), int64(1)}}, tDouble, -1.0},
		aggCase{"CORRELATION one pair", "CORRELATION", []types.Type{tDouble, tDouble}, false, [][]any{{1.0, 2.0}}, tDouble, math.NaN()},
	)
}

// TestAggregatesUndo checks that taking rows back out of an accumulator
// (a table row changing or deleted) leaves what adding only the others
// gives, for every function that can undo.
func TestAggregatesUndo(t *testing.T) {
	for _, tc := range []struct {
		fn         string
		args       []types.Type
		star       bool
		keep, undo [][]any
	}{
		{"COUNT", nil, true, [][]any{{}, {}}, [][]any{{}}},
		{"COUNT", []types.Type{tInt}, false, one(int32(1), nil), one(nil, int32(5))},
		{"SUM", []types.Type{tInt}, false, one(int32(1), int32(2)), one(int32(10))},
		{"SUM", []types.Type{tBig}, false, one(int64(1)), one(int64(7), nil)},
		{"SUM", []types.Type{tDouble}, false, one(0.5), one(2.25)},
		{"AVG", []types.Type{tInt}, false, one(int32(1), int32(3)), one(int32(100))},
		{"COLLECT_LIST", []types.Type{tString}, false, one("a", "b"), one("c", "a")},
		{"ATTR", []types.Type{tString}, false, one("a", "a"), one("c", "a")},
		{"HISTOGRAM", []types.Type{tString}, false, one("a", "b", "a"), one("a", "c")},
		{"STDDEV_SAMP", []types.Type{tDouble}, false, one(1.0, 2.0, 4.0), one(8.0)},
		{"STDDEV_SAMP", []types.Type{tInt}, false, one(int32(1), int32(2), int32(4)), one(int32(8), nil)},
		{"STDDEV_SAMPLE", []types.Type{tDouble}, false, one(1.0, 2.0, 4.0), one(8.0)},
		{"STDDEV_SAMPLE", []types.Type{tBig}, false, one(int64(1), int64(2), int64(4)), one(int64(8), int64(-3))},
		{"STDDEV_SAMPLE", []types.Type{tInt}, false, one(int32(5)), one(int32(8))},
		{"CORRELATION", []types.Type{tDouble, tDouble}, false, [][]any{{1.0, 1.0}, {2.0, 3.0}, {4.0, 4.5}}, [][]any{{3.0, 0.0}}},
	} {
		t.Run(tc.fn, func(t *testing.T) {
			agg, err := expr.BindAggregate(tc.fn, tc.args, tc.star)
			if err != nil {
				t.Fatal(err)
			}
			if agg.Undo == nil {
				t.Fatalf("%s cannot undo", tc.fn)
			}
			only := agg.Init()
			for _, r := range tc.keep {
				only = agg.Add(only, r)
			}
			acc := agg.Init()
			// The undone rows are added first, among the kept ones, then
			// taken out.
			for _, r := range tc.undo {
				acc = agg.Add(acc, r)
			}
			for _, r := range tc.keep {
				acc = agg.Add(acc, r)
			}
			for _, r := range tc.undo {
				acc = agg.Undo(acc, r)
			}
			if diff := cmp.Diff(agg.Result(only), agg.Result(acc), cmpopts.EquateApprox(0, 1e-9), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("after undo (-want +got):\n%s", diff)
			}
		})
	}
	for _, fn := range []string{"MIN", "MAX", "LATEST_BY_OFFSET", "COUNT_DISTINCT", "COLLECT_SET"} {
		agg, err := expr.BindAggregate(fn, []types.Type{tInt}, false)
		if err != nil {
			t.Fatal(err)
		}
		if agg.Undo != nil {
			t.Errorf("%s claims it can undo; it cannot take a value back out", fn)
		}
	}
}

// TestStddevMerge: merging two sessions' accumulators. STDDEV_SAMPLE gives
// what one accumulator over all the rows gives; STDDEV_SAMP, as ksqlDB's,
// takes each side's mean in integers for an integer column.
func TestStddevMerge(t *testing.T) {
	for _, tc := range []struct {
		fn             string
		arg            types.Type
		earlier, later [][]any
		want           float64
	}{
		{"STDDEV_SAMPLE", tInt, one(int32(1), int32(2)), one(int32(4)), math.Sqrt(7.0 / 3)},
		{"STDDEV_SAMPLE", tDouble, one(1.0), nil, 0},
		{"STDDEV_SAMPLE", tDouble, nil, one(1.0, 3.0), math.Sqrt2},
		// means 1 (not 1.5) and 4: M2 = 0.5 + 0 + 2·1·3²/3 = 6.5.
		{"STDDEV_SAMP", tInt, one(int32(1), int32(2)), one(int32(4)), 6.5 / 2},
		{"STDDEV_SAMP", tDouble, one(1.0, 2.0), one(4.0), 7.0 / 3},
	} {
		agg, err := expr.BindAggregate(tc.fn, []types.Type{tc.arg}, false)
		if err != nil {
			t.Fatal(err)
		}
		fold := func(rows [][]any) any {
			acc := agg.Init()
			for _, r := range rows {
				acc = agg.Add(acc, r)
			}
			return acc
		}
		got := agg.Result(agg.Merge(fold(tc.earlier), fold(tc.later)))
		if diff := cmp.Diff(tc.want, got, cmpopts.EquateApprox(0, 1e-12)); diff != "" {
			t.Errorf("%s(%s) merged (-want +got):\n%s", tc.fn, tc.arg, diff)
		}
	}
}

// TestStddevArgs: the standard deviations take INT, BIGINT or DOUBLE only,
// and declare a STRUCT state (which DELIMITED cannot hold).
func TestStddevArgs(t *testing.T) {
	for _, fn := range []string{"STDDEV_SAMP", "STDDEV_SAMPLE"} {
		for _, arg := range []types.Type{tString, types.DecimalOf(4, 2), tBool} {
			if _, err := expr.BindAggregate(fn, []types.Type{arg}, false); !errors.Is(err, expr.ErrType) {
				t.Errorf("%s(%s): err %v, want a type error", fn, arg, err)
			}
		}
		agg, err := expr.BindAggregate(fn, []types.Type{tBig}, false)
		if err != nil {
			t.Fatal(err)
		}
		if agg.StateType.Kind != types.Struct {
			t.Errorf("%s state type %s, want a STRUCT", fn, agg.StateType)
		}
	}
}
