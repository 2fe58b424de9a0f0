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
	"github.com/sluice-sql/sluice/types"
)

type aggCase struct {
	name     string
	fn       string
	args     []types.Type
	star     bool
	rows     [][]any // the argument values of each row
	wantType types.Type
	want     any
}

func one(vs ...any) [][]any {
	out := make([][]any, len(vs))
	for i, v := range vs {
		out[i] = []any{v}
	}
	return out
}

var aggCases = []aggCase{
	{"COUNT(*)", "COUNT", nil, true, [][]any{{}, {}, {}}, tBig, int64(3)},
	{"COUNT(*) no rows", "COUNT", nil, true, nil, tBig, int64(0)},
	{"COUNT(*) counts NULL rows", "COUNT", []types.Type{tInt}, true, one(int32(1), nil, nil), tBig, int64(3)},
	{"COUNT(col) skips NULLs", "COUNT", []types.Type{tInt}, false, one(int32(1), nil, int32(3), nil), tBig, int64(2)},
	{"COUNT(col) all NULL", "COUNT", []types.Type{tString}, false, one(nil, nil), tBig, int64(0)},
	{"lower-case name", "count", []types.Type{tString}, false, one("a"), tBig, int64(1)},
	{"SUM INT", "SUM", []types.Type{tInt}, false, one(int32(1), nil, int32(2), int32(-10)), tInt, int32(-7)},
	{"SUM INT wraps", "SUM", []types.Type{tInt}, false, one(int32(math.MaxInt32), int32(1)), tInt, int32(math.MinInt32)},
	{"SUM BIGINT", "SUM", []types.Type{tBig}, false, one(int64(1<<40), nil, int64(1)), tBig, int64(1<<40 + 1)},
	{"SUM DOUBLE", "SUM", []types.Type{tDouble}, false, one(0.5, nil, 0.25), tDouble, 0.75},
	{"SUM no values", "SUM", []types.Type{tDouble}, false, one(nil), tDouble, 0.0},
	{"SUM INT no rows", "SUM", []types.Type{tInt}, false, nil, tInt, int32(0)},
	{"AVG INT", "AVG", []types.Type{tInt}, false, one(int32(1), int32(2), nil, int32(4)), tDouble, 7.0 / 3},
	{"AVG BIGINT", "AVG", []types.Type{tBig}, false, one(int64(2), int64(3)), tDouble, 2.5},
	{"AVG DOUBLE", "AVG", []types.Type{tDouble}, false, one(1.5, nil, -0.5), tDouble, 0.5},
	{"AVG no values", "AVG", []types.Type{tDouble}, false, one(nil, nil), tDouble, 0.0},
	{"MIN INT", "MIN", []types.Type{tInt}, false, one(int32(3), nil, int32(1), int32(2)), tInt, int32(1)},
	{"MAX INT", "MAX", []types.Type{tInt}, false, one(int32(3), nil, int32(1), int32(2)), tInt, int32(3)},
	{"MIN first NULL", "MIN", []types.Type{tBig}, false, one(nil, int64(5), int64(-5)), tBig, int64(-5)},
	{"MAX all NULL", "MAX", []types.Type{tDouble}, false, one(nil, nil), tDouble, nil},
	{"MIN no rows", "MIN", []types.Type{tDouble}, false, nil, tDouble, nil},
	{"MIN STRING", "MIN", []types.Type{tString}, false, one("b", "a", "c"), tString, "a"},
	{"MAX STRING", "MAX", []types.Type{tString}, false, one("b", "a", "c"), tString, "c"},
	{"MAX DOUBLE", "MAX", []types.Type{tDouble}, false, one(-1.0, math.Inf(-1), 2.5), tDouble, 2.5},
	{"MAX with NaN", "MAX", []types.Type{tDouble}, false, one(1.0, math.NaN(), 2.0), tDouble, math.NaN()}, // NaN sorts last
	{"MIN with NaN", "MIN", []types.Type{tDouble}, false, one(math.NaN(), 2.0, 1.0), tDouble, 1.0},
	{"MAX BOOLEAN", "MAX", []types.Type{tBool}, false, one(false, true, false), tBool, true},
	{"LATEST_BY_OFFSET", "LATEST_BY_OFFSET", []types.Type{tInt}, false, one(int32(1), int32(2), int32(3)), tInt, int32(3)},
	{"LATEST_BY_OFFSET n", "LATEST_BY_OFFSET", []types.Type{tInt, tInt}, false, [][]any{{int32(1), int32(2)}, {nil, int32(2)}, {int32(3), int32(2)}, {int32(4), int32(2)}}, types.ArrayOf(tInt), []any{int32(3), int32(4)}},
	{"LATEST_BY_OFFSET n keeps NULLs", "LATEST_BY_OFFSET", []types.Type{tInt, tInt, tBool}, false, [][]any{{int32(1), int32(2), false}, {nil, int32(2), false}}, types.ArrayOf(tInt), []any{int32(1), nil}},
	{"EARLIEST_BY_OFFSET n", "EARLIEST_BY_OFFSET", []types.Type{tInt, tBig}, false, [][]any{{nil, int64(2)}, {int32(5), int64(2)}, {int32(6), int64(2)}, {int32(7), int64(2)}}, types.ArrayOf(tInt), []any{int32(5), int32(6)}},
	{"COLLECT_LIST keeps order, repeats and NULLs", "COLLECT_LIST", []types.Type{tInt}, false, one(int32(2), nil, int32(2), int32(1)), types.ArrayOf(tInt), []any{int32(2), nil, int32(2), int32(1)}},
	{"COLLECT_LIST no rows", "COLLECT_LIST", []types.Type{tString}, false, nil, types.ArrayOf(tString), []any{}},
	{"COLLECT_SET first arrival, NULL once", "COLLECT_SET", []types.Type{tString}, false, one("b", "a", nil, "b", nil, "a"), types.ArrayOf(tString), []any{"b", "a", nil}},
	{"ATTR one value", "ATTR", []types.Type{tInt}, false, one(int32(7), int32(7)), tInt, int32(7)},
	{"ATTR two values is NULL", "ATTR", []types.Type{tString}, false, one("a", "b", "a"), tString, nil},
	{"ATTR only NULLs", "ATTR", []types.Type{tInt}, false, one(nil, nil), tInt, nil},
	{"ATTR NULL and a value is NULL", "ATTR", []types.Type{tInt}, false, one(nil, int32(1)), tInt, nil},
	{"ATTR no rows", "ATTR", []types.Type{tDouble}, false, nil, tDouble, nil},
	{"ATTR of arrays", "ATTR", []types.Type{types.ArrayOf(tInt)}, false, one([]any{int32(1)}, []any{int32(1)}), types.ArrayOf(tInt), []any{int32(1)}},
	{"COLLECT_SET of arrays", "COLLECT_SET", []types.Type{types.ArrayOf(tInt)}, false, one([]any{int32(1)}, []any{int32(1)}, []any{int32(2)}), types.ArrayOf(types.ArrayOf(tInt)), []any{[]any{int32(1)}, []any{int32(2)}}},
	{"COUNT_DISTINCT", "COUNT_DISTINCT", []types.Type{tString}, false, one("one", "two", "one", nil, "two"), tBig, int64(2)},
	{"COUNT_DISTINCT no values", "COUNT_DISTINCT", []types.Type{tBig}, false, one(nil), tBig, int64(0)},
	{"LATEST_BY_OFFSET ignores NULLs", "LATEST_BY_OFFSET", []types.Type{tInt}, false, one(int32(1), int32(2), nil), tInt, int32(2)},
	{"LATEST_BY_OFFSET ignoreNulls true", "LATEST_BY_OFFSET", []types.Type{tString, tBool}, false, [][]any{{"a", true}, {nil, true}}, tString, "a"},
	{"LATEST_BY_OFFSET ignoreNulls false", "LATEST_BY_OFFSET", []types.Type{tString, tBool}, false, [][]any{{"a", false}, {nil, false}}, tString, nil},
	{"LATEST_BY_OFFSET ignoreNulls false then value", "LATEST_BY_OFFSET", []types.Type{tString, tBool}, false, [][]any{{nil, false}, {"b", false}}, tString, "b"},
	{"LATEST_BY_OFFSET no rows", "LATEST_BY_OFFSET", []types.Type{tString}, false, nil, tString, nil},
	{"EARLIEST_BY_OFFSET", "EARLIEST_BY_OFFSET", []types.Type{tBig}, false, one(int64(1), int64(2)), tBig, int64(1)},
	{"EARLIEST_BY_OFFSET ignores NULLs", "EARLIEST_BY_OFFSET", []types.Type{tBig}, false, one(nil, int64(2), int64(3)), tBig, int64(2)},
	{"EARLIEST_BY_OFFSET ignoreNulls false keeps first value", "EARLIEST_BY_OFFSET", []types.Type{tDouble, tBool}, false, [][]any{{1.5, false}, {nil, false}, {2.5, false}}, tDouble, 1.5},
	{"EARLIEST_BY_OFFSET all NULL", "EARLIEST_BY_OFFSET", []types.Type{tDouble}, false, one(nil, nil), tDouble, nil},
	{"TOPK", "TOPK", []types.Type{tDouble, tInt}, false, withK(2, 0.0, 100.0, 10.0), types.ArrayOf(tDouble), []any{100.0, 10.0}},
	{"TOPK keeps duplicates", "TOPK", []types.Type{tInt, tInt}, false, withK(3, int32(0), int32(100), int32(99), int32(7), int32(100)), types.ArrayOf(tInt), []any{int32(100), int32(100), int32(99)}},
	{"TOPK fewer rows than k", "TOPK", []types.Type{tString, tInt}, false, withK(3, "b", "a"), types.ArrayOf(tString), []any{"b", "a"}},
	{"TOPK skips NULLs", "TOPK", []types.Type{tBig, tInt}, false, withK(2, nil, int64(5), nil), types.ArrayOf(tBig), []any{int64(5)}},
	{"TOPK no rows", "TOPK", []types.Type{tBig, tInt}, false, nil, types.ArrayOf(tBig), []any{}},
	{"TOPKDISTINCT", "TOPKDISTINCT", []types.Type{tDouble, tInt}, false, withK(2, 0.0, 100.0, 10.0, 100.0), types.ArrayOf(tDouble), []any{100.0, 10.0}},
	{"TOPKDISTINCT one distinct value", "TOPKDISTINCT", []types.Type{tInt, tInt}, false, withK(2, int32(1), int32(1)), types.ArrayOf(tInt), []any{int32(1)}},
	{"TOPK struct: ties keep arrival order", "TOPK", []types.Type{tInt, tString, tInt}, false,
		[][]any{{int32(0), "zero", int32(3)}, {int32(100), "one", int32(3)}, {int32(99), "two", int32(3)}, {nil, "three", int32(3)}, {int32(100), nil, int32(3)}},
		types.ArrayOf(types.Type{Kind: types.Struct, Fields: []types.Field{{Name: "sort_col", Type: tInt}, {Name: "col0", Type: tString}}}),
		[]any{[]any{int32(100), "one"}, []any{int32(100), nil}, []any{int32(99), "two"}}},
}

