package udf_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/sluice-sql/sluice/internal/testudf"
	"github.com/sluice-sql/sluice/types"
	"github.com/sluice-sql/sluice/udf"
)

var meanState = types.Type{Kind: types.Struct, Fields: []types.Field{{Name: "SUM", Type: types.BigIntType}, {Name: "N", Type: types.BigIntType}}}

func exportsOf(prefix string) udf.AggregateExports {
	return udf.AggregateExports{Init: prefix + "_init", Accumulate: prefix + "_accumulate", Merge: prefix + "_merge", Result: prefix + "_result", Undo: prefix + "_undo"}
}

// TestAggregate folds values into a STRUCT state (a []any in field
// order, as Sluice keeps structs) that travels as JSON,
// merges two states, takes a value back out, and reads the result.
func TestAggregate(t *testing.T) {
	mod := testudf.GoModule(t)
	rt := udf.NewRuntime()
	defer rt.Close()
	sig := udf.AggregateSignature{Args: []types.Type{types.BigIntType}, Intermediate: meanState, Result: types.DoubleType}
	if err := rt.CheckAggregate(context.Background(), mod, exportsOf("mean"), sig); err != nil {
		t.Fatal(err)
	}
	a, err := rt.Aggregate(context.Background(), "MEAN", mod, exportsOf("mean"), sig, limits)
	if err != nil {
		t.Fatal(err)
	}
	must := func(v any, err error) any {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	s := must(a.Init())
	if r := must(a.Result(s)); r != nil {
		t.Errorf("result of the empty state: %v, want NULL", r)
	}
	for _, x := range []any{int64(4), nil, int32(8)} {
		s = must(a.Accumulate(s, []any{x}))
	}
	other := must(a.Accumulate(must(a.Init()), []any{int64(30)}))
	merged := must(a.Merge(s, other))
	undone := must(a.Undo(merged, []any{int64(4)}))
	got := []any{s, must(a.Result(s)), merged, must(a.Result(merged)), undone, must(a.Result(undone))}
	want := []any{
		[]any{int64(12), int64(2)}, 6.0,
		[]any{int64(42), int64(3)}, 14.0,
		[]any{int64(38), int64(2)}, 19.0,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("states and results (-want +got):\n%s", diff)
	}
}

// TestAggregateFailures: a trapping accumulate and a state that is not
// the declared type are *CallErrors naming the phase.
func TestAggregateFailures(t *testing.T) {
	mod := testudf.GoModule(t)
	rt := udf.NewRuntime()
	defer rt.Close()
	sq, err := rt.Aggregate(context.Background(), "SUMSQ", mod, exportsOf("sumsq"),
		udf.AggregateSignature{Args: []types.Type{types.BigIntType}, Intermediate: types.BigIntType, Result: types.BigIntType}, limits)
	if err != nil {
		t.Fatal(err)
	}
	_, err = sq.Accumulate(int64(1), []any{int64(13)})
	var ce *udf.CallError
	if !errors.As(err, &ce) || ce.Kind != udf.KindTrap || !strings.HasPrefix(ce.Err.Error(), "accumulate: ") {
		t.Errorf("trapping accumulate: %v", err)
	}
	if s, err := sq.Accumulate(int64(1), []any{int64(3)}); err != nil || s != int64(10) {
		t.Errorf("accumulate after a trap: %v, %v; want 10", s, err)
	}
	ex := exportsOf("mean")
	ex.Accumulate, ex.Undo, ex.Merge = "bad_state_accumulate", "", ""
	bad, err := rt.Aggregate(context.Background(), "BAD", mod, ex,
		udf.AggregateSignature{Args: []types.Type{types.BigIntType}, Intermediate: meanState, Result: types.DoubleType}, limits)
	if err != nil {
		t.Fatal(err)
	}
	_, err = bad.Accumulate([]any{int64(0), int64(0)}, []any{int64(1)})
	if !errors.As(err, &ce) || ce.Kind != udf.KindBadReturn || ce.Error() != "function BAD: bad return: accumulate: returned STRUCT<`SUM` BIGINT, `N` BIGINT> that is not JSON: invalid character 'o' in literal null (expecting 'u')" {
		t.Errorf("bad state: %v", err)
	}
	if bad.HasMerge() || bad.HasUndo() || !sq.HasMerge() || !sq.HasUndo() {
		t.Errorf("HasMerge/HasUndo: %v %v %v %v", bad.HasMerge(), bad.HasUndo(), sq.HasMerge(), sq.HasUndo())
	}
}

// TestCheckAggregate: an export with the wrong signature is refused,
// naming the phase.
func TestCheckAggregate(t *testing.T) {
	mod := testudf.GoModule(t)
	rt := udf.NewRuntime()
	defer rt.Close()
	err := rt.CheckAggregate(context.Background(), mod, exportsOf("sumsq"),
		udf.AggregateSignature{Args: []types.Type{types.StringType}, Intermediate: types.BigIntType, Result: types.BigIntType})
	want := `accumulate: invalid WebAssembly function: export "sumsq_accumulate" is (i64, i64, i64) -> (i64), the calling convention for (BIGINT, STRING) RETURNS BIGINT wants (i64, i64, i32, i32) -> (i64)`
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}
