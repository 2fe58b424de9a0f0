package expr_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/sluice-sql/sluice/expr"
	"github.com/sluice-sql/sluice/types"
)

// The ksql.functions.collect_*.limit properties cap COLLECT_LIST and
// COLLECT_SET, adding and merging alike; a negative cap is none.
func TestCollectLimits(t *testing.T) {
	many := make([]any, 1200)
	for i := range many {
		many[i] = int32(i)
	}
	tests := []struct {
		name    string
		fn      string
		cfg     expr.FunctionConfig
		rows    [][]any
		want    any
		merged  any // Result of merging rows' accumulator into itself
		wantLen int // when want is nil: the result's length
	}{
		{name: "list cap 1", fn: "COLLECT_LIST", cfg: expr.FunctionConfig{expr.CollectListLimitProperty: "1"},
			rows: one(int32(0), int32(100)), want: []any{int32(0)}, merged: []any{int32(0)}},
		{name: "set cap 1", fn: "COLLECT_SET", cfg: expr.FunctionConfig{expr.CollectSetLimitProperty: "1"},
			rows: one(int32(0), int32(100)), want: []any{int32(0)}, merged: []any{int32(0)}},
		{name: "list cap 2 keeps repeats", fn: "COLLECT_LIST", cfg: expr.FunctionConfig{expr.CollectListLimitProperty: "2"},
			rows: one(int32(5), int32(5), int32(6)), want: []any{int32(5), int32(5)}, merged: []any{int32(5), int32(5)}},
		{name: "list cap 0", fn: "COLLECT_LIST", cfg: expr.FunctionConfig{expr.CollectListLimitProperty: "0"},
			rows: one(int32(1)), want: []any{}, merged: []any{}},
		{name: "set property leaves list alone", fn: "COLLECT_LIST", cfg: expr.FunctionConfig{expr.CollectSetLimitProperty: "1"},
			rows: one(int32(1), int32(2)), want: []any{int32(1), int32(2)}, merged: []any{int32(1), int32(2), int32(1), int32(2)}},
		{name: "default cap 1000", fn: "COLLECT_LIST", rows: one(many...), wantLen: 1000},
		{name: "negative: no cap", fn: "COLLECT_LIST", cfg: expr.FunctionConfig{expr.CollectListLimitProperty: "-1"}, rows: one(many...), wantLen: 1200},
		{name: "malformed: default", fn: "COLLECT_SET", cfg: expr.FunctionConfig{expr.CollectSetLimitProperty: "lots"}, rows: one(many...), wantLen: 1000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			agg, err := expr.BindAggregateConfigured(tc.fn, []types.Type{tInt}, false, tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			acc := fold(agg, agg.Init(), tc.rows)
			got := agg.Result(acc)
			if tc.want == nil {
				if n := len(got.([]any)); n != tc.wantLen {
					t.Fatalf("%d values, want %d", n, tc.wantLen)
				}
				return
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.merged, agg.Result(agg.Merge(acc, fold(agg, agg.Init(), tc.rows)))); diff != "" {
				t.Errorf("merged (-want +got):\n%s", diff)
			}
		})
	}
}

// Undo: COLLECT_LIST takes back the last equal value, ATTR lowers a
// value's count (a group agrees again once the odd value is gone), and
// COLLECT_SET cannot undo, so the planner refuses it over tables.
func TestAggregateUndoRules(t *testing.T) {
	list, err := expr.BindAggregate("COLLECT_LIST", []types.Type{tString}, false)
	if err != nil {
		t.Fatal(err)
	}
	acc := list.Undo(fold(list, list.Init(), one("a", "b", "a", "c")), []any{"a"})
	if diff := cmp.Diff([]any{"a", "b", "c"}, list.Result(acc)); diff != "" {
		t.Errorf("COLLECT_LIST undo (-want +got):\n%s", diff)
	}
	set, err := expr.BindAggregate("COLLECT_SET", []types.Type{tString}, false)
	if err != nil {
		t.Fatal(err)
	}
	if set.Undo != nil {
		t.Error("COLLECT_SET has an Undo; ksqlDB's cannot take values back")
	}
	attr, err := expr.BindAggregate("ATTR", []types.Type{tString}, false)
	if err != nil {
		t.Fatal(err)
	}
	acc = fold(attr, attr.Init(), one("x", "y"))
	if got := attr.Result(acc); got != nil {
		t.Fatalf("ATTR of x, y = %v, want NULL", got)
	}
	acc = attr.Undo(acc, []any{"y"})
	if got := attr.Result(acc); got != "x" {
		t.Errorf("ATTR after undoing y = %v, want x", got)
	}
	acc = attr.Undo(attr.Undo(acc, []any{"x"}), []any{"x"})
	if got := attr.Result(acc); got != nil {
		t.Errorf("ATTR after undoing every row = %v, want NULL", got)
	}
	if got := attr.Result(attr.Add(acc, []any{"z"})); got != "z" {
		t.Errorf("ATTR counts never go below zero: got %v, want z", got)
	}
	if want := types.ArrayOf(types.Type{Kind: types.Struct, Fields: []types.Field{{Name: "VALUE", Type: tString}, {Name: "COUNT", Type: tInt}}}); !attr.StateType.Equal(want) {
		t.Errorf("ATTR StateType %s, want %s", attr.StateType, want)
	}
}