// withK gives rows of one value each, followed by TOPK's k.
func withK(k int32, vs ...any) [][]any {
	out := make([][]any, len(vs))
	for i, v := range vs {
		out[i] = []any{v, k}
	}
	return out
}

func fold(agg *expr.Aggregate, acc any, rows [][]any) any {
	for _, r := range rows {
		acc = agg.Add(acc, r)
	}
	return acc
}

func TestAggregates(t *testing.T) {
	for _, tc := range aggCases {
		t.Run(tc.name, func(t *testing.T) {
			agg, err := expr.BindAggregate(tc.fn, tc.args, tc.star)
			if err != nil {
				t.Fatalf("BindAggregate: %v", err)
			}
			if !agg.ResultType.Equal(tc.wantType) {
				t.Errorf("ResultType %s, want %s", agg.ResultType, tc.wantType)
			}
			got := agg.Result(fold(agg, agg.Init(), tc.rows))
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateNaNs(), decimalComparer); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
		})
	}
}

// State stores keep accumulators encoded; folding must go on from a
// decoded accumulator as if it had never left memory.
func TestAggregateAccumulatorSurvivesEncoding(t *testing.T) {
	for _, tc := range aggCases {
		t.Run(tc.name, func(t *testing.T) {
			agg, err := expr.BindAggregate(tc.fn, tc.args, tc.star)
			if err != nil {
				t.Fatal(err)
			}
			// Encode and decode after every row, the worst case.
			acc := agg.Init()
			for _, r := range tc.rows {
				buf := types.AppendValue(nil, acc)
				dec, rest, err := types.DecodeValue(buf)
				if err != nil || len(rest) != 0 {
					t.Fatalf("decode accumulator %#v: rest %x, err %v", acc, rest, err)
				}
				acc = agg.Add(dec, r)
			}
			buf := types.AppendValues(nil, []any{acc})
			accs, _, err := types.DecodeValues(buf)
			if err != nil {
				t.Fatal(err)
			}
			got := agg.Result(accs[0])
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateNaNs(), decimalComparer); diff != "" {
				t.Errorf("result after encoding (-want +got):\n%s", diff)
			}
		})
	}
}

