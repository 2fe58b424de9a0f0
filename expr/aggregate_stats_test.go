package expr_test

import (
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
		aggCase{"STDDEV_SAMP", "STDDEV_SAMP", []types.Type{tInt}, false, one(int32(2), int32(4), int32(4), int32(4), int32(5), int32(5), int32(7), int32(9)), tDouble, math.Sqrt(32.0 / 7)},
		aggCase{"STDDEV_SAMP one value", "STDDEV_SAMP", []types.Type{tDouble}, false, one(3.5), tDouble, float64(0)},
		aggCase{"STDDEV_SAMP skips NULLs", "STDDEV_SAMP", []types.Type{tBig}, false, one(int64(1), nil, int64(3)), tDouble, math.Sqrt2},
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
		{"COLLECT_LIST", []types.Type{tString}, false, one("a", "b", "a"), one("c", "a")},
		{"COLLECT_SET", []types.Type{tString}, false, one("a", "b"), one("c")},
		{"HISTOGRAM", []types.Type{tString}, false, one("a", "b", "a"), one("a", "c")},
		{"STDDEV_SAMP", []types.Type{tDouble}, false, one(1.0, 2.0, 4.0), one(8.0)},
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
	for _, fn := range []string{"MIN", "MAX", "LATEST_BY_OFFSET", "COUNT_DISTINCT"} {
		agg, err := expr.BindAggregate(fn, []types.Type{tInt}, false)
		if err != nil {
			t.Fatal(err)
		}
		if agg.Undo != nil {
			t.Errorf("%s claims it can undo; it cannot take a value back out", fn)
		}
	}
}