// Init returns a fresh accumulator each time: folding one group must not
// leak into another.
func TestAggregateInitIsFresh(t *testing.T) {
	agg, err := expr.BindAggregate("AVG", []types.Type{tInt}, false)
	if err != nil {
		t.Fatal(err)
	}
	a := fold(agg, agg.Init(), one(int32(10)))
	b := fold(agg, agg.Init(), one(int32(2), int32(4)))
	if ra, rb := agg.Result(a), agg.Result(b); ra != 10.0 || rb != 3.0 {
		t.Errorf("results %v, %v; want 10, 3", ra, rb)
	}
	// Add does not mutate the accumulator it was given.
	before := agg.Init()
	_ = agg.Add(before, []any{int32(5)})
	if got := agg.Result(before); got != 0.0 {
		t.Errorf("Add mutated its input: %v", got)
	}
	// TOPK inserts into a list: the previous list must stay as it was.
	topk, err := expr.BindAggregate("TOPK", []types.Type{tInt, tInt}, false)
	if err != nil {
		t.Fatal(err)
	}
	prev := fold(topk, topk.Init(), withK(2, int32(5), int32(1)))
	_ = topk.Add(prev, []any{int32(3), int32(2)})
	if diff := cmp.Diff([]any{int32(5), int32(1)}, prev); diff != "" {
		t.Errorf("TOPK Add mutated its input (-want +got):\n%s", diff)
	}
}

func TestBindAggregateErrors(t *testing.T) {
	cases := []struct {
		fn   string
		args []types.Type
		kind error
	}{
		{"NOPE", []types.Type{tInt}, expr.ErrUnknownFunction},
		{"UCASE", []types.Type{tString}, expr.ErrUnknownFunction},
		{"COUNT", []types.Type{tInt, tInt}, expr.ErrType},
		{"SUM", []types.Type{tString}, expr.ErrType},
		{"SUM", []types.Type{tBool}, expr.ErrType},
		{"SUM", nil, expr.ErrType},
		{"AVG", []types.Type{tString}, expr.ErrType},
		{"AVG", []types.Type{tInt, tInt}, expr.ErrType},
		{"MIN", nil, expr.ErrType},
		{"MAX", []types.Type{tInt, tInt}, expr.ErrType},
		{"LATEST_BY_OFFSET", nil, expr.ErrType},
		{"EARLIEST_BY_OFFSET", []types.Type{tInt, tBool, tBool}, expr.ErrType},
		{"TOPK", []types.Type{tInt}, expr.ErrType},
		{"TOPK", []types.Type{tInt, tString}, expr.ErrType},
		{"TOPK", []types.Type{tBool, tInt}, expr.ErrType},
		{"TOPKDISTINCT", []types.Type{tInt, tString, tInt}, expr.ErrType},
	}
	for _, tc := range cases {
		if _, err := expr.BindAggregate(tc.fn, tc.args, false); !errors.Is(err, tc.kind) {
			t.Errorf("BindAggregate(%s, %v): err %v, want %v", tc.fn, tc.args, err, tc.kind)
		}
	}
}

func TestIsAggregate(t *testing.T) {
	for name, want := range map[string]bool{
		"COUNT": true, "count": true, "Sum": true, "AVG": true, "MIN": true, "MAX": true,
		"LATEST_BY_OFFSET": true, "earliest_by_offset": true, "TOPK": true, "topkdistinct": true,
		"COLLECT_LIST": true, "collect_set": true, "COUNT_DISTINCT": true, "attr": true,
		"UCASE": false, "COALESCE": false, "": false, "COUNT_DISTINCTLY": false,
	} {
		if got := expr.IsAggregate(name); got != want {
			t.Errorf("IsAggregate(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestMerge: merging the accumulators of two sessions (earlier first)
// gives what one accumulator over both sessions' rows would, except
// that LATEST/EARLIEST_BY_OFFSET follow session order, not offsets.
func TestMerge(t *testing.T) {
	tests := []struct {
		fn             string
		args           []types.Type
		earlier, later [][]any
		want           any
	}{
		{"COUNT", []types.Type{tInt}, one(int32(1), nil), one(int32(2), int32(3)), int64(3)},
		{"SUM", []types.Type{tBig}, one(int64(1), int64(2)), one(int64(10)), int64(13)},
		{"SUM", []types.Type{tDouble}, one(0.5), nil, 0.5},
		{"AVG", []types.Type{tInt}, one(int32(1), int32(2)), one(int32(6)), 3.0},
		{"MIN", []types.Type{tInt}, one(int32(5)), one(nil, int32(-1)), int32(-1)},
		{"MAX", []types.Type{tString}, one("b"), one("a"), "b"},
		{"MAX", []types.Type{tString}, nil, one("a"), "a"},
		{"LATEST_BY_OFFSET", []types.Type{tInt}, one(int32(1)), one(int32(2)), int32(2)},
		{"LATEST_BY_OFFSET", []types.Type{tInt}, one(int32(1)), nil, int32(1)},
		{"EARLIEST_BY_OFFSET", []types.Type{tInt}, one(int32(1)), one(int32(2)), int32(1)},
		{"LATEST_BY_OFFSET", []types.Type{tInt, tInt}, [][]any{{int32(1), int32(2)}}, [][]any{{int32(2), int32(2)}}, []any{int32(1), int32(2)}},
		{"LATEST_BY_OFFSET", []types.Type{tInt, tInt}, [][]any{{int32(1), int32(2)}, {int32(2), int32(2)}}, [][]any{{int32(3), int32(2)}}, []any{int32(2), int32(3)}},
		{"EARLIEST_BY_OFFSET", []types.Type{tInt, tInt, tBool}, [][]any{{nil, int32(2), false}}, [][]any{{int32(3), int32(2), false}, {int32(4), int32(2), false}}, []any{nil, int32(3)}},
		{"COLLECT_LIST", []types.Type{tInt}, one(int32(1), int32(2)), one(int32(2)), []any{int32(1), int32(2), int32(2)}},
		{"COLLECT_SET", []types.Type{tInt}, one(int32(1), int32(2)), one(int32(2), int32(3)), []any{int32(1), int32(2), int32(3)}},
		{"COUNT_DISTINCT", []types.Type{tInt}, one(int32(1), int32(2)), one(int32(2), int32(3)), int64(3)},
		{"ATTR", []types.Type{tInt}, one(int32(1)), one(int32(1)), int32(1)},
		{"ATTR", []types.Type{tInt}, one(int32(1)), one(int32(2)), nil},
	}
	for _, tc := range tests {
		agg, err := expr.BindAggregate(tc.fn, tc.args, false)
		if err != nil {
			t.Fatalf("%s: %v", tc.fn, err)
		}
		fold := func(rows [][]any) any {
			acc := agg.Init()
			for _, r := range rows {
				acc = agg.Add(acc, r)
			}
			return acc
		}
		if agg.Merge == nil {
			t.Fatalf("%s has no Merge", tc.fn)
		}
		if got := agg.Result(agg.Merge(fold(tc.earlier), fold(tc.later))); !cmp.Equal(got, tc.want) {
			t.Errorf("%s%v: merged %v, want %v", tc.fn, tc.args, got, tc.want)
		}
	}
}

// TestDecimalSumOverflow: a row taking a DECIMAL SUM past its precision
// fails as a function does (a bad record), leaving the sum as it was.
func TestDecimalSumOverflow(t *testing.T) {
	dec := types.Type{Kind: types.Decimal, Precision: 3, Scale: 1}
	agg, err := expr.BindAggregate("SUM", []types.Type{dec}, false)
	if err != nil {
		t.Fatal(err)
	}
	if !agg.Fallible {
		t.Fatal("DECIMAL SUM is not Fallible: its failures could leave a window half-updated")
	}
	d := func(s string) *apd.Decimal {
		x, _, err := apd.NewFromString(s)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	acc := agg.Add(agg.Init(), []any{d("90.5")})
	if got := acc.(*apd.Decimal).String(); got != "90.5" {
		t.Fatalf("sum %s, want 90.5", got)
	}
	func() {
		defer func() {
			fe, ok := recover().(*expr.FunctionError)
			if !ok || fe.Function != "SUM" || !strings.Contains(fe.Error(), "Numeric field overflow: 90.5 + 10.0 does not fit DECIMAL(3, 1)") {
				t.Fatalf("overflow gave %v, want a FunctionError of SUM saying Numeric field overflow", fe)
			}
		}()
		agg.Add(acc, []any{d("10.0")})
	}()
	if got := acc.(*apd.Decimal).String(); got != "90.5" {
		t.Errorf("sum after the failed row %s, want 90.5", got)
	}
}
